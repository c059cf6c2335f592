"""Joint reaction loads with muscle forces applied, as OpenSim's JointReaction analysis after static optimization.

A muscle's tension acts on the bodies at its path points; the joints then carry the rest of the
load. Polynomial paths give lengths and moment arms but no points, so the loads use the muscles'
*geometric* paths (``trajopt.paths.geometric``): straight segments between the .osim path points,
wrap objects ignored. Where a path wraps, its straight-line moment arms differ from the wrapped
(polynomial) ones the static optimization used; the joints then transmit the difference as a
generalized force, reported as ``joint_generalized_forces`` (ID forces minus the straight-line
muscles' generalized forces: ≈ residual actuators when the two path models agree).

Loads: for each joint, what its parent applies to its child body (moment about the child joint
frame's origin), in ``expressed_in`` axes ('ground', 'child', 'parent' or a body name).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import casadi as ca
import numpy as np

from trajopt.analysis.inverse_dynamics import MotionKinematics
from trajopt.io import Table, write_csv, write_sto
from trajopt.multibody import inverse_dynamics, joint_reaction_loads
from trajopt.paths.geometric import GeometricPathWarning, geometric_path


@dataclass(frozen=True)
class MuscleJointReactions:
    """Per frame: reaction forces and moments (frames x joints x 3) with the muscle forces applied."""

    times: np.ndarray
    joint_names: tuple[str, ...]
    child_bodies: tuple[str, ...]
    expressed_in: str
    forces: np.ndarray
    moments: np.ndarray
    speed_names: tuple[str, ...]
    joint_generalized_forces: np.ndarray  # (frames, speeds) still transmitted along the joints' free axes
    wrapped_muscles: tuple[str, ...]  # whose wrap objects the straight-line paths ignore

    def table(self) -> Table:
        """OpenSim JointReaction-style labels ``<joint>_on_<child>_in_<frame>_fx ... _mz``."""
        labels, columns = [], []
        for k, (joint, child) in enumerate(zip(self.joint_names, self.child_bodies)):
            for kind, values in (("f", self.forces), ("m", self.moments)):
                for axis in range(3):
                    labels.append(f"{joint}_on_{child}_in_{self.expressed_in}_{kind}{'xyz'[axis]}")
                    columns.append(values[:, k, axis])
        return Table(self.times, tuple(labels), np.column_stack(columns), name="Joint Reactions with muscles")

    def write(self, folder, prefix: str = "joint_reactions_with_muscles") -> list[Path]:
        folder = Path(folder)
        return [write_sto(folder / f"{prefix}.sto", self.table()), write_csv(folder / f"{prefix}.csv", self.table())]


def straight_line_muscle_loads(model, q, u, tensions) -> tuple[ca.SX, ca.SX, tuple[str, ...]]:
    """(body wrenches 6 x bodies, generalized forces nv, wrapped muscles) of ``tensions`` pulling along the
    muscles' straight-line geometric paths at (q, u). Wrapped muscles are listed: their straight lines are not the
    paths a solve with wrapping or surrogates used."""
    multibody = model.multibody
    wrenches = ca.SX.zeros(6, len(multibody.bodies))
    mobility = ca.SX.zeros(multibody.nv)
    wrapped = []
    for k, name in enumerate(model.muscle_names):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", GeometricPathWarning)
            path = geometric_path(model.osim, name, wrapping=False)  # loads on bodies: straight lines
        if any(issubclass(w.category, GeometricPathWarning) for w in caught):
            wrapped.append(name)
        _, _, unit_wrenches, unit_generalized = path.function(q, u)
        wrenches = wrenches + tensions[k] * unit_wrenches
        mobility = mobility + tensions[k] * unit_generalized
    return wrenches, mobility, tuple(wrapped)


def _reaction_function(model, expressed_in: str) -> tuple[ca.Function, tuple[str, ...]]:
    multibody = model.multibody
    q = ca.SX.sym("q", multibody.nq)
    u = ca.SX.sym("u", multibody.nv)
    udot = ca.SX.sym("udot", multibody.nv)
    tensions = ca.SX.sym("muscle_forces", len(model.muscles))
    external = ca.SX.sym("external_wrenches", 6 * len(multibody.bodies))
    muscle_wrenches, mobility, wrapped = straight_line_muscle_loads(model, q, u, tensions)
    wrenches = ca.reshape(external, 6, len(multibody.bodies)) + muscle_wrenches
    forces, moments = joint_reaction_loads(multibody, q, u, udot, wrenches, expressed_in=expressed_in)
    left = inverse_dynamics(multibody, q, u, udot, wrenches) - mobility
    function = ca.Function("joint_reactions_with_muscles", [q, u, udot, tensions, external],
                           [ca.vec(forces), ca.vec(moments), left],
                           ["q", "u", "udot", "muscle_forces", "external_wrenches"],
                           ["reaction_forces", "reaction_moments", "joint_generalized_forces"])
    return function, wrapped


def muscle_joint_reactions(model, kinematics: MotionKinematics, muscle_forces: np.ndarray,
                           expressed_in: str = "ground", external_wrenches=None) -> MuscleJointReactions:
    """Reactions of ``model`` (a ``MusculoskeletalModel``) along ``kinematics`` with ``muscle_forces``
    (frames x muscles, tensions in N) applied along the muscles' straight-line paths, and optional
    ``external_wrenches`` (frames x 6 x bodies, ground axes, as ``ExternalLoads.wrenches``)."""
    function, wrapped = _reaction_function(model, expressed_in)
    n = kinematics.times.size
    nb = len(model.multibody.bodies)
    external = np.zeros((6 * nb, n)) if external_wrenches is None else \
        np.asarray(external_wrenches, float).transpose(1, 2, 0).reshape(6 * nb, n, order="F")
    forces, moments, left = (np.asarray(x) for x in function.map(n)(
        kinematics.q.T, kinematics.u.T, kinematics.udot.T, np.asarray(muscle_forces, float).T, external))
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
        wrapped_muscles=wrapped,
    )
