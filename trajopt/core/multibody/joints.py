"""Joints: the motion of a child frame M relative to a parent frame F as a function of q.

Each joint gives, for its own coordinates q (nq) and speeds u (nv):
- `transform(q)` -> (R_FM, p_FM): rotation of M in F and position of M's origin in F;
- `motion_subspace(q)` -> S (6 x nv): relative spatial velocity of M in F, expressed in M,
  angular part first, is S u;
- `coordinate_rates_matrix(q)` -> N (nq x nv): qdot = N(q) u (Sherman et al.);
- `integrate(q, v)` and `difference(q0, q1)`: q (+) v and its inverse (quaternions stay unit).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody import rotations as rot
from trajopt.core.multibody.functions import Constant, CoordinateFunction
from trajopt.core.multibody.bodies import OffsetFrame
from trajopt.core.multibody.coordinates import Coordinate

_ZERO3 = ca.DM.zeros(3, 1)


def _unit(axis, what):
    a = np.asarray(axis, dtype=float).reshape(3)
    n = np.linalg.norm(a)
    if n == 0:
        raise TrajoptInputError(f"{what}: axis {tuple(a)} has zero length")
    return a / n


class Joint:
    """Base class. Subclasses set `nq`, `nv` and the kinematic maps listed in the module docstring."""

    nq = 0
    nv = 0

    def __init__(self, name: str, parent: OffsetFrame, child: OffsetFrame, coordinates=()):
        self.name = str(name)
        self.parent = parent
        self.child = child
        self.coordinates = tuple(coordinates)

    @property
    def quaternion_coordinate_names(self) -> tuple[str, ...]:
        """Names of the joint's unit-quaternion coordinates (w, x, y, z); empty for joints without one."""
        return ()

    @property
    def coordinate_names(self) -> tuple[str, ...]:
        """Names of the nq entries of q owned by this joint."""
        return tuple(c.name for c in self.coordinates)

    @property
    def speed_names(self) -> tuple[str, ...]:
        """Names of the nv entries of u owned by this joint."""
        return tuple(c.name for c in self.coordinates)

    def default_q(self) -> np.ndarray:
        """Default configuration (coordinates' default values; identity quaternions)."""
        return np.array([c.default_value for c in self.coordinates], dtype=float)

    def transform(self, q):
        raise NotImplementedError

    def motion_subspace(self, q):
        raise NotImplementedError

    def coordinate_rates_matrix(self, q):
        """N(q) with qdot = N u; identity when q and u are the same quantities."""
        return ca.DM.eye(self.nq)

    def integrate(self, q, v):
        """q (+) v: the configuration reached from q by moving with constant speeds v for unit time."""
        return q + v

    def difference(self, q0, q1):
        """Speeds v with integrate(q0, v) = q1."""
        return q1 - q0

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r}, {self.parent.body!r} -> {self.child.body!r})"


class WeldJoint(Joint):
    """No relative motion."""

    def __init__(self, name, parent, child):
        super().__init__(name, parent, child, ())

    def transform(self, q):
        return ca.DM.eye(3), _ZERO3

    def motion_subspace(self, q):
        return ca.DM.zeros(6, 0)


class RevoluteJoint(Joint):
    """Rotation about a fixed `axis` (given in F, equal in M). OpenSim's PinJoint uses axis z."""

    nq = nv = 1

    def __init__(self, name, parent, child, coordinate: Coordinate, axis=(0.0, 0.0, 1.0)):
        super().__init__(name, parent, child, (coordinate,))
        self.axis = _unit(axis, f"RevoluteJoint '{name}'")

    def transform(self, q):
        return rot.rotation_about_axis(self.axis, q[0]), _ZERO3

    def motion_subspace(self, q):
        return ca.DM(np.concatenate([self.axis, np.zeros(3)]))


def PinJoint(name, parent, child, coordinate: Coordinate):
    """OpenSim PinJoint: revolute about the shared z axis of the joint frames."""
    return RevoluteJoint(name, parent, child, coordinate, axis=(0.0, 0.0, 1.0))


class PrismaticJoint(Joint):
    """Translation along a fixed `axis` of F. OpenSim's SliderJoint uses axis x."""

    nq = nv = 1

    def __init__(self, name, parent, child, coordinate: Coordinate, axis=(1.0, 0.0, 0.0)):
        super().__init__(name, parent, child, (coordinate,))
        self.axis = _unit(axis, f"PrismaticJoint '{name}'")

    def transform(self, q):
        return ca.DM.eye(3), ca.DM(self.axis) * q[0]

    def motion_subspace(self, q):
        return ca.DM(np.concatenate([np.zeros(3), self.axis]))


def SliderJoint(name, parent, child, coordinate: Coordinate):
    """OpenSim SliderJoint: translation along the shared x axis."""
    return PrismaticJoint(name, parent, child, coordinate, axis=(1.0, 0.0, 0.0))


class PlanarJoint(Joint):
    """OpenSim PlanarJoint: rotation about z, then translations along F's x and y.

    coordinates = (rotation_z, translation_x, translation_y).
    """

    nq = nv = 3

    def __init__(self, name, parent, child, coordinates):
        if len(coordinates) != 3:
            raise TrajoptInputError(f"PlanarJoint '{name}': needs 3 coordinates (rz, tx, ty), got {len(coordinates)}")
        super().__init__(name, parent, child, coordinates)

    def transform(self, q):
        return rot.rotation_about_axis((0, 0, 1), q[0]), ca.vertcat(q[1], q[2], 0)

    def motion_subspace(self, q):
        c, s = ca.cos(q[0]), ca.sin(q[0])
        # Translation rates are along F's axes; express them in M (rotate by -q0 about z).
        return ca.vertcat(
            ca.horzcat(0, 0, 0),
            ca.horzcat(0, 0, 0),
            ca.horzcat(1, 0, 0),
            ca.horzcat(0, c, s),
            ca.horzcat(0, -s, c),
            ca.horzcat(0, 0, 0),
        )


class EulerBallJoint(Joint):
    """Spherical joint parametrized by body-fixed Euler angles (e.g. 'XYZ', 'YZY'); u = angle rates.

    Singular at gimbal lock; `BallJoint` (quaternion) is the default for spherical joints.
    """

    nq = nv = 3

    def __init__(self, name, parent, child, coordinates, sequence: str = "XYZ"):
        if len(coordinates) != 3:
            raise TrajoptInputError(f"EulerBallJoint '{name}': needs 3 coordinates, got {len(coordinates)}")
        super().__init__(name, parent, child, coordinates)
        self.sequence = rot.check_sequence(sequence)

    def transform(self, q):
        return rot.euler_to_rotation(self.sequence, q), _ZERO3

    def motion_subspace(self, q):
        return ca.vertcat(rot.euler_rate_matrix(self.sequence, q), ca.DM.zeros(3, 3))


class UniversalJoint(Joint):
    """OpenSim UniversalJoint: rotation about x, then about the new y (body-fixed)."""

    nq = nv = 2

    def __init__(self, name, parent, child, coordinates):
        if len(coordinates) != 2:
            raise TrajoptInputError(f"UniversalJoint '{name}': needs 2 coordinates, got {len(coordinates)}")
        super().__init__(name, parent, child, coordinates)

    def transform(self, q):
        r = ca.mtimes(rot.rotation_about_axis((1, 0, 0), q[0]), rot.rotation_about_axis((0, 1, 0), q[1]))
        return r, _ZERO3

    def motion_subspace(self, q):
        c, s = ca.cos(q[1]), ca.sin(q[1])
        # omega_M = Ry(q1)^T x q0dot + y q1dot
        return ca.vertcat(ca.horzcat(c, 0), ca.horzcat(0, 1), ca.horzcat(s, 0), ca.DM.zeros(3, 2))


class BallJoint(Joint):
    """Spherical joint with a unit quaternion q = (w, x, y, z) (4 coordinates) and 3 speeds
    u = angular velocity of M relative to F expressed in M (qdot = G(q)^T u / 2)."""

    nq = 4
    nv = 3

    def __init__(self, name, parent, child):
        super().__init__(name, parent, child, ())

    @property
    def coordinate_names(self):
        return self.quaternion_coordinate_names

    @property
    def quaternion_coordinate_names(self):
        return tuple(f"{self.name}_{c}" for c in ("qw", "qx", "qy", "qz"))

    @property
    def speed_names(self):
        return tuple(f"{self.name}_{c}" for c in ("wx", "wy", "wz"))

    def default_q(self):
        return np.array([1.0, 0.0, 0.0, 0.0])

    def transform(self, q):
        return rot.quaternion_to_rotation(q), _ZERO3

    def motion_subspace(self, q):
        return ca.vertcat(ca.DM.eye(3), ca.DM.zeros(3, 3))

    def coordinate_rates_matrix(self, q):
        return 0.5 * rot.quaternion_rate_matrix(q).T

    def integrate(self, q, v):
        new = rot.quaternion_multiply(q, rot.quaternion_exp(v))
        return new / ca.norm_2(new)

    def difference(self, q0, q1):
        return rot.quaternion_log(rot.quaternion_multiply(rot.quaternion_conjugate(q0), q1))


class FreeJoint(Joint):
    """Six degrees of freedom: q = (quaternion w, x, y, z, translation of M in F) (7),
    u = (angular velocity of M in F expressed in M, translation rates in F) (6)."""

    nq = 7
    nv = 6

    def __init__(self, name, parent, child, translation_coordinates=None):
        if translation_coordinates is None:
            translation_coordinates = tuple(Coordinate(f"{name}_t{a}", rotational=False) for a in "xyz")
        if len(translation_coordinates) != 3:
            raise TrajoptInputError(f"FreeJoint '{name}': needs 3 translation coordinates")
        super().__init__(name, parent, child, translation_coordinates)

    @property
    def coordinate_names(self):
        return self.quaternion_coordinate_names + tuple(c.name for c in self.coordinates)

    @property
    def quaternion_coordinate_names(self):
        return tuple(f"{self.name}_{c}" for c in ("qw", "qx", "qy", "qz"))

    @property
    def speed_names(self):
        return tuple(f"{self.name}_{c}" for c in ("wx", "wy", "wz")) + tuple(c.name for c in self.coordinates)

    def default_q(self):
        return np.concatenate([[1.0, 0.0, 0.0, 0.0], [c.default_value for c in self.coordinates]])

    def transform(self, q):
        return rot.quaternion_to_rotation(q[0:4]), q[4:7]

    def motion_subspace(self, q):
        r = rot.quaternion_to_rotation(q[0:4])
        return ca.vertcat(ca.horzcat(ca.DM.eye(3), ca.DM.zeros(3, 3)), ca.horzcat(ca.DM.zeros(3, 3), r.T))

    def coordinate_rates_matrix(self, q):
        g = 0.5 * rot.quaternion_rate_matrix(q[0:4]).T
        return ca.vertcat(ca.horzcat(g, ca.DM.zeros(4, 3)), ca.horzcat(ca.DM.zeros(3, 3), ca.DM.eye(3)))

    def integrate(self, q, v):
        new = rot.quaternion_multiply(q[0:4], rot.quaternion_exp(v[0:3]))
        return ca.vertcat(new / ca.norm_2(new), q[4:7] + v[3:6])

    def difference(self, q0, q1):
        dq = rot.quaternion_log(rot.quaternion_multiply(rot.quaternion_conjugate(q0[0:4]), q1[0:4]))
        return ca.vertcat(dq, q1[4:7] - q0[4:7])


@dataclass(frozen=True)
class TransformAxis:
    """One of the 6 axes of a CustomJoint's spatial transform: the amount along/about `axis` is
    `function(coordinate)` for the named coordinate (no coordinate: a Constant function)."""

    axis: tuple[float, float, float]
    coordinates: tuple[str, ...] = ()
    function: CoordinateFunction = field(default_factory=Constant)


class CustomJoint(Joint):
    """OpenSim CustomJoint (Simbody FunctionBased mobilizer).

    `transform_axes` holds 6 TransformAxis: 3 rotations then 3 translations. As in Simbody:
    R_FM = R(a1, f1) R(a2, f2) R(a3, f3) (body-fixed: each axis in the frame left by the previous
    rotations), p_FM = f4 t1 + f5 t2 + f6 t3 with translation axes fixed in F. Axes are normalized.
    """

    def __init__(self, name, parent, child, coordinates, transform_axes):
        super().__init__(name, parent, child, coordinates)
        if len(transform_axes) != 6:
            raise TrajoptInputError(f"CustomJoint '{name}': needs 6 transform axes, got {len(transform_axes)}")
        names = [c.name for c in self.coordinates]
        self.transform_axes = tuple(transform_axes)
        self._axis_coordinate = []
        for k, ta in enumerate(self.transform_axes):
            if len(ta.coordinates) > 1:
                raise TrajoptInputError(
                    f"CustomJoint '{name}': transform axis {k} uses {len(ta.coordinates)} coordinates; "
                    "only 0 or 1 supported"
                )
            if ta.coordinates and ta.coordinates[0] not in names:
                raise TrajoptInputError(
                    f"CustomJoint '{name}': transform axis {k} names coordinate '{ta.coordinates[0]}' not in {names}"
                )
            self._axis_coordinate.append(names.index(ta.coordinates[0]) if ta.coordinates else None)
        self._axes = [_unit(ta.axis, f"CustomJoint '{name}' axis {k}") for k, ta in enumerate(self.transform_axes)]
        self.nq = self.nv = len(self.coordinates)

    def _values_and_slopes(self, q):
        values, slopes = [], []
        for ta, index in zip(self.transform_axes, self._axis_coordinate):
            x = q[index] if index is not None else 0.0
            values.append(ta.function(x))
            slopes.append(ta.function.derivative(x) if index is not None else 0.0)
        return values, slopes

    def transform(self, q):
        values, _ = self._values_and_slopes(q)
        r = ca.DM.eye(3)
        for k in range(3):
            r = ca.mtimes(r, rot.rotation_about_axis(self._axes[k], values[k]))
        p = _ZERO3
        for k in range(3, 6):
            p = p + ca.DM(self._axes[k]) * values[k]
        return r, p

    def motion_subspace(self, q):
        values, slopes = self._values_and_slopes(q)
        r2 = rot.rotation_about_axis(self._axes[1], values[1])
        r3 = rot.rotation_about_axis(self._axes[2], values[2])
        r = ca.mtimes(ca.mtimes(rot.rotation_about_axis(self._axes[0], values[0]), r2), r3)
        # Angular velocity of each rotation axis expressed in M.
        omega_axes = [
            ca.mtimes(r3.T, ca.mtimes(r2.T, ca.DM(self._axes[0]))),
            ca.mtimes(r3.T, ca.DM(self._axes[1])),
            ca.DM(self._axes[2]),
        ]
        columns = []
        for j in range(self.nv):
            omega = _ZERO3
            velocity = _ZERO3
            for k in range(6):
                if self._axis_coordinate[k] != j:
                    continue
                if k < 3:
                    omega = omega + omega_axes[k] * slopes[k]
                else:
                    velocity = velocity + ca.DM(self._axes[k]) * slopes[k]
            columns.append(ca.vertcat(omega, ca.mtimes(r.T, velocity)))
        return ca.horzcat(*columns) if columns else ca.DM.zeros(6, 0)
