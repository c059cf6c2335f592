"""DeGroote et al. (2016) musculotendon model: curves, constants, activation and musculotendon units; the
Bhargava et al. (2004) and Umberger (2010) muscle metabolic rates."""

from trajopt.core.muscles.activation import ActivationRateControl, FirstOrderActivationDeGroote2016
from trajopt.core.muscles.constants import (
    DEFAULT_CONSTANTS,
    DEGROOTE2016_OPENSIM,
    DEGROOTE2016_PUBLISHED,
    DeGroote2016Constants,
)
from trajopt.core.muscles.curves import (
    fiber_force_length_active_degroote2016,
    fiber_force_length_passive_degroote2016,
    fiber_force_length_passive_inverse_degroote2016,
    fiber_force_velocity_degroote2016,
    fiber_force_velocity_inverse_degroote2016,
    tendon_force_length_degroote2016,
    tendon_force_length_inverse_degroote2016,
)
from trajopt.core.muscles.elastic_tendon import ElasticTendonMuscle
from trajopt.core.muscles.metabolics_bhargava2004 import (
    Bhargava2004Constants,
    Bhargava2004MuscleConstants,
    HuberSmoothing,
    MetabolicInputs,
    MetabolicRates,
    NoSmoothing,
    TanhSmoothing,
    basal_metabolic_rate_bhargava2004,
    fiber_length_dependence_bhargava2004,
    metabolic_rates_bhargava2004,
    metabolics_bhargava2004_function,
    muscle_mass_bhargava2004,
)
from trajopt.core.muscles.metabolics_umberger2010 import (
    Umberger2010Constants,
    Umberger2010MuscleConstants,
    Umberger2010Rates,
    basal_metabolic_rate_umberger2010,
    metabolic_rates_umberger2010,
    metabolics_umberger2010_function,
)
from trajopt.core.muscles.musculotendon import MuscleModel, RigidTendonMuscle
from trajopt.core.muscles.parameters import MuscleParameters

__all__ = [
    "ActivationRateControl",
    "Bhargava2004Constants",
    "Bhargava2004MuscleConstants",
    "DEFAULT_CONSTANTS",
    "DEGROOTE2016_OPENSIM",
    "DEGROOTE2016_PUBLISHED",
    "DeGroote2016Constants",
    "ElasticTendonMuscle",
    "FirstOrderActivationDeGroote2016",
    "HuberSmoothing",
    "MetabolicInputs",
    "MetabolicRates",
    "MuscleModel",
    "MuscleParameters",
    "NoSmoothing",
    "RigidTendonMuscle",
    "TanhSmoothing",
    "Umberger2010Constants",
    "Umberger2010MuscleConstants",
    "Umberger2010Rates",
    "basal_metabolic_rate_bhargava2004",
    "basal_metabolic_rate_umberger2010",
    "fiber_force_length_active_degroote2016",
    "fiber_force_length_passive_degroote2016",
    "fiber_force_length_passive_inverse_degroote2016",
    "fiber_force_velocity_degroote2016",
    "fiber_force_velocity_inverse_degroote2016",
    "fiber_length_dependence_bhargava2004",
    "metabolic_rates_bhargava2004",
    "metabolic_rates_umberger2010",
    "metabolics_bhargava2004_function",
    "metabolics_umberger2010_function",
    "muscle_mass_bhargava2004",
    "tendon_force_length_degroote2016",
    "tendon_force_length_inverse_degroote2016",
]
