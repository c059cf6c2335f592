"""Muscle-driven optimal-control problems of a ``MuscleDrivenModel``: states, controls and dynamics declared on an
``ocp.Problem`` (``problem``), kinematic constraints held with multipliers (``kinematic_constraints``)."""

from trajopt.studies.prediction.kinematic_constraints import ConstrainedAccelerations, constrained_accelerations
from trajopt.studies.prediction.problem import (
    OPENSIM_ACTIVATION_SMOOTHING,
    ExplicitDynamics,
    ImplicitDynamics,
    MuscleDrivenProblem,
    StateBounds,
    VariableLabels,
    VariableScales,
    muscle_driven_problem,
    quaternion_slices,
    resimulate,
)

__all__ = ["ConstrainedAccelerations", "ExplicitDynamics", "ImplicitDynamics", "MuscleDrivenProblem",
           "OPENSIM_ACTIVATION_SMOOTHING", "StateBounds", "VariableLabels", "VariableScales",
           "constrained_accelerations", "muscle_driven_problem", "quaternion_slices", "resimulate"]
