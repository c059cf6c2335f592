"""A 3D arm: arm26's humerus and forearm with a 3-DOF shoulder (quaternion or Euler) and 9 straight-line muscles.

Bodies, inertias, the shoulder centre and the elbow joint frame and axis come from
``trajopt/examples/arm26/arm26.osim``;
arm26's planar shoulder (one elevation angle) becomes a spherical joint:

- ``shoulder_arm()``: a ``BallJoint`` (unit quaternion Q = (w, x, y, z), speeds = angular velocity of the
  humerus in humerus axes, Q̇ = ½ Gᵀ ω);
- ``shoulder_arm(euler_sequence="YZY")``: an ``EulerBallJoint`` (body-fixed Y-Z-Y angles, speeds = angle rates).
  With the arm hanging the humerus long axis is ground Y, so YZY's middle angle is 0 there: gimbal lock.

Ground axes are OpenSim's: x forward, y up, z to the right (lateral for this right arm). Muscles are
``GeometricPath``s of fixed points (no wrapping). Seven shoulder muscles have attachment points chosen here,
relative to the shoulder centre (ground points) or in humerus axes (origin at the shoulder centre), placed to
give each its textbook action with the arm hanging; BIClong and TRIlong keep arm26's path points (their
wrap objects are dropped), max isometric force, optimal fibre length and pennation, with the tendon slack
length refitted to the wrap-free path. Max isometric forces of the seven are of the order of
Holzbaur et al. 2005's upper-limb model; their optimal fibre and tendon slack lengths make the fibre optimal
at the reference posture ``REFERENCE_ELEVATION``, ``REFERENCE_ELBOW`` (``ShoulderMuscle.fibre_share`` of the
musculotendon length). All are DeGroote 2016
rigid-tendon units with first-order activation dynamics.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody import (
    BallJoint,
    Body,
    Coordinate,
    EulerBallJoint,
    Model,
    OffsetFrame,
    RevoluteJoint,
    coordinate_rates_matrix,
)
from trajopt.core.multibody import rotations
from trajopt.core.muscles import MuscleParameters, RigidTendonMuscle
from trajopt.model.musculoskeletal import named_state_labels
from trajopt.model.osim import load_osim
from trajopt.model.paths.domain import PathDomain
from trajopt.model.paths.domain_report import PathDomainReport, path_domain_report
from trajopt.model.paths.geometric import FixedPathPoint, GeometricPath

ARM26_FILE = Path(__file__).resolve().parent.parent / "arm26" / "arm26.osim"
SHOULDER = "shoulder"
ELBOW = "elbow"
HUMERUS = "r_humerus"
FOREARM = "r_ulna_radius_hand"
HAND_MARKER = "r_radius_styloid"
ELBOW_RANGE = (0.0, 2.26892803)  # rad, arm26's r_elbow_flex


@dataclass(frozen=True)
class ShoulderMuscle:
    """A straight-line muscle: points on ground (relative to the shoulder centre, ground axes) and on bodies."""

    name: str
    max_isometric_force: float  # N
    points: tuple[tuple[str, tuple[float, float, float]], ...]  # (body, location); ground relative to the joint
    fibre_share: float  # optimal fibre length / musculotendon length at the reference posture


# Attachments (m). Ground points are offsets from the shoulder centre; humerus points are in humerus axes.
SHOULDER_MUSCLES = (
    # clavicle, lateral third (front, above, slightly medial) -> deltoid tuberosity: flexion, abduction
    ShoulderMuscle("deltoid_anterior", 1100.0,
                   (("ground", (0.035, 0.025, -0.025)), (HUMERUS, (0.008, -0.115, 0.012))), 0.55),
    # acromion (above, lateral) -> deltoid tuberosity: abduction
    ShoulderMuscle("deltoid_middle", 1100.0, (("ground", (0.0, 0.03, 0.02)), (HUMERUS, (0.0, -0.115, 0.018))), 0.55),
    # scapular spine (behind, above) -> deltoid tuberosity: extension, external rotation
    ShoulderMuscle("deltoid_posterior", 260.0,
                   (("ground", (-0.045, 0.02, -0.02)), (HUMERUS, (-0.005, -0.115, 0.012))), 0.55),
    # infraspinous fossa (behind, medial) -> greater tubercle, posterior facet: external rotation
    ShoulderMuscle("infraspinatus", 1210.0,
                   (("ground", (-0.055, -0.04, -0.09)), (HUMERUS, (-0.012, 0.005, 0.022))), 0.55),
    # subscapular fossa (front of the scapula, medial) -> lesser tubercle: internal rotation
    ShoulderMuscle("subscapularis", 1380.0,
                   (("ground", (-0.015, -0.045, -0.095)), (HUMERUS, (0.02, -0.005, -0.005))), 0.7),
    # sternum -> lateral lip of the bicipital groove: adduction, flexion, internal rotation
    ShoulderMuscle("pectoralis_major", 800.0,
                   (("ground", (0.07, -0.05, -0.16)), (HUMERUS, (0.015, -0.07, 0.008))), 0.85),
    # lower back -> floor of the bicipital groove: extension, adduction, internal rotation
    ShoulderMuscle("latissimus_dorsi", 1130.0,
                   (("ground", (-0.09, -0.25, -0.14)), (HUMERUS, (0.008, -0.06, -0.008))), 0.85),
)
ARM26_MUSCLES = ("BIClong", "TRIlong")

# Humerus elevated 45 deg in the scapular plane (30 deg forward of the frontal plane), elbow at 45 deg.
SCAPULAR_PLANE_ANGLE = np.radians(30.0)
REFERENCE_ELEVATION = np.radians(45.0)
REFERENCE_ELBOW = np.radians(45.0)


def elevation_rotation(elevation: float, plane: float = SCAPULAR_PLANE_ANGLE) -> np.ndarray:
    """Humerus orientation (3x3, humerus in ground) lifted by `elevation` in a vertical plane `plane` rad
    forward of the frontal plane (0: pure abduction, pi/2: forward flexion), no axial rotation."""
    # The lift axis is horizontal and perpendicular to the plane of elevation.
    direction = np.array([np.sin(plane), 0.0, np.cos(plane)])  # horizontal, in the plane of elevation
    axis = np.cross(np.array([0.0, -1.0, 0.0]), direction)  # rotates -y (hanging) towards `direction`
    return np.array(rotations.rotation_about_axis(axis, elevation))


@dataclass(frozen=True, eq=False)
class ShoulderArm:
    """The multibody model, its muscle paths and DeGroote muscles; ``euler_sequence`` None for the quaternion
    shoulder. ``fitted_paths``: the fitted surrogate (``trajopt.model.musculoskeletal.MusclePaths``) the ``paths`` are
    evaluated from, whose domain then applies, with ``fitted_coordinates`` the names it gives the model's
    coordinates (default theirs); None for the straight-line paths, which hold everywhere."""

    multibody: Model
    paths: tuple[GeometricPath, ...]
    muscles: tuple[RigidTendonMuscle, ...]
    euler_sequence: str | None
    hand: tuple[str, tuple[float, float, float]]  # body, location of the hand marker
    fitted_paths: object = None
    fitted_coordinates: tuple[str, ...] | None = None

    @property
    def muscle_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.paths)

    # -- trajopt.model.musculoskeletal.MuscleDrivenModel: what muscle_driven_problem needs -----------------
    @property
    def coordinate_names(self) -> tuple[str, ...]:
        return self.multibody.coordinate_names

    @property
    def speed_names(self) -> tuple[str, ...]:
        return self.multibody.speed_names

    @property
    def state_labels(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return named_state_labels(self.multibody)

    @property
    def coordinate_actuators(self) -> tuple:
        return ()

    @property
    def _fitted_names(self) -> tuple[str, ...]:
        return self.fitted_coordinates or self.coordinate_names

    def check_path_domain(self, q, times=None, where: str = "motion") -> None:
        """Straight-line paths hold at every configuration; fitted paths are checked against their domain."""
        if self.fitted_paths is not None:
            self.fitted_paths.check_domain(q, self._fitted_names, times, where)

    def path_domain_report(self, q, times=None) -> PathDomainReport:
        if self.fitted_paths is None:
            return path_domain_report(PathDomain.everywhere("straight-line paths hold at every configuration"), q)
        return self.fitted_paths.domain_report(q, self._fitted_names, times)

    @property
    def path_domain_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        if self.fitted_paths is None:
            return np.full(self.multibody.nq, -np.inf), np.full(self.multibody.nq, np.inf)
        return self.fitted_paths.domain_bounds(self._fitted_names)

    @property
    def coordinate_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Shoulder: ±1.05 for quaternion components (not ±1: a start at Q = 1 would sit on its bound and
        duplicate the start constraint, a degenerate KKT system), ±2π for Euler angles; elbow: arm26's range."""
        low, high = (-1.05, 1.05) if self.euler_sequence is None else (-2 * np.pi, 2 * np.pi)
        shoulder = self.shoulder_slice.stop
        return (np.concatenate([np.full(shoulder, low), [ELBOW_RANGE[0]]]),
                np.concatenate([np.full(shoulder, high), [ELBOW_RANGE[1]]]))

    @cached_property
    def tendon_forces(self) -> ca.Function:
        a, q, u = self._symbols()
        return ca.Function("tendon_forces", [a, q, u], [self.muscle_forces(a, q, u)[0]], ["activations", "q", "u"],
                           ["tendon_forces"])

    @cached_property
    def muscle_generalized_forces(self) -> ca.Function:
        a, q, u = self._symbols()
        return ca.Function("muscle_generalized_forces", [a, q, u], [self.muscle_forces(a, q, u)[1]],
                           ["activations", "q", "u"], ["generalized_forces"])

    def _symbols(self):
        return (ca.SX.sym("activations", len(self.muscles)), ca.SX.sym("q", self.multibody.nq),
                ca.SX.sym("u", self.multibody.nv))

    @property
    def shoulder_slice(self) -> slice:
        """Entries of q owned by the shoulder (4 quaternion entries or 3 angles)."""
        return self.multibody.q_slice(SHOULDER)

    @cached_property
    def musculotendon_kinematics(self) -> ca.Function:
        """(q, u) -> (lengths, lengthening_speeds, moment_arms nv x m): moment arms from length Jacobians,
        -(∂l/∂q N(q))ᵀ; for the ball joint that is -½ G(Q) ∂l/∂Q (Zoufaly et al. eq. 4)."""
        model = self.multibody
        q = ca.SX.sym("q", model.nq)
        u = ca.SX.sym("u", model.nv)
        lengths = ca.vertcat(*[p.length(q) for p in self.paths])
        jacobian = ca.mtimes(ca.jacobian(lengths, q), coordinate_rates_matrix(model, q))
        speeds = ca.mtimes(jacobian, u)
        return ca.Function("musculotendon_kinematics", [q, u], [lengths, speeds, -jacobian.T], ["q", "u"],
                           ["lengths", "lengthening_speeds", "moment_arms"], {"cse": True})

    @cached_property
    def muscle_forces(self) -> ca.Function:
        """(activations, q, u) -> (tendon_forces, generalized_forces nv) of the muscles."""
        model = self.multibody
        a = ca.SX.sym("activations", len(self.muscles))
        q = ca.SX.sym("q", model.nq)
        u = ca.SX.sym("u", model.nv)
        lengths, speeds, arms = self.musculotendon_kinematics(q, u)
        forces = ca.vertcat(*[m.tendon_force(a[k], lengths[k], speeds[k]) for k, m in enumerate(self.muscles)])
        return ca.Function("muscle_forces", [a, q, u], [forces, ca.mtimes(arms, forces)],
                           ["activations", "q", "u"], ["tendon_forces", "generalized_forces"], {"cse": True})

    @cached_property
    def normalized_fiber_lengths(self) -> ca.Function:
        """q -> fibre length / optimal fibre length per muscle."""
        q = ca.SX.sym("q", self.multibody.nq)
        lengths = self.musculotendon_kinematics(q, ca.DM.zeros(self.multibody.nv))[0]
        values = [m.quantities(activation=0, musculotendon_length=lengths[k], musculotendon_velocity=0)
                  ["normalized_fiber_length"] for k, m in enumerate(self.muscles)]
        return ca.Function("normalized_fiber_lengths", [q], [ca.vertcat(*values)], ["q"], ["normalized_fiber_lengths"])

    def configuration(self, rotation, elbow: float) -> np.ndarray:
        """q for a humerus orientation (3x3 in ground) and elbow angle (Euler angles: scipy's principal values)."""
        rotation = np.asarray(rotation, dtype=float)
        if self.euler_sequence is None:
            shoulder = rotations.rotation_to_quaternion(rotation)
        else:
            with warnings.catch_warnings():
                # At gimbal lock scipy warns and sets the third angle to 0: still a valid set of angles.
                warnings.simplefilter("ignore", UserWarning)
                shoulder = rotations.rotation_to_euler(self.euler_sequence, rotation)
        return np.concatenate([shoulder, [float(elbow)]])


def _body(spec, name, new_name=None) -> Body:
    found = [b for b in spec.bodies if b.name == name]
    if not found:
        raise TrajoptInputError(f"{ARM26_FILE}: no body '{name}'")
    b = found[0]
    return Body(new_name or b.name, b.mass, b.mass_center, b.inertia)


def _frame(spec, path):
    for f in spec.frames:
        if f.path == path:
            return f
    raise TrajoptInputError(f"{ARM26_FILE}: no frame '{path}'")


def _elbow_axis(spec) -> np.ndarray:
    joint = [j for j in spec.joints if j.name == "r_elbow"][0]
    return np.asarray(joint.spatial_transform[0].axis, dtype=float)


@lru_cache(maxsize=None)
def shoulder_arm(euler_sequence: str | None = None) -> ShoulderArm:
    """The 3D arm (built once per shoulder parametrization). ``euler_sequence`` e.g. "YZY"; None: quaternion."""
    osim = load_osim(ARM26_FILE)
    spec = osim.spec
    base = np.asarray(_frame(spec, "/jointset/offset/ground_offset").translation)
    shoulder_centre = base + np.asarray(_frame(spec, "/jointset/r_shoulder/base_offset").translation)
    elbow_frame = _frame(spec, "/jointset/r_elbow/r_humerus_offset")
    model = Model("shoulder_arm")
    model.add_body(_body(spec, HUMERUS))
    model.add_body(_body(spec, FOREARM))
    parent = OffsetFrame("ground", tuple(shoulder_centre), name="shoulder_in_ground")
    child = OffsetFrame(HUMERUS, name="shoulder_in_humerus")
    if euler_sequence is None:
        model.add_joint(BallJoint(SHOULDER, parent, child))
    else:
        angles = tuple(Coordinate(f"shoulder_{k}_{axis.lower()}", range=(-2 * np.pi, 2 * np.pi))
                       for k, axis in enumerate(rotations.check_sequence(euler_sequence), start=1))
        model.add_joint(EulerBallJoint(SHOULDER, parent, child, angles, sequence=euler_sequence))
    model.add_joint(RevoluteJoint(ELBOW, OffsetFrame(HUMERUS, elbow_frame.translation, name="elbow_in_humerus"),
                                  OffsetFrame(FOREARM, name="elbow_in_forearm"),
                                  Coordinate("elbow_flexion", range=ELBOW_RANGE), axis=_elbow_axis(spec)))
    model.finalize()

    def point(body, location, name):
        if body == "ground":
            return FixedPathPoint(name, "ground", tuple(shoulder_centre + np.asarray(location)))
        return FixedPathPoint(name, body, location)

    paths = [GeometricPath(model, [point(b, loc, f"{m.name}_{k}") for k, (b, loc) in enumerate(m.points)], m.name)
             for m in SHOULDER_MUSCLES]
    for name in ARM26_MUSCLES:
        points = []
        for p in osim.muscle(name).path.points:
            body_point = osim.point(p.frame, p.location)  # base points land on ground, shifted by the weld
            body = "ground" if body_point.body in ("ground", "base") else body_point.body
            location = np.asarray(body_point.location) + (base if body_point.body == "base" else 0.0)
            points.append(FixedPathPoint(p.name, body, tuple(location)))
        paths.append(GeometricPath(model, points, name))
    reference = ShoulderArm(model, tuple(paths), (), euler_sequence, (FOREARM, osim.marker(HAND_MARKER).location))
    q_reference = reference.configuration(elevation_rotation(REFERENCE_ELEVATION), REFERENCE_ELBOW)
    lengths = np.asarray(reference.musculotendon_kinematics(q_reference, np.zeros(model.nv))[0]).ravel()
    muscles = []
    for k, m in enumerate(SHOULDER_MUSCLES):
        optimal = m.fibre_share * lengths[k]
        muscles.append(RigidTendonMuscle(MuscleParameters(m.max_isometric_force, optimal, lengths[k] - optimal,
                                                          name=m.name)))
    for k, name in enumerate(ARM26_MUSCLES, start=len(SHOULDER_MUSCLES)):
        # arm26's force and fibre length; the tendon slack length is refitted (fibre optimal at the reference
        # posture) because the path without arm26's wrap objects is longer than arm26's.
        s = osim.muscle(name)
        along_tendon = s.optimal_fiber_length * np.cos(s.pennation_angle_at_optimal)
        muscles.append(RigidTendonMuscle(MuscleParameters(
            s.max_isometric_force, s.optimal_fiber_length, lengths[k] - along_tendon,
            optimal_pennation_angle=s.pennation_angle_at_optimal, name=name)))
    return ShoulderArm(model, tuple(paths), tuple(muscles), euler_sequence, reference.hand)
