"""Joint reaction loads with muscle forces applied, as OpenSim's JointReaction analysis after static optimization.

A muscle's tension acts on the bodies where its path touches them; the joints then carry the rest of
the load. Polynomial and function-based paths give lengths and moment arms but no points, so the loads
use the muscles' *geometric* paths from the .osim (``trajopt.model.paths.geometric``): the tension pulls along
each straight part of OpenSim's wrapped path, at the path points and at the tangent points on the wrap
objects' bodies (cylinders, spheres, ellipsoids and tori as OpenSim computes them; muscles whose wrap
objects are ignored, with ``wrapping=False``, are listed in ``wrapped_muscles``).
The generalized forces of these loads are
OpenSim's ``computeMomentArm``; where the solve used other moment arms (−∂l/∂q, polynomial or
function-based paths) the joints transmit the difference as a generalized force, reported as
``joint_generalized_forces`` (ID forces minus the muscles' generalized forces: the residual actuators
when the path models agree).

Loads: for each joint, what its parent applies to its child body (moment about the child joint
frame's origin), in ``expressed_in`` axes (a ``ReactionAxes`` or ``BodyAxes``).
"""

from __future__ import annotations

import warnings
import weakref
from dataclasses import dataclass
from pathlib import Path

import casadi as ca
import numpy as np

from trajopt.studies.analysis.inverse_dynamics import MotionKinematics
from trajopt.errors import TrajoptInputError
from trajopt.model.io import Table, write_sto
from trajopt.core.multibody import BodyAxes, ReactionAxes, inverse_dynamics, joint_reaction_loads
from trajopt.model.paths.geometric import GeometricPaths, GeometricPathWarning, geometric_path


@dataclass(frozen=True)
class MuscleJointReactions:
    """Per frame: reaction forces and moments (frames x joints x 3) with the muscle forces applied."""

    times: np.ndarray
    joint_names: tuple[str, ...]
    child_bodies: tuple[str, ...]
    expressed_in: ReactionAxes | BodyAxes
    forces: np.ndarray
    moments: np.ndarray
    speed_names: tuple[str, ...]
    joint_generalized_forces: np.ndarray  # (frames, speeds) still transmitted along the joints' free axes
    wrapped_muscles: tuple[str, ...]  # whose wrap objects the lines of action ignore

    def table(self) -> Table:
        """OpenSim JointReaction-style labels ``<joint>_on_<child>_in_<frame>_fx ... _mz``."""
        labels, columns = [], []
        for k, (joint, child) in enumerate(zip(self.joint_names, self.child_bodies)):
            for kind, values in (("f", self.forces), ("m", self.moments)):
                for axis in range(3):
                    labels.append(f"{joint}_on_{child}_in_{self.expressed_in.label}_{kind}{'xyz'[axis]}")
                    columns.append(values[:, k, axis])
        return Table(self.times, tuple(labels), np.column_stack(columns), name="Joint Reactions with muscles")

    def write(self, folder, prefix: str = "joint_reactions_with_muscles") -> list[Path]:
        folder = Path(folder)
        return [write_sto(folder / f"{prefix}.sto", self.table())]


_GEOMETRIC_PATHS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def geometric_paths_of(model) -> tuple[tuple, tuple[str, ...]]:
    """(the .osim's geometric path of every muscle, muscles whose wrap objects are ignored), built once per model."""
    if model not in _GEOMETRIC_PATHS:
        if isinstance(model.paths, GeometricPaths) and tuple(model.paths.muscles) == tuple(model.muscle_names):
            _GEOMETRIC_PATHS[model] = (tuple(model.paths.paths), tuple(model.paths.wrapped_muscles))
        elif getattr(model, "osim", None) is None:
            raise TrajoptInputError(f"{type(model).__name__}: joint reactions with muscle forces need the muscles' "
                                    "geometric paths, from a model loaded from an .osim")
        else:
            paths, ignored = [], []
            for name in model.muscle_names:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", GeometricPathWarning)
                    paths.append(geometric_path(model.osim, name))
                if any(issubclass(w.category, GeometricPathWarning) for w in caught):
                    ignored.append(name)
            _GEOMETRIC_PATHS[model] = (tuple(paths), tuple(ignored))
    return _GEOMETRIC_PATHS[model]


@dataclass(frozen=True)
class MuscleUnitLoads:
    """What a tension of 1 N in each muscle applies at each frame: ``wrenches`` (frames, muscles, 6, bodies; moment
    about the body origin then force, ground axes) and ``generalized_forces`` (frames, muscles, nv) of moving path
    points. ``ignored_wraps``: muscles whose wrap objects the lines of action ignore."""

    muscle_names: tuple[str, ...]
    wrenches: np.ndarray
    generalized_forces: np.ndarray
    ignored_wraps: tuple[str, ...]

    def applied(self, muscle_forces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(wrenches frames x 6 x bodies, generalized forces frames x nv) of ``muscle_forces`` (frames x muscles)."""
        forces = np.asarray(muscle_forces, dtype=float)
        return (np.einsum("fm,fmij->fij", forces, self.wrenches),
                np.einsum("fm,fmv->fv", forces, self.generalized_forces))


def muscle_unit_loads(model, q: np.ndarray, muscles=None) -> MuscleUnitLoads:
    """The loads of unit tensions along the .osim's geometric paths of ``model``'s muscles (default all; others
    zero) at the configurations ``q`` (frames x nq)."""
    paths, ignored = geometric_paths_of(model)
    q = np.atleast_2d(np.asarray(q, dtype=float))
    frames, nb, nv = q.shape[0], len(model.multibody.bodies), model.multibody.nv
    names = tuple(model.muscle_names)
    chosen = names if muscles is None else tuple(muscles)
    wrenches = np.zeros((frames, len(names), 6, nb))
    generalized = np.zeros((frames, len(names), nv))
    for name in chosen:
        k = names.index(name)
        w, g = paths[k].loads_function.map(frames)(q.T)
        wrenches[:, k] = np.asarray(w).T.reshape(frames, nb, 6).transpose(0, 2, 1)
        generalized[:, k] = np.asarray(g).T
    return MuscleUnitLoads(names, wrenches, generalized, tuple(m for m in ignored if m in chosen))


def reaction_function(multibody, expressed_in: ReactionAxes | BodyAxes = ReactionAxes.GROUND) -> ca.Function:
    """(q, u, udot, wrenches 6 nb) -> (reaction forces 3 x joints, moments 3 x joints, inverse-dynamics generalized
    forces): affine in the wrenches."""
    q = ca.SX.sym("q", multibody.nq)
    u = ca.SX.sym("u", multibody.nv)
    udot = ca.SX.sym("udot", multibody.nv)
    external = ca.SX.sym("wrenches", 6 * len(multibody.bodies))
    wrenches = ca.reshape(external, 6, len(multibody.bodies))
    forces, moments = joint_reaction_loads(multibody, q, u, udot, wrenches, expressed_in=expressed_in)
    return ca.Function("joint_reactions", [q, u, udot, external],
                       [ca.vec(forces), ca.vec(moments), inverse_dynamics(multibody, q, u, udot, wrenches)],
                       ["q", "u", "udot", "wrenches"], ["reaction_forces", "reaction_moments", "generalized_forces"])


def muscle_joint_reactions(model, kinematics: MotionKinematics, muscle_forces: np.ndarray,
                           expressed_in: ReactionAxes | BodyAxes = ReactionAxes.GROUND,
                           external_wrenches=None) -> MuscleJointReactions:
    """Reactions of ``model`` (a ``MusculoskeletalModel``) along ``kinematics`` with ``muscle_forces``
    (frames x muscles, tensions in N) applied along the muscles' straight-line paths, and optional
    ``external_wrenches`` (frames x 6 x bodies, ground axes, as ``ExternalLoads.wrenches``)."""
    n = kinematics.times.size
    nb = len(model.multibody.bodies)
    loads = muscle_unit_loads(model, kinematics.q)
    wrenches, mobility = loads.applied(muscle_forces)
    if external_wrenches is not None:
        wrenches = wrenches + np.asarray(external_wrenches, float)
    function = reaction_function(model.multibody, expressed_in)
    forces, moments, tau = (np.asarray(x) for x in function.map(n)(
        kinematics.q.T, kinematics.u.T, kinematics.udot.T, wrenches.transpose(0, 2, 1).reshape(n, 6 * nb).T))
    left = tau - mobility.T
    joints = model.multibody.joints
    return MuscleJointReactions(
        times=kinematics.times,
        joint_names=tuple(j.name for j in joints),
        child_bodies=tuple(j.child.body for j in joints),
        expressed_in=expressed_in,
        forces=forces.T.reshape(n, len(joints), 3),
        moments=moments.T.reshape(n, len(joints), 3),
        speed_names=tuple(model.speed_names),
        joint_generalized_forces=left.T,
        wrapped_muscles=loads.ignored_wraps,
    )
