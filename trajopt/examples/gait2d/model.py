"""The 2D_gait model as trajopt sees it: multibody + DeGroote muscles + polynomial paths + foot contacts.

``GaitModel.load()`` assembles everything once and exposes named SX Functions (the optimal-control
problem itself is built by ``trajopt.studies.prediction.muscle_driven_problem``, see ``prediction.py``):

- ``contact_loads(q, u) -> (wrenches, ...)``: the four sphere contacts (``trajopt.model.contact``), body wrenches
  first, as the problem's ``external_wrenches`` hook needs them;
- ``implicit_dynamics(q, u, udot, activations, lumbar_control) -> residual``: inverse dynamics with the
  contact wrenches minus muscle and lumbar-actuator generalized forces (zero on the motion), assembled
  independently of the problem's constraint for the OpenSim cross-check and the ID(FD) identity test;
- ``ground_reactions(q, u) -> (right_force, left_force, right_torque, left_torque)``: the sphere forces
  of each foot summed (ground axes, torques about the ground origin),
  ``trajopt.studies.gait.ground_reactions.foot_ground_reactions``.

``symmetry`` is the model's mirror image, ``trajopt.studies.gait.symmetry.bilateral_symmetry`` (derived from its names
and kinematics: left and right swap; in the sagittal plane no sign flips).
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from pathlib import Path

import casadi as ca
import numpy as np

from trajopt.model.contact import SphereContact, contact_loads_function, osim_contacts
from trajopt.errors import TrajoptInputError
from trajopt.studies.gait.ground_reactions import foot_ground_reactions
from trajopt.studies.gait.labels import coordinate_paths
from trajopt.studies.gait.symmetry import bilateral_symmetry
from trajopt.core.multibody import inverse_dynamics, mass_matrix
from trajopt.model.musculoskeletal import MusculoskeletalModel
from trajopt.model.osim import load_osim
from trajopt.model.paths.polynomial import PolynomialPaths
from trajopt.studies.prediction import OPENSIM_ACTIVATION_SMOOTHING

HERE = Path(__file__).resolve().parent
MODEL_FILE = HERE / "2D_gait.osim"
PATHS_FILE = HERE / "paths.json"



def _load_osim(model_file=MODEL_FILE):
    with warnings.catch_warnings():
        # 2D_gait.osim's obsolete `derivative_smoothing` contact property (ignored by OpenSim 4.6 too).
        warnings.filterwarnings("ignore", message=".*derivative_smoothing.*")
        return load_osim(model_file)


@lru_cache(maxsize=None)
def _joint_paths() -> dict[tuple[str, str], str]:
    multibody = _load_osim().multibody
    return {(name, kind): path for kind in ("value", "speed", "accel")
            for name, path in zip(multibody.coordinate_names, coordinate_paths(multibody, kind))}


def coordinate_path(coordinate: str, kind: str = "value") -> str:
    """``/jointset/<joint>/<coordinate>/<kind>`` as in Moco's and OpenSim's state tables (joints from the .osim)."""
    return _joint_paths()[coordinate, kind]


class GaitModel:
    """2D_gait.osim with polynomial muscle paths and its four smooth sphere contacts."""

    def __init__(self, musculoskeletal: MusculoskeletalModel, contacts: tuple[SphereContact, ...],
                 activation_smoothing: float = OPENSIM_ACTIVATION_SMOOTHING):
        self.musculoskeletal = musculoskeletal
        self.multibody = musculoskeletal.multibody
        self.contacts = contacts
        if len(musculoskeletal.coordinate_actuators) != 1:
            raise TrajoptInputError(f"2D gait expects one coordinate actuator (lumbarAct), got "
                                    f"{[a.name for a in musculoskeletal.coordinate_actuators]}")
        self.lumbar_actuator = musculoskeletal.coordinate_actuators[0]
        # OpenSim's DeGrooteFregly2016Muscle activation_dynamics_smoothing (default 0.1; not set in 2D_gait.osim).
        self.activation_smoothing = activation_smoothing
        self.symmetry = bilateral_symmetry(musculoskeletal, contacts=contacts)
        self._build()

    @classmethod
    def load(cls, model_file=MODEL_FILE, paths_file=PATHS_FILE, **options) -> "GaitModel":
        osim = _load_osim(model_file)
        musculoskeletal = MusculoskeletalModel(osim, PolynomialPaths.load(paths_file))
        return cls(musculoskeletal, osim_contacts(osim), **options)

    @property
    def coordinate_names(self) -> tuple[str, ...]:
        return tuple(self.multibody.coordinate_names)

    @property
    def muscle_names(self) -> tuple[str, ...]:
        return self.musculoskeletal.muscle_names

    @property
    def multibody_weight(self) -> float:
        """Total weight m g (N), a scale for ground reaction forces."""
        return float(sum(body.mass for body in self.multibody.bodies) * np.linalg.norm(self.multibody.gravity))

    def coordinate_index(self, name: str) -> int:
        return self.coordinate_names.index(name)

    def _build(self) -> None:
        mb, ms = self.multibody, self.musculoskeletal
        q, u, udot = ca.SX.sym("q", mb.nq), ca.SX.sym("u", mb.nv), ca.SX.sym("udot", mb.nv)
        a = ca.SX.sym("activations", len(ms.muscles))
        lumbar = ca.SX.sym("lumbar_control")
        self.contact_loads = contact_loads_function(mb, self.contacts)
        loads = self.contact_loads(q, u)
        wrenches = loads[0]
        lumbar_force = ca.SX.zeros(mb.nv)
        lumbar_force[mb.speed_names.index(self.lumbar_actuator.coordinate)] = \
            lumbar * self.lumbar_actuator.optimal_force
        residual = inverse_dynamics(mb, q, u, udot, wrenches) - ms.muscle_generalized_forces(a, q, u) - lumbar_force
        self.implicit_dynamics = ca.Function(
            "implicit_dynamics", [q, u, udot, a, lumbar], [residual],
            ["q", "u", "udot", "activations", "lumbar_control"], ["residual"], {"cse": True})
        self.ground_reactions = foot_ground_reactions(mb, self.contacts)
        self.mass_matrix = ca.Function("mass_matrix", [q], [mass_matrix(mb, q)], ["q"], ["mass_matrix"])

