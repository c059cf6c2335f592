"""Optimal-control core: symbolic Problem, goals, transcriptions, IPOPT solver, Solution, verification."""

from trajopt.core.ocp.continuation import MeshContinuation, SolverRoute, route_solver
from trajopt.core.ocp.goals import (Effort, Endpoint, FinalTime, Goal, Integral, LinearInterpolation,
                                    PiecewisePolynomial, Reference, ResidualPenalty, Tracking)
from trajopt.core.ocp.problem import Problem
from trajopt.core.ocp.residuals import ResidualCoordinates, Residuals
from trajopt.core.ocp.solution import Solution
from trajopt.core.ocp.solver import Guess, Hessian, Ipopt
from trajopt.core.ocp.transcriptions import HermiteSimpson, Radau, Trapezoidal
from trajopt.core.ocp.variables import Free
from trajopt.core.ocp.verification import Verification, verify

__all__ = ["Effort", "Endpoint", "FinalTime", "Free", "Goal", "Guess", "Hessian", "HermiteSimpson", "Integral",
           "Ipopt", "LinearInterpolation", "MeshContinuation", "PiecewisePolynomial", "Problem", "Radau", "Reference",
           "ResidualCoordinates", "ResidualPenalty", "Residuals", "Solution", "SolverRoute", "Tracking", "Trapezoidal",
           "Verification", "route_solver", "verify"]
