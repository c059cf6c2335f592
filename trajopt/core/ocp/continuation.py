"""Mesh continuation: solve on a coarser mesh, interpolate, solve on the requested mesh from there.

Most of an interior-point solve from a rough guess is spent far from the optimum, where a coarse mesh answers the
same questions at a fraction of the cost per iteration (a factorization grows linearly with the mesh). The coarse
solution, interpolated onto the requested mesh (``Solution`` as a guess), starts the fine solve near the optimum, so
it runs with a small initial barrier parameter and needs few iterations. The optimum is the fine mesh's own: the
coarse solve only supplies the starting point.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import Enum

from trajopt.errors import TrajoptInputError
from trajopt.core.ocp.nlp import DiscreteProblem, transcribe
from trajopt.core.ocp.solution import Solution
from trajopt.core.ocp.solver import Ipopt

class SolverRoute(Enum):
    """How a prediction is solved: IPOPT on the requested mesh from the guess, or mesh continuation (IPOPT on half
    the mesh from the guess, then on the requested mesh from that solution; ``MeshContinuation``)."""

    IPOPT = "ipopt"
    MESH_CONTINUATION = "mesh-continuation"


# IPOPT options of the fine solve: its guess is near the optimum, so a small barrier keeps it there.
REFINEMENT_OPTIONS = {"mu_init": 1e-3}


@dataclass(frozen=True)
class MeshContinuation:
    """A solver (pass it where an ``Ipopt`` goes) solving on ``intervals // coarsening`` mesh intervals with
    ``coarse`` (default: ``fine`` itself), then on the requested mesh with ``fine`` plus ``refinement`` options, from
    the coarse solution. When the coarse solve fails, the requested mesh is solved directly from the original guess.

    The returned Solution is the fine mesh's; its ``iterations`` and ``wall_time`` count both solves.
    """

    fine: Ipopt = field(default_factory=Ipopt)
    coarse: Ipopt | None = None
    coarsening: int = 2
    refinement: dict = field(default_factory=lambda: dict(REFINEMENT_OPTIONS))
    minimum_intervals: int = 4  # a mesh this small or smaller is solved directly

    def __post_init__(self):
        if int(self.coarsening) != self.coarsening or self.coarsening < 2:
            raise TrajoptInputError(f"MeshContinuation coarsening must be an integer >= 2, got {self.coarsening!r}")

    @property
    def scale_from_bounds(self) -> bool:
        return self.fine.scale_from_bounds

    def solve(self, discrete: DiscreteProblem, guess=None) -> Solution:
        transcription = discrete.transcription
        coarse_intervals = transcription.intervals // self.coarsening
        if coarse_intervals < self.minimum_intervals:
            return self.fine.solve(discrete, guess)
        coarse_discrete = transcribe(discrete.problem, dataclasses.replace(transcription, intervals=coarse_intervals),
                                     scale_from_bounds=self.scale_from_bounds)
        first = (self.coarse or self.fine).solve(coarse_discrete, guess)
        if not first.success:
            return _counting(self.fine.solve(discrete, guess), first)
        refinement = dataclasses.replace(self.fine, options={**self.fine.options, **self.refinement})
        return _counting(refinement.solve(discrete, first), first)


def _counting(solution: Solution, coarse: Solution) -> Solution:
    """``solution`` with the coarse solve's iterations and seconds added to its own."""
    solution.iterations += coarse.iterations
    solution.wall_time += coarse.wall_time
    return solution


def route_solver(settings: Ipopt, route: SolverRoute, coarse_options: dict | None = None,
                 refinement: dict | None = None) -> Ipopt | MeshContinuation:
    """The solver of ``route``: ``settings`` themselves, or mesh continuation with them (the coarse mesh with
    ``coarse_options`` added, the requested mesh with ``refinement``, default ``REFINEMENT_OPTIONS``)."""
    if route is SolverRoute.IPOPT:
        return settings
    coarse = dataclasses.replace(settings, options={**settings.options, **(coarse_options or {})})
    return MeshContinuation(settings, coarse=coarse,
                            refinement=dict(REFINEMENT_OPTIONS if refinement is None else refinement))
