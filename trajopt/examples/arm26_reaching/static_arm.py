"""bioptim's ``static_arm`` example set-up on trajopt (pyomeca/bioptim,
``examples/toy_examples/muscle_driven_ocp/static_arm.py`` with ``models/arm26_muscle_driven_ocp.bioMod``).

What is reproduced: arm26 (2 coordinates, 6 muscles), T = 0.5 s, 50 intervals; start at rest at
q = (0.07, 1.4) rad, final state free; coordinate bounds from the bioMod ranges (shoulder -1..π,
elbow 0..π), speeds ±10π rad/s; controls: muscle activations in [0, 1] (no activation dynamics, as
bioptim's muscle-driven dynamics without excitations) and residual torques in [-1, 1] N·m; objective
∫ (Σ τ² + Σ a²) dt + 1000 ‖target - COM_hand(T)‖², with the bioMod's markers ``target`` = (0.15, 0.15, 0.17)
on the base body and ``COM_hand`` = (0, -0.181479, 0) on the forearm; guess q = 1.57, activations 0.5.

What differs: muscle paths are the straight lines through arm26.osim's path points (no wrapping), as
the bioMod has them, but the muscles are OpenSim's DeGroote 2016 rigid-tendon units (biorbd's
``hilldegroote`` muscles use other curves), and the transcription is Hermite-Simpson collocation
instead of RK4 multiple shooting, so objectives are not comparable to the digit; iterations and
wall time are (bioptim's recorded run: ``BIOPTIM_RECORD``; the comparison: results/benchmarks/README.md).
"""

from __future__ import annotations

import warnings
from functools import lru_cache

import casadi as ca
import numpy as np

from trajopt.model.musculoskeletal import MusculoskeletalModel
from trajopt.core.ocp import Effort, Endpoint, Guess, Residuals
from trajopt.model.osim import load_osim
from trajopt.errors import TrajoptInputError
from trajopt.core.multibody import GROUND, body_poses
from trajopt.model.paths.domain import PathDomain
from trajopt.model.paths.domain_report import PathsWithDomain
from trajopt.model.paths.geometric import FixedPathPoint, GeometricPathWarning, geometric_paths
from trajopt.studies.prediction import (
    ExplicitDynamics,
    ImplicitDynamics,
    MuscleDrivenProblem,
    StateBounds,
    muscle_driven_problem,
)

from trajopt.examples.arm26_reaching.reaching import MODEL_FILE

DURATION = 0.5
START = (0.07, 1.4)
TARGET_ON_BASE = (0.15, 0.15, 0.17)  # the bioMod's 'target' marker (base body)
HAND_BODY, HAND_POINT = "r_ulna_radius_hand", (0.0, -0.181479, 0.0)  # the bioMod's 'COM_hand'
BASE_HEIGHT = 0.8  # arm26.osim welds base 0.8 m above ground (the bioMod's base is the ground)
TARGET = (TARGET_ON_BASE[0], TARGET_ON_BASE[1] + BASE_HEIGHT, TARGET_ON_BASE[2])  # in ground
MARKER_WEIGHT = 1000.0
COORDINATE_LOWER, COORDINATE_UPPER = (-1.0, 0.0), (np.pi, np.pi)  # the bioMod's ranges
BIOPTIM_RECORD = {"iterations": 49, "ipopt_seconds": 67.9, "total_seconds": 70.6, "variables": 600}


class StraightLinePaths(PathsWithDomain):
    """``MusclePaths`` from straight segments through the .osim path points (wrap objects ignored).

    Body poses are computed once for all points (one tree pass), which keeps the expression graph an order
    of magnitude smaller than one ``GeometricPath`` per muscle. Only fixed path points are supported.
    """

    def __init__(self, osim):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GeometricPathWarning)
            paths = geometric_paths(osim)
        for path in paths:
            for point in path.points:
                if type(point) is not FixedPathPoint:
                    raise TrajoptInputError(f"{osim.spec.file}: muscle '{path.name}' point '{point.name}' is not a "
                                            f"fixed path point; StraightLinePaths supports fixed points only")
        self.paths = paths
        self.multibody = osim.multibody

    @property
    def muscles(self) -> tuple[str, ...]:
        return tuple(path.name for path in self.paths)

    def check_domain(self, q, coordinates, times=None, where: str = "motion") -> None:
        """Straight-line paths hold at every configuration: nothing to check."""

    @property
    def domain(self) -> PathDomain:
        return PathDomain.everywhere("straight-line paths hold at every configuration")

    def lengths_and_moment_arms_function(self, coordinates):
        model = self.multibody
        names = tuple(model.coordinate_names)
        q = ca.SX.sym("q", len(coordinates))
        q_model = ca.vertcat(*[q[tuple(coordinates).index(n)] for n in names])
        rotations, origins = body_poses(model, q_model)

        def position(point):
            if point.body == GROUND:
                return ca.DM(point.location)
            k = model.body_index(point.body)
            return origins[:, k] + ca.mtimes(rotations[:, 3 * k:3 * k + 3], ca.DM(point.location))

        lengths = []
        for path in self.paths:
            places = [position(point) for point in path.points]
            lengths.append(sum(ca.norm_2(b - a) for a, b in zip(places[:-1], places[1:])))
        lengths = ca.vertcat(*lengths)
        return ca.Function("lengths_and_moment_arms", [q], [lengths, -ca.jacobian(lengths, q)], ["q"],
                           ["lengths", "moment_arms"], {"cse": True})


@lru_cache(maxsize=None)
def load_model() -> MusculoskeletalModel:
    osim = load_osim(MODEL_FILE)
    return MusculoskeletalModel(osim, StraightLinePaths(osim))


def static_arm_problem(implicit: bool = True) -> MuscleDrivenProblem:
    """The static_arm set-up (see the module docstring); ``implicit`` picks the multibody formulation."""
    model = load_model()
    built = muscle_driven_problem(
        model, DURATION,
        coordinates=StateBounds((COORDINATE_LOWER, COORDINATE_UPPER), initial=np.array(START)),
        speeds=StateBounds((-10 * np.pi, 10 * np.pi), initial=0.0),
        activations=StateBounds((0.0, 1.0)),
        activation_dynamics=False,
        residuals=Residuals(optimal_force=1.0, max_control=1.0),
        dynamics=ImplicitDynamics() if implicit else ExplicitDynamics(),
    )
    problem = built.problem
    hand = problem.final(built.point_position(HAND_BODY, HAND_POINT))
    target = built.point_position("base", TARGET_ON_BASE)  # constant: base is welded to ground
    target = ca.DM(ca.Function("target", [built.q], [target])(np.zeros(2)))
    problem.minimize(Effort(built.residuals) + Effort(built.activations)
                     + MARKER_WEIGHT * Endpoint(ca.sumsqr(hand - target)))
    return built


def naive_guess(built: MuscleDrivenProblem) -> Guess:
    """bioptim's guess: q = 1.57 rad everywhere, speeds 0, activations 0.5, residuals 0."""
    guess = Guess([0.0, DURATION]).set(built.q, np.full((2, 2), 1.57))
    guess.set(built.u, np.zeros((2, 2)))
    guess.set(built.activations, np.full((2, 6), 0.5))
    return guess


def describe(built: MuscleDrivenProblem, solution) -> dict:
    """Final hand-target distance and the bioptim record to compare against."""
    hand = np.asarray(solution.value(built.problem.final(built.point_position(HAND_BODY, HAND_POINT)))).flatten()
    return {"final_hand": hand.tolist(), "target": list(TARGET),
            "final_distance_m": float(np.linalg.norm(hand - np.array(TARGET))),
            "variables": int(solution.discrete.layout.size), "bioptim": BIOPTIM_RECORD}
