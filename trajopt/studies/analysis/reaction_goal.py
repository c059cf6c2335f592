"""Moco's ``MocoJointReactionGoal``: minimize a joint's reaction load, in the inverse, prediction and tracking.

The goal is  weight / (m g) · ∫ Σ_i (w_i · r_i(t))²  dt  over the chosen components r_i of the load one
joint transmits (Moco's integrand, divided by the model's weight m·|g| as Moco's ``m_denominator``). The load
is the one the child body applies to the parent (``on_parent=True``, Moco's default ``loads_frame='parent'``)
or the parent to the child, about that frame's origin and expressed in its axes (Moco's default
``expressed_in_frame_path``).

With the motion prescribed the load is affine in the muscle tensions: r(t) = r₀(t) + J(t)·F. Both are
evaluated at the grid points and interpolated linearly in time, like the inverse's other grid data (exact at
the grid points, which is where the collocation uses them). The muscles act on the bodies along the .osim's
geometric paths (``trajopt.studies.analysis.joint_reactions``: OpenSim's wrapped path, the tension applied at the
path points and at the tangent points on the wrap objects' bodies), which is what OpenSim's
``Joint::calcReactionOnParentExpressedInGround`` sees with ``GeometryPath`` muscles. Muscles whose
wrap objects the paths ignore (``wrapping=False``) are refused. When the solve's paths are not those geometric paths
(function-based or polynomial surrogates), the goal still applies the tensions along the geometric lines
of action while the dynamics use the surrogate's moment arms: ``caveats`` says so, for the summary.
(Moco's FunctionBasedPath applies generalized forces only, so with such paths OpenSim's reaction does not
see the muscles at all.)

The same object is a goal of every study: ``goal(variables)`` on a built ``MuscleDrivenInverse`` (prescribed motion,
the affine form above) and ``motion_goal(built)`` on a ``trajopt.studies.prediction.MuscleDrivenProblem`` (prediction,
``MuscleDrivenTracking(goals=...)``), where the load is the same function of the problem's symbols: q, u, the
accelerations, the tendon forces along the geometric paths and the problem's external wrenches (foot contact).
Coordinate actuators, residuals and path actuators act there as generalized forces: the load carries them along
the joints' free axes. The wrapped paths' expressions enter the problem at every collocation point, and with
wrap objects solved iteratively they can outweigh the dynamics: straight-line or cylinder paths keep it small.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from trajopt.studies.analysis.joint_reactions import geometric_paths_of, muscle_unit_loads
from trajopt.errors import TrajoptInputError
from trajopt.core.multibody import joint_reaction_loads, point_position
from trajopt.core.multibody.kinematics import body_pose
from trajopt.core.ocp import Integral
from trajopt.model.paths.geometric import GeometricPaths

XYZ = (0, 1, 2)


@dataclass(frozen=True)
class JointReactionGoal:
    """weight / (m g) ∫ Σ (component weight · load component)² dt for the joint ``joint``.

    ``forces`` and ``moments``: the axes (0, 1, 2 = x, y, z of the loads frame) that enter; Moco's measures
    ``force-x``, ``force-y`` are ``forces=(0, 1), moments=()``. ``component_weights``: a weight per entered
    component, forces first (default 1 each). ``on_parent``: the load on the parent body at the joint's parent
    frame (Moco's default) or, if False, on the child body at the child frame; expressed in that frame's axes.
    """

    joint: str
    weight: float = 1.0
    forces: tuple[int, ...] = XYZ
    moments: tuple[int, ...] = XYZ
    on_parent: bool = True
    component_weights: tuple[float, ...] | None = None

    def __post_init__(self):
        if not (np.isfinite(self.weight) and self.weight >= 0):
            raise TrajoptInputError(f"JointReactionGoal {self.joint}: weight must be a finite number >= 0, "
                                    f"got {self.weight!r}")
        for axis in (*self.forces, *self.moments):
            if axis not in XYZ:
                raise TrajoptInputError(f"JointReactionGoal {self.joint}: axis {axis!r} is not 0, 1 or 2")
        count = len(self.forces) + len(self.moments)
        if count == 0:
            raise TrajoptInputError(f"JointReactionGoal {self.joint}: no force or moment component chosen")
        if self.component_weights is not None and len(self.component_weights) != count:
            raise TrajoptInputError(f"JointReactionGoal {self.joint}: {len(self.component_weights)} component "
                                    f"weights for {count} components")

    # -- the load as a function of the state and the bodies' wrenches ----------------------------------------
    def joint_in(self, model):
        names = [j.name for j in model.multibody.joints]
        if self.joint not in names:
            raise TrajoptInputError(f"JointReactionGoal: no joint {self.joint!r} in the model (joints: {names})")
        return model.multibody.joints[names.index(self.joint)]

    def load_function(self, model) -> ca.Function:
        """``load(q, u, udot, wrenches)`` -> the chosen components (forces first); ``wrenches`` 6 x bodies (moment
        about the body origin, then force; ground axes), flattened body by body. Affine in the wrenches."""
        multibody = model.multibody
        joint = self.joint_in(model)
        q = ca.SX.sym("q", multibody.nq)
        u = ca.SX.sym("u", multibody.nv)
        udot = ca.SX.sym("udot", multibody.nv)
        external = ca.SX.sym("wrenches", 6 * len(multibody.bodies))
        wrenches = ca.reshape(external, 6, len(multibody.bodies))
        forces, moments = joint_reaction_loads(multibody, q, u, udot, wrenches)  # on the child, ground axes
        k = [j.name for j in multibody.joints].index(self.joint)
        force, moment = forces[:, k], moments[:, k]
        child_rotation, _ = body_pose(multibody, q, joint.child.body)
        frame_rotation = ca.mtimes(child_rotation, ca.DM(joint.child.rotation))
        if self.on_parent:
            child_origin = _frame_origin(multibody, q, joint.child)
            parent_origin = _frame_origin(multibody, q, joint.parent)
            moment = -moment - ca.cross(child_origin - parent_origin, force)
            force = -force
            parent_rotation, _ = body_pose(multibody, q, joint.parent.body)
            frame_rotation = ca.mtimes(parent_rotation, ca.DM(joint.parent.rotation))
        force = ca.mtimes(frame_rotation.T, force)
        moment = ca.mtimes(frame_rotation.T, moment)
        chosen = ca.vertcat(*[force[i] for i in self.forces], *[moment[i] for i in self.moments])
        return ca.Function(f"reaction_{self.joint}", [q, u, udot, external], [chosen],
                           ["q", "u", "udot", "wrenches"], ["load"])

    def acting_muscles(self, model) -> tuple[str, ...]:
        """The muscles whose path touches a body distal to the joint (the others cannot change its load);
        refuses those whose wrap objects trajopt ignores."""
        multibody = model.multibody
        distal = {self.joint_in(model).child.body}
        grown = True
        while grown:
            grown = False
            for j in multibody.joints:
                if j.parent.body in distal and j.child.body not in distal:
                    distal.add(j.child.body)
                    grown = True
        paths, ignored = geometric_paths_of(model)
        acting = tuple(name for name, path in zip(model.muscle_names, paths)
                       if {p.body for p in path.points} & distal or {w.surface.body for w in path.wraps} & distal)
        refused = [m for m in acting if m in ignored]
        if refused:
            raise TrajoptInputError(
                f"JointReactionGoal {self.joint}: muscle(s) {', '.join(refused[:6])}"
                f"{' ...' if len(refused) > 6 else ''} "
                "wrap over wrap objects their geometric paths ignore: their loads on the bodies are not "
                "OpenSim's")
        return acting

    def caveats(self, model) -> list[str]:
        """What the summary must say about this goal on ``model``."""
        if isinstance(model.paths, GeometricPaths) and model.paths.generalized_force:
            return []
        what = ("geometric paths with moment arms −∂l/∂q" if isinstance(model.paths, GeometricPaths)
                else f"{type(model.paths).__name__} moment arms")
        return [f"The {self.joint} reaction goal applies the muscle tensions along the .osim's geometric (wrapped) "
                f"paths, while the dynamics use {what}: the two lines of action agree only as well as those moment "
                "arms agree with OpenSim's computeMomentArm."]

    def affine_load(self, model, kinematics, external_wrenches=None):
        """(r₀ frames x components, J frames x components x muscles): load = r₀ + J · tensions at each frame."""
        load = self.load_function(model)
        n = kinematics.times.size
        nb = len(model.multibody.bodies)
        units = muscle_unit_loads(model, kinematics.q, self.acting_muscles(model))
        ext = np.zeros((n, 6, nb)) if external_wrenches is None else np.asarray(external_wrenches, float)

        def flat(wrenches):  # frames x 6 x bodies -> 6 nb x frames, body by body
            return wrenches.transpose(0, 2, 1).reshape(wrenches.shape[0], 6 * nb).T

        states = (kinematics.q.T, kinematics.u.T, kinematics.udot.T)
        offset = np.asarray(load.map(n)(*states, flat(ext))).T
        at_zero = np.asarray(load.map(n)(*states, np.zeros((6 * nb, n)))).T
        muscles = units.wrenches.shape[1]
        repeated = [np.repeat(x, muscles, axis=1) for x in states]
        unit = np.asarray(load.map(n * muscles)(*repeated, flat(units.wrenches.reshape(n * muscles, 6, nb)))).T
        jacobian = unit.reshape(n, muscles, -1) - at_zero[:, None, :]
        return offset, jacobian.transpose(0, 2, 1)

    def load_at(self, model, kinematics, muscle_forces, external_wrenches=None) -> np.ndarray:
        """The chosen load components (frames x components, N and N·m) with ``muscle_forces`` (frames x muscles)."""
        return affine_value(self.affine_load(model, kinematics, external_wrenches), muscle_forces)

    # -- the goal on a built inverse problem ----------------------------------------------------------------
    def goal(self, variables):
        model = variables.model
        data = variables.data
        offset, jacobian = self.affine_load(model, data.kinematics, variables.external_wrenches)
        n, components = offset.shape
        table = np.hstack([offset, jacobian.reshape(n, -1)])
        lookup = ca.interpolant(f"reaction_{self.joint}_data", "linear", [data.times], table.T.ravel(order="F"))
        values = lookup(variables.problem.time)
        load = values[:components] + ca.mtimes(ca.reshape(values[components:], -1, components).T,
                                                variables.muscle_forces)
        return Integral(self.integrand_of_load(model, load))

    # -- the goal on a muscle-driven problem: prediction and tracking ----------------------------------------------
    def load(self, built) -> ca.SX:
        """The chosen components (forces first) as an expression of a ``MuscleDrivenProblem``'s symbols: q, u, its
        accelerations, its tendon forces pulling along the .osim's geometric paths (the muscles acting distal to
        the joint) and its external wrenches (contact)."""
        model = built.model
        wrenches = ca.SX.zeros(6 * len(model.multibody.bodies)) if built.external_wrenches is None \
            else ca.vec(built.external_wrenches)  # 6 x bodies -> body by body
        paths, _ = geometric_paths_of(model)
        names = tuple(model.muscle_names)
        for name in self.acting_muscles(model):
            k = names.index(name)
            unit, _ = paths[k].loads_function(built.q)
            wrenches = wrenches + built.tendon_forces[k] * unit
        return self.load_function(model)(built.q, built.u, built.accelerations, wrenches)

    def integrand(self, built) -> ca.SX:
        """weight / (m g) · Σ (component weight · load component)² at a ``MuscleDrivenProblem``'s symbols."""
        return self.integrand_of_load(built.model, self.load(built))

    def motion_goal(self, built) -> Integral:
        """The goal on a ``MuscleDrivenProblem`` (``built.problem.minimize(goal.motion_goal(built))``)."""
        return Integral(self.integrand(built))

    def integrand_of_load(self, model, load) -> ca.SX:
        """weight / (m g) · Σ (component weight · load component)² of the chosen components ``load``."""
        weights = np.ones(load.numel()) if self.component_weights is None else np.asarray(self.component_weights)
        body_weight = sum(b.mass for b in model.multibody.bodies) * float(np.linalg.norm(model.multibody.gravity))
        return ca.sumsqr(ca.DM(weights) * load) * (self.weight / body_weight)


def affine_value(affine, muscle_forces) -> np.ndarray:
    """r₀ + J · F at each frame, for ``affine`` = (r₀, J) from ``JointReactionGoal.affine_load``."""
    offset, jacobian = affine
    return offset + np.einsum("fcm,fm->fc", jacobian, np.asarray(muscle_forces, dtype=float))


def _frame_origin(multibody, q, frame):
    """Ground position of a joint frame's origin (its body may be ground)."""
    if multibody.body_index(frame.body) < 0:
        return ca.DM(frame.translation)
    return point_position(multibody, q, frame.body, frame.translation)
