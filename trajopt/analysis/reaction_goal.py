"""Moco's ``MocoJointReactionGoal`` for ``MuscleDrivenInverse``: minimize a joint's reaction load.

The goal is  weight / (m g) · ∫ Σ_i (w_i · r_i(t))²  dt  over the chosen components r_i of the load one
joint transmits (Moco's integrand, divided by the model's weight m·|g| as Moco's ``m_denominator``). The load
is the one the child body applies to the parent (``on_parent=True``, Moco's default ``loads_frame='parent'``)
or the parent to the child, about that frame's origin and expressed in its axes (Moco's default
``expressed_in_frame_path``).

With the motion prescribed the load is affine in the muscle tensions: r(t) = r₀(t) + J(t)·F. Both are
evaluated at the grid points and interpolated linearly in time, like the inverse's other grid data (exact at
the grid points, which is where the collocation uses them). The muscles act on the bodies along their
*geometric* paths (``trajopt.paths.geometric``), so the model must use geometric paths for its dynamics
too: with function-based or polynomial paths the tensions are generalized forces, a joint's transmitted load
does not depend on them, and the goal is refused rather than evaluated on a different path model. Wrapped
paths are refused too: trajopt applies their tension as generalized forces, not yet as forces on the bodies
at the tangent points.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from trajopt.analysis.joint_reactions import straight_line_muscle_loads
from trajopt.errors import TrajoptInputError
from trajopt.multibody import joint_reaction_loads, point_position
from trajopt.multibody.kinematics import body_pose
from trajopt.ocp import Integral
from trajopt.paths.geometric import GeometricPaths

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

    # -- the load as a function of the state and the tensions --------------------------------------------
    def load_function(self, model) -> ca.Function:
        """``load(q, u, udot, muscle_forces, external_wrenches)`` -> the chosen components (forces first)."""
        if not isinstance(model.paths, GeometricPaths):
            raise TrajoptInputError(
                f"JointReactionGoal {self.joint}: the model's muscle paths are {type(model.paths).__name__}; a joint "
                "reaction needs the muscles' geometric paths (load the model with geometric paths)")
        multibody = model.multibody
        names = [j.name for j in multibody.joints]
        if self.joint not in names:
            raise TrajoptInputError(f"JointReactionGoal: no joint {self.joint!r} in the model (joints: {names})")
        joint = multibody.joints[names.index(self.joint)]
        q = ca.SX.sym("q", multibody.nq)
        u = ca.SX.sym("u", multibody.nv)
        udot = ca.SX.sym("udot", multibody.nv)
        tensions = ca.SX.sym("muscle_forces", len(model.muscles))
        external = ca.SX.sym("external_wrenches", 6 * len(multibody.bodies))
        muscle_wrenches, _, wrapped = straight_line_muscle_loads(model, q, u, tensions)
        if wrapped:
            raise TrajoptInputError(
                f"JointReactionGoal {self.joint}: muscle(s) {', '.join(wrapped[:6])}"
                f"{' ...' if len(wrapped) > 6 else ''} wrap over wrap objects; trajopt applies a wrapped path's "
                "tension as generalized forces, not yet as forces on the bodies, so its joint loads are not available")
        wrenches = ca.reshape(external, 6, len(multibody.bodies)) + muscle_wrenches
        forces, moments = joint_reaction_loads(multibody, q, u, udot, wrenches)  # on the child, ground axes
        k = names.index(self.joint)
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
        return ca.Function(f"reaction_{self.joint}", [q, u, udot, tensions, external], [chosen],
                           ["q", "u", "udot", "muscle_forces", "external_wrenches"], ["load"])

    def affine_load(self, model, kinematics, external_wrenches=None):
        """(r₀ frames x components, J frames x components x muscles): load = r₀ + J · tensions at each frame."""
        load = self.load_function(model)
        tensions = ca.SX.sym("F", len(model.muscles))
        args = [ca.SX.sym(n, load.size1_in(i)) for i, n in enumerate(("q", "u", "udot"))]
        external = ca.SX.sym("w", load.size1_in(4))
        value = load(*args, tensions, external)
        parts = ca.Function("affine", [*args, external],
                            [ca.substitute(value, tensions, ca.DM.zeros(tensions.shape)), ca.jacobian(value, tensions)])
        n = kinematics.times.size
        nb = len(model.multibody.bodies)
        ext = np.zeros((6 * nb, n)) if external_wrenches is None else \
            np.asarray(external_wrenches, float).transpose(1, 2, 0).reshape(6 * nb, n, order="F")
        offset, jacobian = parts.map(n)(kinematics.q.T, kinematics.u.T, kinematics.udot.T, ext)
        components = load.size1_out(0)
        return (np.asarray(offset).T,
                np.asarray(jacobian).reshape(components, n, -1).transpose(1, 0, 2))

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
        weights = np.ones(components) if self.component_weights is None else np.asarray(self.component_weights)
        body_weight = sum(b.mass for b in model.multibody.bodies) * float(np.linalg.norm(model.multibody.gravity))
        integrand = ca.sumsqr(ca.DM(weights) * load)
        return Integral(integrand) * (self.weight / body_weight)


def _frame_origin(multibody, q, frame):
    """Ground position of a joint frame's origin (its body may be ground)."""
    if multibody.body_index(frame.body) < 0:
        return ca.DM(frame.translation)
    return point_position(multibody, q, frame.body, frame.translation)
