"""Symbolic multibody dynamics on CasADi: bodies, joints (quaternion ball/free joints included),
and algorithms as free functions backed by cached, named casadi Functions.

    from trajopt.core import multibody as mb
    model = mb.Model("pendulum", gravity=(0, -9.81, 0))
    model.add_body(mb.Body("rod", mass=1.0, center_of_mass=(0, -0.5, 0), inertia=(0.08, 0.005, 0.08, 0, 0, 0)))
    model.add_joint(mb.BallJoint("shoulder", mb.OffsetFrame("ground"), mb.OffsetFrame("rod")))
    tau = mb.inverse_dynamics(model, q, u, udot)       # q: nq (a quaternion counts 4), u, udot: nv
    udot = mb.forward_dynamics(model, q, u, tau)       # q, u, ... may be numpy, DM, SX or MX
    q_next = mb.integrate(model, q, u, dt)             # quaternions stay unit
    udot, lam = mb.constrained_forward_dynamics(model, constraints, q, u, tau)   # φ(q) = 0 enforced
"""

from trajopt.core.multibody.bodies import GROUND, Body, OffsetFrame
from trajopt.core.multibody.constraints import (
    CoordinateCoupler,
    PointConstraint,
    WeldConstraint,
    constrained_forward_dynamics,
    constrained_inverse_dynamics,
    constraint_bias,
    constraint_errors,
    constraint_jacobian,
)
from trajopt.core.multibody.coordinates import Coordinate
from trajopt.core.multibody.dynamics import (
    BodyAxes,
    ReactionAxes,
    bias_forces,
    body_torque,
    forward_dynamics,
    inverse_dynamics,
    joint_reaction_loads,
    kinetic_energy,
    mass_matrix,
    point_force,
    potential_energy,
    zero_wrenches,
)
from trajopt.core.multibody.functions import (
    Constant,
    CoordinateFunction,
    Linear,
    Multiplier,
    NaturalCubicSpline,
    Polynomial,
    SimmSpline,
)
from trajopt.core.multibody.joints import (
    BallJoint,
    CustomJoint,
    EulerBallJoint,
    FreeJoint,
    Joint,
    PinJoint,
    PlanarJoint,
    PrismaticJoint,
    RevoluteJoint,
    SliderJoint,
    TransformAxis,
    UniversalJoint,
    WeldJoint,
)
from trajopt.core.multibody.kinematics import (
    body_pose,
    body_poses,
    coordinate_rates,
    coordinate_rates_matrix,
    difference,
    frame_jacobian,
    integrate,
    point_acceleration,
    point_position,
    point_velocity,
)
from trajopt.core.multibody.model import Model
from trajopt.core.multibody.motion_conversion import convert_ball_joint_motion

__all__ = [
    "GROUND", "Body", "OffsetFrame", "Coordinate", "Model",
    "Joint", "WeldJoint", "RevoluteJoint", "PinJoint", "PrismaticJoint", "SliderJoint", "PlanarJoint",
    "UniversalJoint", "BallJoint", "FreeJoint", "EulerBallJoint", "CustomJoint", "TransformAxis",
    "CoordinateFunction", "Constant", "Linear", "Polynomial", "SimmSpline", "NaturalCubicSpline", "Multiplier",
    "body_pose", "body_poses", "point_position", "point_velocity", "point_acceleration", "frame_jacobian",
    "coordinate_rates", "coordinate_rates_matrix", "integrate", "difference",
    "mass_matrix", "bias_forces", "inverse_dynamics", "joint_reaction_loads", "ReactionAxes", "BodyAxes",
    "forward_dynamics",
    "kinetic_energy", "potential_energy", "point_force", "body_torque", "zero_wrenches",
    "convert_ball_joint_motion",
    "CoordinateCoupler", "PointConstraint", "WeldConstraint", "constraint_errors", "constraint_jacobian",
    "constraint_bias", "constrained_forward_dynamics", "constrained_inverse_dynamics",
]
