"""trajopt: optimal control of musculoskeletal models on CasADi and IPOPT.

The names here are the public surface; the packages hold the rest:
``trajopt.muscles`` (DeGroote 2016 musculotendon model), ``trajopt.multibody`` (symbolic rigid-body
dynamics), ``trajopt.osim`` (OpenSim model import), ``trajopt.paths`` (muscle paths and polynomial
surrogates), ``trajopt.ocp`` (optimal control), ``trajopt.prediction`` (muscle-driven optimal-control problems),
``trajopt.contact`` (smooth sphere-ground contact), ``trajopt.analysis`` (inverse dynamics, static
optimization), ``trajopt.io`` (motion and table files).
"""

from trajopt.analysis.inverse_dynamics import motion_inverse_dynamics
from trajopt.analysis.frame_optimization import FrameGuess, Frames
from trajopt.analysis.reaction_goal import JointReactionGoal
from trajopt.analysis.static_optimization import StaticOptimization, StaticOptimizationResult
from trajopt.errors import ModelFileError, MotionFileError, TrajoptInputError
from trajopt.io import MotionProcessor, Table, read_motion, read_table, write_csv, write_sto
from trajopt.muscles import (
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
from trajopt.ocp import (
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
from trajopt.musculoskeletal import MusculoskeletalModel
from trajopt.multibody import BodyAxes, ReactionAxes
from trajopt.osim import OsimModel, load_osim
from trajopt.paths.polynomial import PolynomialPath, PolynomialPaths
from trajopt.prediction import (
    ExplicitDynamics,
    ImplicitDynamics,
    MuscleDrivenProblem,
    StateBounds,
    muscle_driven_problem,
)
from trajopt.prediction.tendon_dynamics import ElasticTendons, RigidTendons

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
