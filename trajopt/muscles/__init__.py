"""DeGroote et al. (2016) musculotendon model: curves, constants, activation and musculotendon units."""

from trajopt.muscles.activation import ActivationRateControl, FirstOrderActivationDeGroote2016
from trajopt.muscles.constants import (
    DEFAULT_CONSTANTS,
    DEGROOTE2016_OPENSIM,
    DEGROOTE2016_PUBLISHED,
    DeGroote2016Constants,
)
from trajopt.muscles.curves import (
    fiber_force_length_active_degroote2016,
    fiber_force_length_passive_degroote2016,
    fiber_force_length_passive_inverse_degroote2016,
    fiber_force_velocity_degroote2016,
    fiber_force_velocity_inverse_degroote2016,
    tendon_force_length_degroote2016,
    tendon_force_length_inverse_degroote2016,
)
from trajopt.muscles.elastic_tendon import ElasticTendonMuscle
from trajopt.muscles.musculotendon import MuscleModel, RigidTendonMuscle
from trajopt.muscles.parameters import MuscleParameters

__all__ = [
    "ActivationRateControl",
    "DEFAULT_CONSTANTS",
    "DEGROOTE2016_OPENSIM",
    "DEGROOTE2016_PUBLISHED",
    "DeGroote2016Constants",
    "ElasticTendonMuscle",
    "FirstOrderActivationDeGroote2016",
    "MuscleModel",
    "MuscleParameters",
    "RigidTendonMuscle",
    "fiber_force_length_active_degroote2016",
    "fiber_force_length_passive_degroote2016",
    "fiber_force_length_passive_inverse_degroote2016",
    "fiber_force_velocity_degroote2016",
    "fiber_force_velocity_inverse_degroote2016",
    "tendon_force_length_degroote2016",
    "tendon_force_length_inverse_degroote2016",
]
