"""The 2D_gait model as trajopt sees it: multibody + DeGroote muscles + polynomial paths + foot contacts.

``GaitModel.load()`` assembles everything once and exposes named SX Functions (the optimal-control
problem itself is built by ``trajopt.prediction.muscle_driven_problem``, see ``prediction.py``):

- ``contact_loads(q, u) -> (wrenches, ...)``: the four sphere contacts (``trajopt.contact``), body wrenches
  first, as the problem's ``external_wrenches`` hook needs them;
- ``implicit_dynamics(q, u, udot, activations, lumbar_control) -> residual``: inverse dynamics with the
  contact wrenches minus muscle and lumbar-actuator generalized forces (zero on the motion), assembled
  independently of the problem's constraint for the OpenSim cross-check and the ID(FD) identity test;
- ``ground_reactions(q, u) -> (right_force, left_force, right_torque, left_torque)``: the sphere forces
  of each foot summed (ground axes, torques about the ground origin), as OpenSim's
  ``createExternalLoadsTableForGait`` reports them.

``Mirror`` swaps left and right: coordinates and speeds (pelvis and lumbar map to themselves; in the
sagittal plane no sign flips) and muscles, from explicit name pairs, never pattern matching.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import casadi as ca
import numpy as np

from trajopt.contact import SphereContact, contact_loads_function, contacts_on, osim_contacts
from trajopt.errors import TrajoptInputError
from trajopt.multibody import body_pose, inverse_dynamics, mass_matrix
from trajopt.musculoskeletal import MusculoskeletalModel
from trajopt.osim import load_osim
from trajopt.paths.polynomial import PolynomialPaths
from trajopt.prediction import OPENSIM_ACTIVATION_SMOOTHING

HERE = Path(__file__).resolve().parent
MODEL_FILE = HERE / "2D_gait.osim"
PATHS_FILE = HERE / "paths.json"

COORDINATE_PAIRS = (("hip_flexion_l", "hip_flexion_r"), ("knee_angle_l", "knee_angle_r"),
                    ("ankle_angle_l", "ankle_angle_r"))
MUSCLE_PAIRS = tuple((f"{name}_l", f"{name}_r") for name in (
    "hamstrings", "bifemsh", "glut_max", "iliopsoas", "rect_fem", "vasti", "gastroc", "soleus", "tib_ant"))

# OpenSim state paths of the coordinates (for .sto files OpenSim and Moco read).
JOINT_OF_COORDINATE = {"pelvis_tilt": "groundPelvis", "pelvis_tx": "groundPelvis", "pelvis_ty": "groundPelvis",
                       "hip_flexion_l": "hip_l", "hip_flexion_r": "hip_r", "knee_angle_l": "knee_l",
                       "knee_angle_r": "knee_r", "ankle_angle_l": "ankle_l", "ankle_angle_r": "ankle_r",
                       "lumbar": "lumbar"}


def coordinate_path(coordinate: str, kind: str = "value") -> str:
    """``/jointset/<joint>/<coordinate>/<kind>`` as in Moco's and OpenSim's state tables."""
    return f"/jointset/{JOINT_OF_COORDINATE[coordinate]}/{coordinate}/{kind}"


def permutation(names: tuple[str, ...], pairs) -> np.ndarray:
    """Matrix P with (P x)[i] = x[j] where names i and j form a pair (others map to themselves)."""
    index = {name: i for i, name in enumerate(names)}
    matrix = np.eye(len(names))
    for left, right in pairs:
        if left not in index or right not in index:
            raise TrajoptInputError(f"mirror pair ({left}, {right}) not among {names}")
        i, j = index[left], index[right]
        matrix[[i, j]] = matrix[[j, i]]
    return matrix


@dataclass(frozen=True)
class Mirror:
    """Left/right swap matrices: ``coordinates`` (nq x nq, also for speeds) and ``muscles``."""

    coordinates: np.ndarray
    muscles: np.ndarray

    def __post_init__(self):
        for name in ("coordinates", "muscles"):
            matrix = getattr(self, name)
            if not np.allclose(matrix @ matrix, np.eye(matrix.shape[0])):
                raise TrajoptInputError(f"Mirror.{name} is not an involution")


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
        self.mirror = Mirror(permutation(self.coordinate_names, COORDINATE_PAIRS),
                             permutation(self.muscle_names, MUSCLE_PAIRS))
        self._build()

    @classmethod
    def load(cls, model_file=MODEL_FILE, paths_file=PATHS_FILE, **options) -> "GaitModel":
        import warnings

        with warnings.catch_warnings():
            # 2D_gait.osim's obsolete `derivative_smoothing` contact property (ignored by OpenSim 4.6 too).
            warnings.filterwarnings("ignore", message=".*derivative_smoothing.*")
            osim = load_osim(model_file)
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
        wrenches, sphere_forces, sphere_torques = loads[0], loads[1], loads[2]
        lumbar_force = ca.SX.zeros(mb.nv)
        lumbar_force[mb.speed_names.index(self.lumbar_actuator.coordinate)] = \
            lumbar * self.lumbar_actuator.optimal_force
        residual = inverse_dynamics(mb, q, u, udot, wrenches) - ms.muscle_generalized_forces(a, q, u) - lumbar_force
        self.implicit_dynamics = ca.Function(
            "implicit_dynamics", [q, u, udot, a, lumbar], [residual],
            ["q", "u", "udot", "activations", "lumbar_control"], ["residual"], {"cse": True})
        columns = {side: [i for i, c in enumerate(self.contacts) if c in contacts_on(self.contacts, f"calcn_{side}")]
                   for side in ("r", "l")}
        # Sphere torques are about the calcaneus origins; move them to the ground origin.
        body_origin = {side: body_pose(mb, q, f"calcn_{side}")[1] for side in ("r", "l")}
        forces, torques = {}, {}
        for side, idx in columns.items():
            forces[side] = sum(sphere_forces[:, i] for i in idx)
            torques[side] = sum(sphere_torques[:, i] for i in idx) + ca.cross(body_origin[side], forces[side])
        self.ground_reactions = ca.Function(
            "ground_reactions", [q, u], [forces["r"], forces["l"], torques["r"], torques["l"]],
            ["q", "u"], ["right_force", "left_force", "right_torque", "left_torque"])
        self.mass_matrix = ca.Function("mass_matrix", [q], [mass_matrix(mb, q)], ["q"], ["mass_matrix"])

