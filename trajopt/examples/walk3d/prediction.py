"""3D predictive walking on Moco's example3DWalking model: a half gait cycle with a quaternion pelvis.

Model (``load_model``): subject_walk_scaled.osim with the operators of ``OPERATORS``
(``trajopt.model.musculoskeletal.operators``):
DeGroote rigid-tendon muscles without passive fiber force and active force-length width x1.5, min activation and
excitation 0 (Moco's example3DWalking); the pelvis CustomJoint becomes a FreeJoint (unit quaternion, gimbal-lock
free); toe actuators of 50 N·m, controls ±1 (as the example); contact spheres and smooth sphere-half-space forces
from subject_walk_scaled_ContactGeometrySet.xml / ContactForceSet.xml, spheres raised 2 cm (as the example);
muscle paths from subject_walk_scaled_FunctionBasedPathSet.xml; the passive joint moments of
subject_walk_scaled_ExpressionBasedCoordinateForceSet.xml. The patellofemoral joints are welded (their couplers
to the knee go with them): the patellae (0.07 kg each) move with the femurs instead of sliding with the knee;
no muscle path depends on them (the function-based paths use hip, knee and ankle angles only).

``build_problem(quaternion_pelvis=False)`` is the same problem with the .osim's pelvis angles, to compare.

Problem (``build_problem``), PredSim-like: half a gait cycle, duration free in [0.4, 0.8] s; states q (32: pelvis
quaternion and translations, 25 joint angles), u (31), 80 activations; controls 80 excitations and 15 actuator
controls (lumbar 3, arms 10, toes 2); implicit multibody dynamics (31 algebraic accelerations, inverse dynamics =
muscles + actuators + passive moments + contact); bilateral symmetry ``trajopt.studies.gait`` (the state at the end is
the mirror image of the start, pelvis_tx excluded; list, rotation, z translation, lumbar bending and rotation flip
sign, the quaternion maps (w, x, y, z) -> (w, -x, -y, z)); average speed of coordinates.sto's gait cycle;
objective ∫ (Σ e³ + Σ c³ + w Σ q̈²) dt / distance (excitations e, actuator controls c, generalized accelerations q̈;
the actuator and acceleration terms are documented extras, ``ACCELERATION_WEIGHT``); passive lumbar torques
(``LUMBAR_PASSIVE``, PredSim's, which Moco's set lacks); quaternion norm stabilization 50/s.
Guess: coordinates.sto's first half cycle (0.48 s onwards, pelvis
angles converted to the quaternion, pelvis_tx shifted to 0; toe angles 0: the file has none), activations 0.05.
"""

from __future__ import annotations

import dataclasses
import enum
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import casadi as ca
import numpy as np

from trajopt.model.contact import contact_loads_function, osim_contacts
from trajopt.studies.gait.ground_reactions import foot_ground_reactions
from trajopt.studies.gait.muscle_tracking import MuscleDrivenTracking
from trajopt.studies.gait.guess import free_joint_motion, guess_from_coordinates
from trajopt.examples.walk3d.muscle_physiology import predsim_muscle_constants
from trajopt.studies.gait.body_distances import BodyDistance, predsim_body_distances, require_body_distances
from trajopt.studies.gait.passive_joint_torques import FALISSE2022, passive_joint_torques
from trajopt.studies.gait.predsim_cost import PREDSIM_WEIGHTS, PredSimWeights, predsim_cost, total
from trajopt.studies.gait.study import GaitBounds, half_gait_cycle
from trajopt.studies.gait.symmetry import bilateral_symmetry
from trajopt.studies.gait.tracking import TrackingWeights
from trajopt.model.io import MotionProcessor, read_motion, read_table
from trajopt.model.musculoskeletal import MusculoskeletalModel
from trajopt.core.ocp import Effort, Free, Guess, HermiteSimpson, Ipopt
from trajopt.model.osim.expression_forces import (ExpressionCoordinateForce, generalized_forces_function,
                                                  read_expression_forces)
from trajopt.model.paths.function_based_xml import read_function_based_path_set
from trajopt.model.musculoskeletal.operators import (
    AddContactGeometry,
    AddCoordinateActuators,
    DeGrooteMuscles,
    FreeJointInQuaternions,
    WeldJoints,
    load_processed,
)
from trajopt.studies.prediction import MuscleDrivenProblem
from trajopt.table import Table
from trajopt.studies.prediction.tendon_dynamics import (
    PREDSIM_DERIVATIVE_BOUNDS,
    PREDSIM_DERIVATIVE_SCALE,
    PREDSIM_DERIVATIVE_WEIGHT,
    ElasticTendons,
    RigidTendons,
)

HERE = Path(__file__).resolve().parent
MODEL = HERE / "subject_walk_scaled.osim"
COORDINATES = HERE / "coordinates.sto"
PATHS = HERE / "subject_walk_scaled_FunctionBasedPathSet.xml"
PASSIVE = HERE / "subject_walk_scaled_ExpressionBasedCoordinateForceSet.xml"
CONTACT_GEOMETRY = HERE / "subject_walk_scaled_ContactGeometrySet.xml"
CONTACT_FORCES = HERE / "subject_walk_scaled_ContactForceSet.xml"


class FootSpheres(enum.Enum):
    """The feet's contact spheres (both sets under the same names, so one ContactForceSet serves them):
    Moco's example3DWalking's (a calcaneus sphere under the first metatarsal head, ahead of the mtp joint), or
    Falisse et al. 2022's (PredSim) placed on this model's feet, every calcaneus sphere behind the mtp joint."""

    MOCO = CONTACT_GEOMETRY
    PREDSIM = HERE / "predsim_foot_spheres.xml"


GAIT_CYCLE = (0.48, 1.61)  # s, Moco's example3DWalking tracking window: one gait cycle of coordinates.sto
PELVIS = "ground_pelvis"


@dataclass(frozen=True)
class ModelChoices:
    """How subject_walk_scaled.osim is processed: Moco's example3DWalking (the defaults) or PredSim's recipe.

    ``passive_fiber_force``: DeGroote's passive fiber force on (Moco's example ignores it);
    ``active_force_width_scale``: widening of the active force-length curve (Moco's example 1.5, PredSim 1);
    ``passive_toes``: the mtp joints are passive (PredSim's spring 25 N·m/rad, damping 2 N·m·s/rad, Falisse et al.
    2022) instead of driven by 50 N·m actuators; ``foot_spheres``: which contact spheres the feet have
    (``FootSpheres``; both raised 2 cm, as Moco's example); ``predsim_passive_torques``: PredSim's limit torques
    and damping (0.1 N·m·s/rad) on every joint (``trajopt.studies.gait.passive_joint_torques``) instead of Moco's
    ExpressionBasedCoordinateForceSet with PredSim's lumbar torques; ``weld_forearms``: the radioulnar joints welded
    (PredSim's model has no forearm rotation, and this model's has no passive or muscle force to hold it).
    """

    passive_fiber_force: bool = False
    active_force_width_scale: float = 1.5
    passive_toes: bool = False
    foot_spheres: FootSpheres = FootSpheres.MOCO
    predsim_passive_torques: bool = False
    weld_forearms: bool = False

    def operators(self) -> tuple:
        toes = () if self.passive_toes else (AddCoordinateActuators(("mtp_angle_r", "mtp_angle_l"), 50.0, 1.0),)
        forearms = ("radioulnar_r", "radioulnar_l") if self.weld_forearms else ()
        return (WeldJoints(("patellofemoral_r", "patellofemoral_l") + forearms),
                DeGrooteMuscles(ignore_passive_fiber_force=not self.passive_fiber_force,
                                active_force_width_scale=self.active_force_width_scale),
                *toes,
                AddContactGeometry(str(self.foot_spheres.value), str(CONTACT_FORCES), (0.0, 0.02, 0.0)))


MOCO_MODEL = ModelChoices()
# PredSim's passive torques with Falisse et al. 2022's mtp spring; the model's knee flexes positive (PredSim's
# negative).
PREDSIM_PASSIVE = dataclasses.replace(FALISSE2022, mirrored=("knee_angle",))
PREDSIM_MODEL = ModelChoices(passive_fiber_force=True, active_force_width_scale=1.0, passive_toes=True,
                             predsim_passive_torques=True, weld_forearms=True)
COMMON_OPERATORS = MOCO_MODEL.operators()
OPERATORS = COMMON_OPERATORS + (FreeJointInQuaternions(PELVIS),)
# Passive lumbar torques, which Moco's ExpressionBasedCoordinateForceSet lacks: PredSim's exponential limit torques
# (Falisse et al. 2019, after Anderson and Pandy 1999; 3dpredictsim PassiveMoments/PassiveMomentsData.m: trunk
# extension -30..10 deg, bending and rotation +-20 deg) in the form and with the damping (1 N·m·s/rad) of Moco's set.
_PREDSIM = "PredSim passive trunk torques (Falisse et al. 2019)"
LUMBAR_PASSIVE = (
    ExpressionCoordinateForce("lumbar_extension_passive", "lumbar_extension",
                              "-0.35*exp(30.72*(q-0.17))+0.25*exp(-20.36*(q+0.5236))-1.0*qdot", _PREDSIM),
    ExpressionCoordinateForce("lumbar_bending_passive", "lumbar_bending",
                              "-0.25*exp(20.36*(q-0.3491))+0.25*exp(-20.36*(q+0.3491))-1.0*qdot", _PREDSIM),
    ExpressionCoordinateForce("lumbar_rotation_passive", "lumbar_rotation",
                              "-0.25*exp(20.36*(q-0.3491))+0.25*exp(-20.36*(q+0.3491))-1.0*qdot", _PREDSIM),
)
# Weight w of ∫ Σ q̈² dt / distance beside Moco's example's effort (PredSim penalizes joint accelerations too):
# without it the 50-interval solve from the coordinates.sto guess does not converge; larger weights stiffen the
# swing knee (trajopt/examples/walk3d/README.md).
ACCELERATION_WEIGHT = 1e-6
SPEED_BOUND = 20.0
MAX_ACCELERATION = 1000.0
NORM_STABILIZATION = 50.0


@dataclass(frozen=True, eq=False)
class Walk3dModel:
    """The processed model, its contacts, passive moments, symmetry and per-foot ground reactions."""

    musculoskeletal: MusculoskeletalModel
    original: object  # the same model with the pelvis CustomJoint (angles), to convert coordinates.sto
    contacts: tuple
    passive: ca.Function  # (q, u) -> generalized forces of the passive joint elements
    limit_torques: ca.Function | None  # (q, u) -> PredSim's limit torques (its cost term), None with Moco's set
    contact_loads: ca.Function
    ground_reactions: ca.Function
    symmetry: object


def predsim_passive_torques(choices: ModelChoices):
    """PredSim's passive joint torques of a model processed as ``choices`` say: the mtp spring only on passive
    toes."""
    return PREDSIM_PASSIVE if choices.passive_toes else dataclasses.replace(PREDSIM_PASSIVE, springs=())


@lru_cache(maxsize=None)
def load_model(quaternion_pelvis: bool = True, choices: ModelChoices = MOCO_MODEL) -> Walk3dModel:
    """The model with the pelvis as a quaternion FreeJoint, or (False) as the .osim's CustomJoint with three angles
    (tilt about z, list about x, rotation about y: singular at list = ±90°), processed as ``choices`` say."""
    operators = choices.operators()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the .osim's visual elements and Millard curve details, listed elsewhere
        osim, couplings = load_processed(MODEL, operators + ((FreeJointInQuaternions(PELVIS),) if quaternion_pelvis
                                                             else ()))
        original, _ = load_processed(MODEL, operators)
    assert not couplings  # both patellofemoral couplers went with their welded joints
    for muscle in osim.spec.muscles:  # Moco's example: min control and activation 0
        object.__setattr__(muscle, "min_control", 0.0)
    paths = read_function_based_path_set(PATHS)
    model = MusculoskeletalModel(osim, paths)
    mb = model.multibody
    contacts = osim_contacts(osim)
    if choices.predsim_passive_torques:
        torques = passive_joint_torques(mb, predsim_passive_torques(choices))
        passive, limit_torques = torques.generalized_forces, torques.limit_torques
    else:
        passive = generalized_forces_function(mb, read_expression_forces(PASSIVE) + LUMBAR_PASSIVE)
        limit_torques = None
    return Walk3dModel(model, original.multibody, contacts, passive, limit_torques,
                       contact_loads_function(mb, contacts), foot_ground_reactions(mb, contacts),
                       bilateral_symmetry(model, contacts=contacts))


def reference_motion(start: float = GAIT_CYCLE[0], duration: float | None = None, quaternion_pelvis: bool = True,
                     choices: ModelChoices = MOCO_MODEL):
    """(time from 0, q) of coordinates.sto from ``start`` over ``duration`` (default half the gait cycle), pelvis_tx
    shifted to start at 0, in the coordinates of the model processed as ``choices`` say (pelvis angles converted to
    the quaternion)."""
    model = load_model(quaternion_pelvis, choices)
    mb = model.musculoskeletal.multibody
    duration = (GAIT_CYCLE[1] - GAIT_CYCLE[0]) / 2 if duration is None else duration
    motion = read_motion(COORDINATES)
    names = tuple(n for n in model.original.coordinate_names if n in motion.labels)  # no toe angles: 0
    motion = motion.select(names)
    keep = (motion.time >= start - 1e-9) & (motion.time <= start + duration + 1e-9)
    if quaternion_pelvis:
        q = free_joint_motion(model.original, mb, PELVIS, names, motion.data[keep], fill_missing=True)
    else:
        q = np.column_stack([motion.data[keep][:, names.index(n)] if n in names else
                             np.full(int(keep.sum()), mb.default_q()[i]) for i, n in enumerate(mb.coordinate_names)])
    tx = mb.coordinate_index("pelvis_tx")
    q[:, tx] -= q[0, tx]
    return motion.time[keep] - motion.time[keep][0], q


def cycle_speed() -> float:
    """Average walking speed of coordinates.sto over the gait cycle (pelvis_tx displacement / duration)."""
    motion = read_motion(COORDINATES, coordinates=("pelvis_tx",))
    tx = np.interp(GAIT_CYCLE, motion.time, motion.data[:, 0])
    return float((tx[1] - tx[0]) / (GAIT_CYCLE[1] - GAIT_CYCLE[0]))


@dataclass(frozen=True)
class Walk3dProblem:
    muscle_driven: MuscleDrivenProblem
    model: Walk3dModel
    speed: float
    intervals: int
    recipe: Recipe | None = None  # the Recipe it was built with
    cost_terms: dict | None = None  # {name: goal} of PredSim's cost, to report each term

    @property
    def problem(self):
        return self.muscle_driven.problem

    @property
    def transcription(self) -> HermiteSimpson:
        return HermiteSimpson(intervals=self.intervals)

    @property
    def quaternion_pelvis(self) -> bool:
        return self.model.musculoskeletal.multibody.nq != self.model.musculoskeletal.multibody.nv

    @property
    def bounds(self) -> GaitBounds:
        return gait_bounds(self.model, self.recipe or MOCO_RECIPE)

    def reference_guess(self) -> Guess:
        time, q = reference_motion(quaternion_pelvis=self.quaternion_pelvis,
                                   choices=MOCO_MODEL if self.recipe is None else self.recipe.model)
        return guess_from_coordinates(self.muscle_driven, time, q)


PREDSIM_ACTUATOR_TORQUE = 150.0  # N·m per unit excitation of PredSim's arm actuators


@dataclass(frozen=True)
class Recipe:
    """What is predicted: the model's processing, the tendons and the cost.

    ``MOCO_RECIPE`` is Moco's example3DWalking problem: ∫ (Σ e³ + Σ c³ + w Σ q̈²) dt / distance with rigid tendons
    on Moco's processed model, activations from 0. ``PREDSIM_RECIPE`` is PredSim's (Falisse et al. 2019, 2022):
    its cost terms and weights (``trajopt.studies.gait.predsim_cost``: metabolic energy rate squared per muscle over
    body mass, activations squared, joint accelerations of the legs, pelvis and trunk, passive limit torques, actuator
    excitations, slack controls), compliant tendons (De Groote's implicit normalized tendon force, PredSim's
    stiffness kT 35 and derivative bounds), passive fiber forces, passive joint torques and passive toes,
    activations from PredSim's 0.05, its distance constraints between the feet, tibias, toes and hands and thighs,
    its per-muscle specific tensions and slow-twitch ratios in the metabolic rates, and no forearm rotation (its
    model has none). ``PREDSIM_ADAPTED_RECIPE`` is PredSim's recipe with two choices for a model like this one,
    whose muscles are stronger than those of PredSim's models (Rajagopal's forces: soleus 6195 N against 3549 N)
    and whose trunk is moved by torque actuators instead of muscles: activations from 0 (a 0.05 floor holds
    hundreds of newtons in the swing leg's soleus, which the tibialis anterior then fights), and the trunk
    actuators priced at 1000 N·m per unit excitation instead of the arms' 150 (trunk muscles, which the actuators
    stand for, cost far less per N·m than PredSim's excitation term weighted 1e6); and three settings chosen by
    the ablation of the recipe (``trajopt bench walk3d-ablation``): compliant triceps surae tendons (PredSim's
    gait1018 setting, ``COMPLIANT_TRICEPS_SURAE``), the metabolic energy weighted 350 instead of 500, and the arm
    actuators' excitations as the model defines them (torque over their own optimal force, 50 N·m, instead of over
    PredSim's 150): priced as PredSim's, the arms swing wide and stand in for the trunk's counter-rotation.
    """

    model: ModelChoices = MOCO_MODEL
    elastic_tendons: bool = False
    predsim_cost: bool = False
    weights: PredSimWeights = PREDSIM_WEIGHTS
    min_activation: float = 0.0
    tendon_stiffness: tuple[tuple[str, float], ...] = ()  # (muscle, kT) overrides of compliant tendons
    # PredSim's distance constraints (trajopt.studies.gait.body_distances)
    body_distances: tuple[BodyDistance, ...] = ()
    predsim_muscle_physiology: bool = False  # PredSim's specific tensions and slow-twitch ratios (else 0.25 MPa, 0.5)
    coordinate_bounds: tuple[tuple[str, tuple[float, float]], ...] = ()  # (name without side, bounds) over PredSim's
    # N·m per unit excitation of the lumbar actuators in the actuator term (PredSim's models move the trunk with
    # muscles; this model has torque actuators there)
    trunk_actuator_torque: float = PREDSIM_ACTUATOR_TORQUE
    # N·m per unit excitation of the arm actuators in the actuator term (PredSim's 150; this model's arm actuators
    # have an optimal force of 50 N·m)
    arm_actuator_torque: float = PREDSIM_ACTUATOR_TORQUE

    def metabolic_constants(self, muscle_names) -> tuple | None:
        """Per-muscle Bhargava 2004 constants of the metabolic rates (None: OpenSim's defaults for every muscle)."""
        return predsim_muscle_constants(muscle_names) if self.predsim_muscle_physiology else None


MOCO_RECIPE = Recipe()
PREDSIM_RECIPE = Recipe(PREDSIM_MODEL, elastic_tendons=True, predsim_cost=True, min_activation=0.05,
                        body_distances=predsim_body_distances(), predsim_muscle_physiology=True)
# A compliant triceps surae: half PredSim's default tendon stiffness (kT 17.5), as PredSim's gait1018 settings
# (Subjects/gait1018/settings_gait1018.m).
COMPLIANT_TRICEPS_SURAE = tuple((f"{muscle}_{side}", 17.5) for muscle in ("soleus", "gasmed", "gaslat")
                                for side in "rl")
PREDSIM_ADAPTED_RECIPE = dataclasses.replace(
    PREDSIM_RECIPE, min_activation=0.0, trunk_actuator_torque=1000.0, tendon_stiffness=COMPLIANT_TRICEPS_SURAE,
    weights=dataclasses.replace(PREDSIM_WEIGHTS, metabolic_energy=350.0), arm_actuator_torque=50.0)
# PredSim's tendon dynamics: the derivative of the normalized tendon force a control in [-100, 100] 1/s with a small
# weight (trajopt.studies.prediction.tendon_dynamics); each muscle keeps the model's tendon strain 0.049 (stiffness kT
# 36.6 with OpenSim's curve constants; PredSim's default is 35).
PREDSIM_TENDONS = ElasticTendons(derivative_bounds=PREDSIM_DERIVATIVE_BOUNDS,
                                 derivative_weight=PREDSIM_DERIVATIVE_WEIGHT, derivative_scale=PREDSIM_DERIVATIVE_SCALE)

# PredSim's default bounds of the coordinates it walks with (OCP/Default_Coordinate_Bounds.csv, KU Leuven PredSim
# commit 186cb70): the accelerations' bounds scale the joint-acceleration term (PredSim weighs qdd / max|bound|),
# and the positions bound the pelvis translations, hips, subtalar joints, trunk and arms (rad, m; knee flexion negative
# there, positive in this model, which only flips the sign of its symmetric scale).
PREDSIM_ACCELERATION_SCALES = {
    "pelvis_tilt": 19.79, "pelvis_list": 92.03, "pelvis_rotation": 61.55, "pelvis_tx": 61.37, "pelvis_ty": 16.87,
    "pelvis_tz": 5.91, "hip_flexion": 201.4, "hip_adduction": 145.5, "hip_rotation": 136.9, "knee_angle": 441.8,
    "ankle_angle": 430.3, "subtalar_angle": 232.9, "mtp_angle": 500.0, "lumbar_extension": 52.84,
    "lumbar_bending": 109.7, "lumbar_rotation": 38.75}
PREDSIM_COORDINATE_BOUNDS = {
    "pelvis_ty": (0.4699, 1.1277), "pelvis_tz": (-0.1, 0.1), "hip_adduction": (-0.6388, 0.7187),
    "hip_rotation": (-0.5074, 0.4716), "subtalar_angle": (-0.8202, 0.9042), "lumbar_extension": (-0.2796, 0.0663),
    "lumbar_bending": (-0.4457, 0.5308), "lumbar_rotation": (-0.6654, 0.6585), "arm_flex": (-0.6052, 0.5503),
    "elbow_flex": (0.0, 2.0064), "arm_add": (-0.6, 0.6), "arm_rot": (-0.6, 0.6)}
# This model's arm adduction and rotation are zero elsewhere than in PredSim's model (the subject's arm rotation
# lies at -0.43 to -0.02 rad, outside PredSim's -0.23 to 0.34): they get +-0.6 rad, about PredSim's widths.
# PREDSIM_ARM_WIDTHS: PredSim's widths (0.51 rad of adduction, 0.57 of rotation) about this model's hanging arm
# (the subject's arm adduction -0.14 to -0.05 rad, rotation -0.43 to -0.02).
PREDSIM_ARM_WIDTHS = (("arm_add", (-0.35, 0.16)), ("arm_rot", (-0.5, 0.07)))
# The quaternion pelvis's angular velocity components (pelvis frame): about x the list, y the rotation, z the tilt.
PELVIS_ANGULAR_SPEEDS = {"ground_pelvis_wx": "pelvis_list", "ground_pelvis_wy": "pelvis_rotation",
                         "ground_pelvis_wz": "pelvis_tilt"}


def _actuator_price(recipe: Recipe, coordinate: str) -> float:
    """N·m per unit excitation of the actuator of ``coordinate`` in PredSim's actuator term: the trunk's and the
    arms' as the recipe says, others (the toes' when they are actuated) PredSim's."""
    if coordinate.startswith("lumbar_"):
        return recipe.trunk_actuator_torque
    if coordinate.startswith("mtp_"):
        return PREDSIM_ACTUATOR_TORQUE
    return recipe.arm_actuator_torque


def _base(name: str) -> str:
    return PELVIS_ANGULAR_SPEEDS.get(name, name[:-2] if name.endswith(("_r", "_l")) else name)


def _scaled_leg_and_trunk_accelerations(built) -> ca.SX:
    """The accelerations of every coordinate but the arms' (PredSim leaves them out), each over PredSim's scale."""
    names = built.model.speed_names
    return ca.vertcat(*[built.accelerations[k] / PREDSIM_ACCELERATION_SCALES[_base(name)]
                        for k, name in enumerate(names) if _base(name) in PREDSIM_ACCELERATION_SCALES])


def _predsim_bounds(model: Walk3dModel, overrides: dict) -> dict:
    """PredSim's coordinate bounds (and ``overrides``, by name without side) within the model's ranges, by model
    coordinate name."""
    lower, upper = model.musculoskeletal.coordinate_bounds
    names = model.musculoskeletal.coordinate_names
    bounds = {**PREDSIM_COORDINATE_BOUNDS, **overrides}
    return {name: (max(lower[k], bounds[_base(name)][0]), min(upper[k], bounds[_base(name)][1]))
            for k, name in enumerate(names) if _base(name) in bounds}


def gait_bounds(model: Walk3dModel, recipe: Recipe) -> GaitBounds:
    """The bounds of the recipe's prediction: PredSim's coordinate bounds with its cost, the walking direction's
    translation, speeds, accelerations and the recipe's least activation."""
    return GaitBounds({**(_predsim_bounds(model, dict(recipe.coordinate_bounds)) if recipe.predsim_cost else {}),
                       "pelvis_tx": (-1.0, 5.0)},
                      (-SPEED_BOUND, SPEED_BOUND), MAX_ACCELERATION, (recipe.min_activation, 1.0))


def build_problem(intervals: int = 50, speed: float | None = None, duration=Free(0.4, 0.8),
                  effort: bool = True, quaternion_pelvis: bool = True,
                  acceleration_weight: float = ACCELERATION_WEIGHT, recipe: Recipe = MOCO_RECIPE) -> Walk3dProblem:
    """The predictive half gait cycle (module docstring) on ``intervals`` Hermite-Simpson intervals; with
    ``quaternion_pelvis`` False the same problem with the .osim's pelvis angles (to compare); ``effort`` False
    leaves the objective to the caller; ``recipe``: Moco's example (default) or PredSim's (``Recipe``)."""
    model = load_model(quaternion_pelvis, recipe.model)
    speed = cycle_speed() if speed is None else float(speed)
    walk = half_gait_cycle(
        model.musculoskeletal, model.contacts, duration=duration, symmetry=model.symmetry,
        passive=model.passive, quaternion_norm_stabilization=NORM_STABILIZATION,
        bounds=gait_bounds(model, recipe),
        tendons=dataclasses.replace(PREDSIM_TENDONS, tendon_stiffness=dict(recipe.tendon_stiffness))
        if recipe.elastic_tendons else RigidTendons())
    built = walk.muscle_driven
    require_body_distances(built, recipe.body_distances)
    distance = walk.walk_at(speed)
    terms = {}
    if effort and recipe.predsim_cost:
        actuators = built.model.coordinate_actuators
        torques = built.actuator_controls * ca.DM([a.optimal_force for a in actuators])
        # PredSim's torque actuators are excitations of 150 N·m; its slack controls are the activation derivatives
        # (trajopt's excitations stand in) and the tendon-force derivatives, whose term the elastic tendons add.
        terms = predsim_cost(built, distance, joint_accelerations=_scaled_leg_and_trunk_accelerations(built),
                             passive_torques=None if model.limit_torques is None else
                             model.limit_torques(built.q, built.u),
                             actuator_excitations=torques / ca.DM([
                                 _actuator_price(recipe, a.coordinate) for a in actuators]),
                             slack_controls=built.excitations, weights=recipe.weights,
                             metabolics=recipe.metabolic_constants(built.model.muscle_names))
        built.problem.minimize(total(terms))
    elif effort:
        controls = ca.vertcat(built.excitations, built.actuator_controls)
        built.problem.minimize(Effort(controls, power=3, per_distance=distance))
        if acceleration_weight > 0:
            built.problem.minimize(acceleration_weight * Effort(built.accelerations, power=2, per_distance=distance))
    return Walk3dProblem(built, model, speed, int(intervals), recipe, terms)


def tracking_study(walk: Walk3dProblem) -> MuscleDrivenTracking:
    """``trajopt.studies.gait.muscle_tracking.MuscleDrivenTracking`` of coordinates.sto's first half cycle (times and
    pelvis_tx from 0, the pelvis as ``walk``'s model has it) and grf_walk.mot's forces (x, y, z, both feet, / body
    weight) on ``walk``'s model with its contacts, passive moments, bounds and symmetric ends, rigid tendons: its
    solution on ``walk.transcription`` is a guess for the prediction that already walks on the contact model."""

    half = (GAIT_CYCLE[1] - GAIT_CYCLE[0]) / 2
    model = walk.model
    time, q = reference_motion(duration=half + _MARGIN, quaternion_pelvis=walk.quaternion_pelvis,
                               choices=MOCO_MODEL if walk.recipe is None else walk.recipe.model)
    mb = model.musculoskeletal.multibody
    grf = read_table(HERE / "grf_walk.mot")
    keep = (grf.time >= GAIT_CYCLE[0] - _MARGIN) & (grf.time <= GAIT_CYCLE[0] + half + _MARGIN)
    grf = Table(grf.time[keep] - GAIT_CYCLE[0], grf.labels, grf.data[keep], name="grf_walk")
    weights = TrackingWeights(coordinates=10.0, speeds=0.0, ground_reactions=1.0, excitations=1.0,
                              actuator_controls=1.0)
    return MuscleDrivenTracking(
        model.musculoskeletal, MotionProcessor(Table(time, tuple(mb.coordinate_names), q), window=(0.0, half)),
        contacts=model.contacts, ground_reactions=grf, weights=weights, mesh_interval=half / walk.intervals,
        bounds=walk.bounds, passive=model.passive, symmetry=model.symmetry, start_at_zero="pelvis_tx",
        quaternion_norm_stabilization=NORM_STABILIZATION if walk.quaternion_pelvis else 0.0)


_MARGIN = 0.02  # s of data beyond the tracked half cycle, so that it covers the window


# IPOPT's adaptive barrier update: with the default monotone update the solve from the coordinates.sto guess stalls
# with the arms resting on their passive stops (trajopt/examples/walk3d/README.md).
BARRIER = {"mu_strategy": "adaptive"}
# From a converged coarser solution (interpolated): start the barrier small and keep active bounds active.
WARM_START_OPTIONS = {"mu_init": 1e-4, "bound_push": 1e-8, "bound_frac": 1e-8}


def solver_settings(print_level: int = 5, max_iterations: int = 1000, tol: float = 1e-4, warm: bool = False,
                    threads: int = 1, compiled: bool = False) -> Ipopt:
    """Exact Hessian (trajopt's default), tolerances as Moco's 2D example (1e-4), adaptive barrier update;
    ``threads``: BLAS threads of the linear algebra (``Ipopt.threads``); ``compiled``: NLP functions compiled
    to C and cached (``Ipopt.compiled``; about 5 min of compiling the first time, 0.33 s less per iteration)."""
    return Ipopt(tol=tol, max_iterations=max_iterations, print_level=print_level, threads=threads, compiled=compiled,
                 options={"constr_viol_tol": 1e-4, **BARRIER, **(WARM_START_OPTIONS if warm else {})})
