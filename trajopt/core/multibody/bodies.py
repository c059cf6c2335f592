"""Rigid bodies and frames fixed to them (OpenSim's Body and PhysicalOffsetFrame)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody.rotations import xyz_body_fixed_rotation

GROUND = "ground"


def _vector3(value, what):
    v = np.asarray(value, dtype=float).reshape(-1)
    if v.size != 3 or not np.all(np.isfinite(v)):
        raise TrajoptInputError(f"{what}: expected 3 finite numbers, got {value!r}")
    return v


@dataclass(frozen=True, eq=False)
class Body:
    """A rigid body: mass (kg), center of mass (m, body frame) and inertia about the center of
    mass in body axes, either 3x3 or OpenSim's (Ixx, Iyy, Izz, Ixy, Ixz, Iyz)."""

    name: str
    mass: float
    center_of_mass: tuple = (0.0, 0.0, 0.0)
    inertia: tuple = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    _inertia_matrix: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        if self.name == GROUND:
            raise TrajoptInputError("Body: the name 'ground' is reserved for the model's ground frame")
        if not np.isfinite(self.mass) or self.mass < 0:
            raise TrajoptInputError(f"Body '{self.name}': mass {self.mass} must be finite and >= 0")
        object.__setattr__(self, "center_of_mass",
                           tuple(_vector3(self.center_of_mass, f"Body '{self.name}' mass_center")))
        i = np.asarray(self.inertia, dtype=float)
        if i.shape == (6,):
            i = np.array([[i[0], i[3], i[4]], [i[3], i[1], i[5]], [i[4], i[5], i[2]]])
        if i.shape != (3, 3) or not np.allclose(i, i.T):
            raise TrajoptInputError(f"Body '{self.name}': inertia {self.inertia!r} "
                                    "must be 6 numbers or a symmetric 3x3")
        object.__setattr__(self, "_inertia_matrix", i)

    @property
    def inertia_matrix(self) -> np.ndarray:
        """3x3 inertia about the center of mass, body axes."""
        return self._inertia_matrix.copy()

    def spatial_inertia(self) -> np.ndarray:
        """6x6 spatial inertia about the body origin (angular rows first, Featherstone)."""
        c = np.asarray(self.center_of_mass)
        cx = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
        m = self.mass
        return np.block([[self._inertia_matrix + m * cx @ cx.T, m * cx], [m * cx.T, m * np.eye(3)]])


@dataclass(frozen=True)
class OffsetFrame:
    """A frame fixed to `body` (or 'ground'): its origin at `translation` and its axes rotated by
    `orientation` (body-fixed X-Y-Z angles, rad), both in the body frame, as OpenSim's
    PhysicalOffsetFrame. Joints connect a parent OffsetFrame F to a child OffsetFrame M."""

    body: str
    translation: tuple = (0.0, 0.0, 0.0)
    orientation: tuple = (0.0, 0.0, 0.0)
    name: str = ""

    def __post_init__(self):
        object.__setattr__(self, "translation", tuple(_vector3(self.translation, f"frame '{self.name}' translation")))
        object.__setattr__(self, "orientation", tuple(_vector3(self.orientation, f"frame '{self.name}' orientation")))

    @property
    def rotation(self) -> np.ndarray:
        """Rotation matrix of the frame's axes in its body's axes."""
        return _xyz_rotation(self.orientation).copy()


@lru_cache(maxsize=None)
def _xyz_rotation(orientation: tuple) -> np.ndarray:
    """The body-fixed X-Y-Z rotation of ``orientation``, computed once per orientation (every pass over a model's
    tree reads its joints' frames)."""
    return np.array(xyz_body_fixed_rotation(orientation))
