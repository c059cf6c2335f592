"""Small models used by tests, benchmarks and examples."""

from __future__ import annotations

import numpy as np

from trajopt.core.multibody.bodies import GROUND, Body, OffsetFrame
from trajopt.core.multibody.coordinates import Coordinate
from trajopt.core.multibody.functions import Linear, Multiplier, Polynomial, SimmSpline
from trajopt.core.multibody.joints import (
    BallJoint,
    CustomJoint,
    EulerBallJoint,
    FreeJoint,
    PinJoint,
    PlanarJoint,
    PrismaticJoint,
    RevoluteJoint,
    SliderJoint,
    TransformAxis,
    UniversalJoint,
    WeldJoint,
)
from trajopt.core.multibody.model import Model

ROD_LENGTH = 1.0
ROD_RADIUS = 0.1
ROD_MASS = 1.0


def cylinder_rod(name, length=ROD_LENGTH, radius=ROD_RADIUS, mass=ROD_MASS):
    """Solid cylinder hanging along -y from its body origin (inertia about its center of mass)."""
    axial = 0.5 * mass * radius**2
    transverse = mass * (3 * radius**2 + length**2) / 12
    return Body(name, mass, (0.0, -length / 2, 0.0), (transverse, axial, transverse, 0.0, 0.0, 0.0))


def double_pendulum_3d(euler_sequence: str | None = None, gravity=(0.0, -9.81, 0.0)) -> Model:
    """Zoufaly et al.'s 3D double pendulum: two cylindrical rods (1 m, radius 0.1 m, 1 kg) joined
    by spherical joints at the top of each rod. `euler_sequence=None` uses quaternion BallJoints;
    e.g. 'YZY' uses EulerBallJoints. The parent frames are turned by -90 deg about z so that the
    hanging rest pose is R_FM = Rz(90 deg), away from the YZY gimbal lock at the identity."""
    model = Model("double_pendulum_3d" if euler_sequence is None else f"double_pendulum_3d_{euler_sequence}", gravity)
    turn = (0.0, 0.0, -np.pi / 2)
    for k, (parent, offset) in enumerate(((GROUND, (0.0, 0.0, 0.0)), ("rod1", (0.0, -ROD_LENGTH, 0.0))), start=1):
        model.add_body(cylinder_rod(f"rod{k}"))
        parent_frame = OffsetFrame(parent, offset, turn, name=f"joint{k}_parent")
        child_frame = OffsetFrame(f"rod{k}", name=f"joint{k}_child")
        if euler_sequence is None:
            model.add_joint(BallJoint(f"joint{k}", parent_frame, child_frame))
        else:
            coords = tuple(Coordinate(f"joint{k}_angle{i}") for i in (1, 2, 3))
            model.add_joint(EulerBallJoint(f"joint{k}", parent_frame, child_frame, coords, euler_sequence))
    return model


def single_pendulum(mass=2.0, length=1.0, inertia_about_com=0.1, gravity=9.81) -> Model:
    """A point-like rod on a pin about z: center of mass at distance `length` below the pivot."""
    model = Model("single_pendulum", (0.0, -gravity, 0.0))
    model.add_body(Body("bob", mass, (0.0, -length, 0.0), (inertia_about_com,) * 3 + (0.0, 0.0, 0.0)))
    model.add_joint(PinJoint("pivot", OffsetFrame(GROUND), OffsetFrame("bob"), Coordinate("theta")))
    return model


def sliding_mass(mass=3.0, incline=0.4, gravity=9.81) -> Model:
    """A mass on a slider inclined by `incline` rad (about z) from the horizontal x axis."""
    model = Model("sliding_mass", (0.0, -gravity, 0.0))
    model.add_body(Body("block", mass, (0.0, 0.0, 0.0), (0.1, 0.1, 0.1, 0.0, 0.0, 0.0)))
    ramp = OffsetFrame(GROUND, (0.0, 1.0, 0.0), (0.0, 0.0, incline), name="ramp")
    model.add_joint(SliderJoint("slide", ramp, OffsetFrame("block"), Coordinate("x", rotational=False)))
    return model


def planar_chain(locked_coordinates=()) -> Model:
    """2D chain: planar pelvis-like root, pin, slider along an oblique axis, pin, welded tip.
    Coordinates named in `locked_coordinates` are flagged locked."""
    model = Model("planar_chain", (0.0, -9.81, 0.0))
    model.add_body(Body("base", 5.0, (0.05, 0.1, 0.0), (0.2, 0.3, 0.25, 0.01, 0.0, 0.0)))
    model.add_body(Body("link1", 2.0, (0.0, -0.3, 0.0), (0.05, 0.01, 0.05, 0.0, 0.0, 0.0)))
    model.add_body(Body("link2", 1.5, (0.02, -0.2, 0.0), (0.03, 0.01, 0.03, 0.0, 0.0, 0.002)))
    model.add_body(Body("link3", 0.8, (0.0, -0.15, 0.01), (0.01, 0.004, 0.01, 0.0, 0.0, 0.0)))
    model.add_body(Body("tip", 0.3, (0.01, 0.0, 0.0), (0.001, 0.001, 0.001, 0.0, 0.0, 0.0)))
    root = (Coordinate("base_rz"), Coordinate("base_tx", rotational=False), Coordinate("base_ty", rotational=False))
    model.add_joint(PlanarJoint("base_joint", OffsetFrame(GROUND), OffsetFrame("base"), root))
    model.add_joint(PinJoint("hip", OffsetFrame("base", (0.1, -0.1, 0.0)), OffsetFrame("link1"),
                             Coordinate("hip_angle")))
    model.add_joint(
        PrismaticJoint(
            "telescope", OffsetFrame("link1", (0.0, -0.5, 0.0), (0.0, 0.0, 0.3)),
            OffsetFrame("link2", (0.0, 0.05, 0.0)),
            Coordinate("telescope_length", rotational=False, locked="telescope_length" in locked_coordinates),
            axis=(0.6, -0.8, 0.0),
        )
    )
    model.add_joint(
        PinJoint("knee", OffsetFrame("link2", (0.0, -0.4, 0.0)),
                 OffsetFrame("link3", (0.0, 0.02, 0.0), (0.0, 0.0, 0.2)),
                 Coordinate("knee_angle"))
    )
    model.add_joint(WeldJoint("tip_weld", OffsetFrame("link3", (0.0, -0.3, 0.0)), OffsetFrame("tip")))
    return model


def spatial_chain(with_quaternions: bool = True) -> Model:
    """3D chain exercising every joint type: free (or planar root without quaternions), ball (or
    XYZ Euler), universal, custom (spline/polynomial/multiplier coupled axes), revolute about an
    oblique axis, prismatic and weld, with rotated offset frames."""
    model = Model("spatial_chain" if with_quaternions else "spatial_chain_euler", (0.0, -9.81, 0.0))

    def body(name, mass, com, inertia):
        return model.add_body(Body(name, mass, com, inertia))

    body("trunk", 10.0, (0.0, 0.2, 0.01), (0.5, 0.3, 0.4, 0.02, -0.01, 0.03))
    body("upper", 3.0, (0.01, -0.2, 0.02), (0.06, 0.01, 0.05, 0.001, 0.0, -0.002))
    body("middle", 2.0, (0.0, -0.18, -0.01), (0.04, 0.01, 0.04, 0.0, 0.001, 0.0))
    body("lower", 1.5, (0.02, -0.2, 0.0), (0.03, 0.005, 0.03, 0.0, 0.0, 0.001))
    body("hand", 0.6, (0.0, -0.05, 0.01), (0.002, 0.001, 0.002, 0.0, 0.0, 0.0))
    body("finger", 0.2, (0.0, -0.03, 0.0), (0.0004, 0.0002, 0.0004, 0.0, 0.0, 0.0))
    body("nail", 0.05, (0.0, -0.01, 0.0), (1e-5, 1e-5, 1e-5, 0.0, 0.0, 0.0))
    body("ornament", 0.1, (0.01, 0.0, 0.0), (1e-4, 1e-4, 1e-4, 0.0, 0.0, 0.0))

    if with_quaternions:
        model.add_joint(FreeJoint("trunk_free", OffsetFrame(GROUND, (0.0, 1.0, 0.0)),
                                  OffsetFrame("trunk", (0.0, 0.1, 0.0))))
        shoulder = BallJoint(
            "shoulder", OffsetFrame("trunk", (0.2, 0.4, 0.05), (0.1, -0.2, 0.3)),
            OffsetFrame("upper", (0.0, 0.02, 0.0), (0.2, 0.0, 0.1))
        )
    else:
        root = (Coordinate("trunk_rz"), Coordinate("trunk_tx", rotational=False),
                Coordinate("trunk_ty", rotational=False))
        model.add_joint(PlanarJoint("trunk_planar", OffsetFrame(GROUND, (0.0, 1.0, 0.0)),
                                    OffsetFrame("trunk", (0.0, 0.1, 0.0)), root))
        shoulder = EulerBallJoint(
            "shoulder", OffsetFrame("trunk", (0.2, 0.4, 0.05), (0.1, -0.2, 0.3)),
            OffsetFrame("upper", (0.0, 0.02, 0.0), (0.2, 0.0, 0.1)),
            tuple(Coordinate(f"shoulder_{a}") for a in "xyz"), "XYZ",
        )
    model.add_joint(shoulder)
    model.add_joint(
        UniversalJoint(
            "elbow", OffsetFrame("upper", (0.0, -0.4, 0.0), (0.0, 0.3, 0.0)), OffsetFrame("middle"),
            (Coordinate("elbow_flex"), Coordinate("elbow_twist")),
        )
    )
    knee_angle = Coordinate("wrist_flex")
    wrist_dev = Coordinate("wrist_dev")
    spline = SimmSpline([-2.0, -1.0, 0.0, 0.5, 1.2, 2.0], [-0.01, 0.0, 0.005, 0.01, 0.004, -0.003])
    axes = (
        TransformAxis((0.0, 0.0, 1.0), ("wrist_flex",), Linear(1.0, 0.0)),
        TransformAxis((1.0, 0.1, 0.0), ("wrist_dev",), Multiplier(Polynomial((0.1, -0.2, 0.9, 0.05)), 1.1)),
        TransformAxis((0.0, 1.0, 0.0), ("wrist_flex",), Polynomial((0.3, 0.0))),
        TransformAxis((1.0, 0.0, 0.0), ("wrist_flex",), spline),
        TransformAxis((0.0, 1.0, 0.0), ("wrist_dev",), Linear(0.02, -0.01)),
        TransformAxis((0.0, 0.0, 1.0), (), Linear(0.0, 0.003)),
    )
    model.add_joint(
        CustomJoint("wrist", OffsetFrame("middle", (0.0, -0.36, 0.01)),
                    OffsetFrame("lower", (0.0, 0.03, 0.0), (0.0, 0.1, 0.0)),
                    (knee_angle, wrist_dev), axes)
    )
    model.add_joint(
        RevoluteJoint("hand_roll", OffsetFrame("lower", (0.0, -0.4, 0.0)), OffsetFrame("hand"), Coordinate("hand_roll"),
                      axis=(0.3, 0.9, -0.2))
    )
    model.add_joint(
        PrismaticJoint("finger_slide", OffsetFrame("hand", (0.0, -0.1, 0.0), (0.2, 0.0, 0.0)), OffsetFrame("finger"),
                       Coordinate("finger_slide", rotational=False), axis=(0.1, -1.0, 0.2))
    )
    model.add_joint(WeldJoint("nail_weld", OffsetFrame("finger", (0.0, -0.06, 0.0)),
                              OffsetFrame("nail", (0.0, 0.01, 0.0))))
    # A second branch on the trunk, so the tree is not a chain.
    model.add_joint(
        RevoluteJoint("ornament_pin", OffsetFrame("trunk", (-0.2, 0.4, 0.0), (0.0, 0.0, 0.5)), OffsetFrame("ornament"),
                      Coordinate("ornament_angle"), axis=(1.0, 0.0, 0.0))
    )
    return model


def random_state(model: Model, rng: np.random.Generator, scale: float = 1.0):
    """A random (q, u, udot) with unit quaternions."""
    q = model.default_q() + scale * rng.uniform(-1.0, 1.0, model.nq)
    for joint in model.joints:
        if isinstance(joint, (BallJoint, FreeJoint)):
            s = model.q_slice(joint.name)
            quat = rng.normal(size=4)
            q[s.start : s.start + 4] = quat / np.linalg.norm(quat)
    return q, scale * rng.uniform(-2.0, 2.0, model.nv), scale * rng.uniform(-3.0, 3.0, model.nv)
