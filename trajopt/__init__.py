"""trajopt: optimal control of musculoskeletal models on CasADi and IPOPT.

The names here are the public surface; the packages hold the rest:
``trajopt.core.muscles`` (DeGroote 2016 musculotendon model), ``trajopt.core.multibody`` (symbolic rigid-body
dynamics), ``trajopt.model.osim`` (OpenSim model import), ``trajopt.model.paths`` (muscle paths and polynomial
surrogates), ``trajopt.core.ocp`` (optimal control), ``trajopt.studies.prediction`` (muscle-driven optimal-control
problems), ``trajopt.model.contact`` (smooth sphere-ground contact), ``trajopt.studies.analysis`` (inverse dynamics,
static optimization), ``trajopt.model.io`` (motion and table files).
"""

from trajopt.studies.analysis.inverse_dynamics import motion_inverse_dynamics
from trajopt.studies.analysis.frame_optimization import FrameGuess, Frames
from trajopt.studies.analysis.reaction_goal import JointReactionGoal
from trajopt.studies.analysis.static_optimization import StaticOptimization, StaticOptimizationResult
from trajopt.errors import ModelFileError, MotionFileError, TrajoptInputError
from trajopt.model.io import MotionProcessor, Table, read_motion, read_table, write_csv, write_sto
from trajopt.core.muscles import (
    DEGROOTE2016_OPENSIM,
    DEGROOTE2016_PUBLISHED,
    Bhargava2004Constants,
    Bhargava2004MuscleConstants,
    ElasticTendonMuscle,
    FirstOrderActivationDeGroote2016,
    MuscleParameters,
    RigidTendonMuscle,
    metabolics_bhargava2004_function,
)
from trajopt.core.ocp import (
    Effort,
    Endpoint,
    FinalTime,
    Free,
    Guess,
    HermiteSimpson,
    Hessian,
    Integral,
    Ipopt,
    LinearInterpolation,
    MeshContinuation,
    PiecewisePolynomial,
    Problem,
    Radau,
    ResidualCoordinates,
    ResidualPenalty,
    Residuals,
    Solution,
    Tracking,
    Trapezoidal,
)
from trajopt.model.musculoskeletal import MusculoskeletalModel
from trajopt.core.multibody import BodyAxes, ReactionAxes
from trajopt.model.osim import OsimModel, load_osim
from trajopt.model.paths.polynomial import PolynomialPath, PolynomialPaths
from trajopt.studies.prediction import (
    ExplicitDynamics,
    ImplicitDynamics,
    MuscleDrivenProblem,
    StateBounds,
    muscle_driven_problem,
)
from trajopt.studies.prediction.tendon_dynamics import ElasticTendons, RigidTendons

__version__ = "0.1.0"

__all__ = [
    "Bhargava2004Constants", "Bhargava2004MuscleConstants", "metabolics_bhargava2004_function",
    "DEGROOTE2016_OPENSIM", "DEGROOTE2016_PUBLISHED", "Effort", "ElasticTendonMuscle", "Endpoint", "FinalTime",
    "FirstOrderActivationDeGroote2016", "Free", "Guess", "HermiteSimpson", "Integral", "Ipopt", "MeshContinuation",
    "ModelFileError",
    "MotionFileError", "MuscleParameters", "OsimModel", "PolynomialPath", "PolynomialPaths", "Problem", "Radau",
    "ResidualPenalty", "RigidTendonMuscle", "Solution", "Table", "Tracking", "Trapezoidal", "TrajoptInputError",
    "MusculoskeletalModel", "Residuals", "StaticOptimization", "StaticOptimizationResult", "motion_inverse_dynamics",
    "ExplicitDynamics", "ImplicitDynamics", "MuscleDrivenProblem", "StateBounds", "FrameGuess", "Frames", "Hessian",
    "MotionProcessor", "ReactionAxes", "BodyAxes", "ResidualCoordinates",
    "ElasticTendons", "RigidTendons", "LinearInterpolation", "PiecewisePolynomial", "JointReactionGoal",
    "muscle_driven_problem", "load_osim", "read_motion", "read_table", "write_csv",
    "write_sto",
]
