"""Polynomial muscle paths over constrained quaternion components of ball (and free) joints.

A ball joint's orientation enters the model as a unit quaternion Q = (Q0, Q1, Q2, Q3) (four coordinates, scalar
first). The polynomial is fitted in the constrained quaternion Q* = (Q1, Q2, Q3) with Q0 = sqrt(1 - |Q*|²) >= 0
(Zoufaly et al.), named ``<joint>_Q1`` .. ``<joint>_Q3`` in the paths file. In the dynamics the variables are
computed from the model's quaternion as Q* = sign(Q0) (Q1, Q2, Q3) / |Q|: Q and -Q are one rotation (the
hemisphere Q0 >= 0 is chosen; Q0 = 0, a half turn, is outside every fitted domain), and dividing by |Q| keeps the
length exact when integration lets |Q| drift from 1. The generalized forces then follow from the chain rule:
moment arms about the model's speeds are -∂l/∂Q N(Q) = -½ G R_Q for the body angular velocity, equal to
(Eᵀ)⁻¹ R_Q* on the unit sphere (the paper's eqs. 4 and 15; ``trajopt.model.paths.quaternion`` holds those maps).

``QuaternionBallPaths`` satisfies ``trajopt.model.musculoskeletal.MusclePaths``; ``constrained_samples`` turns
lengths and body-frame (spatial) moment arms sampled at orientations into fitting data about Q*.
``with_quaternion_joints(paths, multibody)`` evaluates paths fitted over ``<joint>_Q1..Q3`` (e.g. by
``trajopt fit-paths --quaternion``) on the model's ball and free joints, which is how tools read such a file.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.model.paths.domain_report import PathDomainReport, path_domain_report
from trajopt.model.paths.polynomial import PolynomialPaths
from trajopt.model.paths.quaternion import constrained_angular_velocity_matrix


@dataclass(frozen=True)
class BallJointQuaternion:
    """A ball joint whose model coordinates ``quaternion`` are (Q0, Q1, Q2, Q3); fitted variables
    ``<name>_Q1`` .. ``<name>_Q3``."""

    name: str
    quaternion: tuple[str, str, str, str]

    @property
    def variables(self) -> tuple[str, str, str]:
        return tuple(f"{self.name}_Q{i}" for i in (1, 2, 3))


def constrained_from_quaternion(quaternion):
    """Q* = sign(Q0) (Q1, Q2, Q3) / |Q| (SX/MX column of 4, or numeric rows n x 4)."""
    if isinstance(quaternion, (casadi.SX, casadi.MX)):
        sign = casadi.if_else(quaternion[0] >= 0, 1, -1)
        return sign * quaternion[1:4] / casadi.norm_2(quaternion)
    q = np.atleast_2d(np.asarray(quaternion, dtype=float))
    sign = np.where(q[:, :1] >= 0, 1.0, -1.0)
    return sign * q[:, 1:4] / np.linalg.norm(q, axis=1, keepdims=True)


def constrained_moment_arms(quaternion: np.ndarray, spatial_moment_arms: np.ndarray) -> np.ndarray:
    """Moment arms about Q* (n x 3) from moment arms about the body angular velocity (n x 3) at unit
    quaternions (n x 4, any hemisphere): r_Q* = Eᵀ r_S with E = 2 G T at the Q0 >= 0 representative."""
    q = np.atleast_2d(np.asarray(quaternion, dtype=float))
    q = np.where(q[:, :1] < 0, -q, q)
    arms = np.atleast_2d(np.asarray(spatial_moment_arms, dtype=float))
    return np.array([np.asarray(constrained_angular_velocity_matrix(row)).T @ arm for row, arm in zip(q, arms)])


class QuaternionBallPaths:
    """``PolynomialPaths`` over Q* of ``joints`` (and plain coordinates), evaluated on the model's quaternions."""

    def __init__(self, paths: PolynomialPaths, joints):
        self.paths = paths
        self.joints = tuple(joints)
        fitted = set(paths.coordinates)
        for joint in self.joints:
            if not set(joint.variables) & fitted:
                raise TrajoptInputError(f"quaternion paths: no path uses {joint.variables} "
                                        f"of ball joint '{joint.name}'")

    @property
    def muscles(self) -> tuple[str, ...]:
        return self.paths.muscles

    def _variables(self, q, coordinates):
        """Column of the paths' variables (in ``self.paths.coordinates`` order) from model q."""
        coordinates = tuple(coordinates)
        values = {}
        for joint in self.joints:
            missing = [c for c in joint.quaternion if c not in coordinates]
            if missing:
                raise TrajoptInputError(f"quaternion paths: the model has no coordinates {missing} of '{joint.name}'")
            star = constrained_from_quaternion(casadi.vertcat(*[q[coordinates.index(c)] for c in joint.quaternion]))
            values.update({name: star[i] for i, name in enumerate(joint.variables)})
        for name in self.paths.coordinates:
            if name not in values:
                if name not in coordinates:
                    raise TrajoptInputError(f"quaternion paths: the model has no coordinate '{name}'")
                values[name] = q[coordinates.index(name)]
        return casadi.vertcat(*[values[name] for name in self.paths.coordinates])

    def lengths_and_moment_arms_function(self, coordinates: tuple[str, ...]) -> casadi.Function:
        """q (model coordinates, quaternions included) -> (lengths, -∂l/∂q); times N(q) these are the moment
        arms about the body angular velocity (``MusculoskeletalModel`` does that)."""
        q = casadi.SX.sym("q", len(coordinates))
        inner = self.paths.lengths_and_moment_arms_function(self.paths.coordinates)
        lengths = inner(self._variables(q, coordinates))[0]
        return casadi.Function("quaternion_ball_paths", [q], [lengths, -casadi.jacobian(lengths, q)], ["q"],
                               ["lengths", "moment_arms"])

    def lengths_function(self, coordinates) -> casadi.Function:
        """q -> lengths only."""
        q = casadi.SX.sym("q", len(coordinates))
        inner = self.paths.lengths_and_moment_arms_function(self.paths.coordinates)
        return casadi.Function("quaternion_ball_lengths", [q], [inner(self._variables(q, coordinates))[0]], ["q"],
                               ["lengths"])

    def variables_of(self, q: np.ndarray, coordinates) -> np.ndarray:
        """The paths' variables (rows) at model configurations (rows of q)."""
        x = casadi.SX.sym("q", len(coordinates))
        f = casadi.Function("variables", [x], [self._variables(x, coordinates)])
        values = np.atleast_2d(np.asarray(q, dtype=float))
        return np.asarray(f.map(len(values))(values.T)).T

    def check_domain(self, q, coordinates, times=None, where: str = "motion") -> None:
        self.paths.check_domain(self.variables_of(q, coordinates), self.paths.coordinates, times, where)

    def domain_report(self, q, coordinates, times=None) -> PathDomainReport:
        """Rows of ``q`` (model configurations) against the domain of the fitted variables."""
        return path_domain_report(self.paths.domain, self.variables_of(q, coordinates), self.paths.coordinates, times)

    def domain_bounds(self, coordinates) -> tuple[np.ndarray, np.ndarray]:
        """The fitted domain's box on the model coordinates the paths use directly; the quaternions' variables are
        functions of the quaternion, not coordinates, so they bound nothing here (``domain_report`` checks them)."""
        variables = {name for joint in self.joints for name in joint.variables}
        quaternions = {name for joint in self.joints for name in joint.quaternion}
        lower, upper = self.paths.domain_bounds(coordinates)
        for i, name in enumerate(coordinates):
            if name in variables or name in quaternions:
                lower[i], upper[i] = -np.inf, np.inf
        return lower, upper


def with_quaternion_joints(paths, multibody):
    """``paths`` evaluated on ``multibody``'s quaternions: ``QuaternionBallPaths`` over every ball or free joint whose
    ``<joint>_Q1..Q3`` the paths use, or ``paths`` themselves when they use none."""
    fitted = set(paths.coordinates)
    candidates = [BallJointQuaternion(joint.name, joint.quaternion_coordinate_names) for joint in multibody.joints
                  if joint.quaternion_coordinate_names]
    joints = tuple(joint for joint in candidates if set(joint.variables) & fitted)
    return QuaternionBallPaths(paths, joints) if joints else paths
