"""OpenSim's function-based muscle paths: FunctionBasedPath with a MultivariatePolynomialFunction length.

OpenSim 4.6's ``PolynomialPathFitter`` writes, per muscle, the coordinates the path depends on and a
``MultivariatePolynomialFunction`` of them (``dimension``, ``order``, ``coefficients``). Its terms are every
monomial whose exponents sum to at most ``order``, enumerated with the first coordinate's exponent in the
outermost loop and the last coordinate's innermost, each ascending (``MultivariatePolynomialFunction.cpp``):
for (x, y) and order 2 the terms are 1, y, y², x, xy, x². Moment arms are −∂l/∂q and the lengthening speed
∂l/∂q q̇, as OpenSim computes them when the file gives no moment-arm or speed functions.

``FunctionBasedPaths`` satisfies ``trajopt.model.musculoskeletal.MusclePaths``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from math import comb
from pathlib import Path

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.model.paths.domain import PathDomain
from trajopt.model.paths.domain_report import PathsWithDomain


def polynomial_exponents(dimension: int, order: int) -> np.ndarray:
    """(terms, dimension) exponents in OpenSim's MultivariatePolynomialFunction order."""
    rows: list[list[int]] = []

    def extend(prefix: list[int], remaining: int):
        if len(prefix) == dimension:
            rows.append(prefix)
            return
        for power in range(remaining + 1):
            extend(prefix + [power], remaining - power)

    extend([], order)
    return np.array(rows, dtype=int).reshape(len(rows), dimension)


@dataclass(frozen=True)
class MultivariatePolynomial:
    """OpenSim's MultivariatePolynomialFunction: Σ c_k Π x_i^e_ki over ``polynomial_exponents``."""

    dimension: int
    order: int
    coefficients: tuple[float, ...]

    def __post_init__(self):
        expected = comb(self.dimension + self.order, self.order)
        if len(self.coefficients) != expected:
            raise TrajoptInputError(f"MultivariatePolynomialFunction of dimension {self.dimension} and order "
                                    f"{self.order} needs {expected} coefficients, got {len(self.coefficients)}")

    def expression(self, x):
        """The polynomial at the SX column ``x`` (dimension entries): every nonzero term c Π x_i^e_i at once,
        as vectors (a few casadi calls per coordinate instead of a few per term), summed in the terms' order."""
        coefficients = np.asarray(self.coefficients, dtype=float)
        kept = coefficients != 0.0
        if not np.any(kept):
            return 0
        exponents = polynomial_exponents(self.dimension, self.order)[kept]
        terms = ca.DM(coefficients[kept])
        for i in range(self.dimension):
            if np.any(exponents[:, i]):
                terms = terms * ca.repmat(x[i], exponents.shape[0], 1) ** ca.DM(exponents[:, i])
        return ca.sum1(terms)


@dataclass(frozen=True)
class FunctionBasedPath:
    """One muscle's path: its length as a polynomial of ``coordinates`` (names, in the function's order)."""

    muscle: str
    coordinates: tuple[str, ...]
    length: MultivariatePolynomial


class FunctionBasedPaths(PathsWithDomain):
    """A set of function-based paths, usable wherever polynomial paths are (``MusclePaths``)."""

    def __init__(self, paths, source: str = ""):
        self.paths = {p.muscle: p for p in paths}
        self.source = source

    @property
    def muscles(self) -> tuple[str, ...]:
        return tuple(self.paths)

    def __getitem__(self, muscle: str) -> FunctionBasedPath:
        return self.paths[muscle]

    def lengths_and_moment_arms_function(self, coordinates: tuple[str, ...]) -> ca.Function:
        """q (model coordinates, in ``coordinates`` order) -> (lengths, −∂l/∂q), one row per muscle."""
        coordinates = tuple(coordinates)
        for path in self.paths.values():
            missing = [c for c in path.coordinates if c not in coordinates]
            if missing:
                raise TrajoptInputError(f"{self.source or 'function-based paths'}: path of '{path.muscle}' depends "
                                        f"on {missing}, which the model does not have as coordinates")
        q = ca.SX.sym("q", len(coordinates))
        lengths = ca.vertcat(*[p.length.expression(ca.vertcat(*[q[coordinates.index(c)] for c in p.coordinates]))
                               for p in self.paths.values()])
        return ca.Function("function_based_paths", [q], [lengths, -ca.jacobian(lengths, q)], ["q"],
                           ["lengths", "moment_arms"])

    def check_domain(self, q, coordinates, times=None, where: str = "motion") -> None:
        """OpenSim's FunctionBasedPathSet stores no domain: nothing to check against (accepted as given)."""

    @property
    def domain(self) -> PathDomain:
        """Not declared: OpenSim's FunctionBasedPathSet stores no domain, and none is invented here."""
        return PathDomain.not_declared(f"{Path(self.source).name or 'function-based paths'}: OpenSim's "
                                       f"FunctionBasedPath stores no fitted ranges")

    @cached_property
    def coordinates(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for path in self.paths.values():
            seen.update(dict.fromkeys(path.coordinates))
        return tuple(seen)
