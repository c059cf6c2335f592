"""Optimal-control core: symbolic Problem, goals, transcriptions, IPOPT solver, Solution, verification."""

from trajopt.ocp.continuation import MeshContinuation, SolverRoute, route_solver
from trajopt.ocp.goals import (Effort, Endpoint, FinalTime, Goal, Integral, LinearInterpolation, PiecewisePolynomial,
                               Reference, ResidualPenalty, Tracking)
from trajopt.ocp.problem import Problem
from trajopt.ocp.residuals import ResidualCoordinates, Residuals
from trajopt.ocp.solution import Solution
from trajopt.ocp.solver import Guess, Hessian, Ipopt
from trajopt.ocp.transcriptions import HermiteSimpson, Radau, Trapezoidal
from trajopt.ocp.variables import Free
from trajopt.ocp.verification import Verification, verify

__all__ = ["Effort", "Endpoint", "FinalTime", "Free", "Goal", "Guess", "Hessian", "HermiteSimpson", "Integral",
           "Ipopt", "LinearInterpolation", "MeshContinuation", "PiecewisePolynomial", "Problem", "Radau", "Reference",
           "ResidualCoordinates", "ResidualPenalty", "Residuals", "Solution", "SolverRoute", "Tracking", "Trapezoidal",
           "Verification", "route_solver", "verify"]
