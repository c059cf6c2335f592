"""Goals: small objects that combine with weights (`0.1 * Effort(u) + FinalTime()`).

A goal reduces to integrands (SX in t, x, u, p, z) and an endpoint expression that may use the
integral values (placeholders), the problem's initial/final copies of variables, and parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError

if TYPE_CHECKING:
    from trajopt.core.ocp.problem import Problem


@dataclass(frozen=True)
class GoalTerms:
    """Integrands to integrate over the phase, and a cost built from their integrals."""

    integrands: tuple[ca.SX, ...]
    cost: Callable[[list[ca.SX]], ca.SX]


class Goal:
    """Base class: subclasses implement `terms(problem)`; `+` sums goals and `*` weights them."""

    name = "goal"

    def terms(self, problem: "Problem") -> GoalTerms:
        raise NotImplementedError

    def __add__(self, other: "Goal") -> "Goal":
        if not isinstance(other, Goal):
            return NotImplemented
        return Sum((self, other))

    def __mul__(self, weight) -> "Goal":
        if isinstance(weight, Goal):
            return NotImplemented
        return Weighted(self, float(weight))

    __rmul__ = __mul__


@dataclass(frozen=True)
class Sum(Goal):
    goals: tuple[Goal, ...]
    name = "sum"

    def __add__(self, other):
        if not isinstance(other, Goal):
            return NotImplemented
        return Sum(self.goals + (other,))

    def terms(self, problem):
        parts = [goal.terms(problem) for goal in self.goals]
        counts = [len(part.integrands) for part in parts]

        def cost(integrals):
            total, start = 0, 0
            for part, count in zip(parts, counts):
                total = total + part.cost(integrals[start:start + count])
                start += count
            return total

        return GoalTerms(tuple(i for part in parts for i in part.integrands), cost)


@dataclass(frozen=True)
class Weighted(Goal):
    goal: Goal
    weight: float
    name = "weighted"

    def __post_init__(self):
        if not np.isfinite(self.weight):
            raise TrajoptInputError(f"goal weight must be finite, got {self.weight}")

    def terms(self, problem):
        inner = self.goal.terms(problem)
        return GoalTerms(inner.integrands, lambda integrals: self.weight * inner.cost(integrals))


def _sx(expression, what: str) -> ca.SX:
    from trajopt.core.ocp.problem import as_sx  # here: trajopt.core.ocp.problem imports this module

    return as_sx(expression, what)


@dataclass(frozen=True, eq=False)
class Integral(Goal):
    """Integral over the phase of a scalar expression of t, states, controls, parameters, algebraics."""

    expression: object
    name = "integral"

    def terms(self, problem):
        expression = _sx(self.expression, "Integral expression")
        if expression.numel() != 1:
            raise TrajoptInputError(f"Integral expression must be scalar, got shape {expression.shape}")
        return GoalTerms((expression,), lambda integrals: integrals[0])


@dataclass(frozen=True, eq=False)
class Endpoint(Goal):
    """A scalar expression of `problem.initial(...)` / `problem.final(...)` values and parameters."""

    expression: object
    name = "endpoint"

    def terms(self, problem):
        expression = _sx(self.expression, "Endpoint expression")
        if expression.numel() != 1:
            raise TrajoptInputError(f"Endpoint expression must be scalar, got shape {expression.shape}")
        return GoalTerms((), lambda integrals: expression)


@dataclass(frozen=True)
class FinalTime(Goal):
    """The final time of the phase."""

    name = "final time"

    def terms(self, problem):
        final_time = problem.final(problem.time)
        return GoalTerms((), lambda integrals: final_time)


@dataclass(frozen=True, eq=False)
class Effort(Goal):
    """Integral of sum |v_i|^power over a vector of expressions (usually controls or excitations).

    With `per_distance` (an endpoint expression, e.g. final(x) - initial(x)) the integral is divided by it.
    """

    expressions: object
    power: float = 2.0
    per_distance: object = None
    name = "effort"

    def terms(self, problem):
        values = _sx(self.expressions, "Effort expressions")
        if not self.power > 0:
            raise TrajoptInputError(f"Effort power must be positive, got {self.power}")
        even = float(self.power).is_integer() and int(self.power) % 2 == 0
        magnitudes = values if even else ca.fabs(values)
        integrand = ca.sum1(ca.vec(magnitudes) ** self.power)
        if self.per_distance is None:
            return GoalTerms((integrand,), lambda integrals: integrals[0])
        distance = _sx(self.per_distance, "Effort per_distance")
        return GoalTerms((integrand,), lambda integrals: integrals[0] / distance)


class Reference:
    """A reference r(t) for ``Tracking``: ``columns`` signals, ``at(t)`` their values (SX column) at time ``t``."""

    @property
    def columns(self) -> int:
        raise NotImplementedError

    def at(self, t) -> ca.SX:
        raise NotImplementedError


@dataclass(frozen=True, eq=False)
class LinearInterpolation(Reference):
    """A table's rows joined by straight lines (``casadi.pw_lin``): ``times`` (K,) increasing, K >= 2;
    ``values`` (K, n) finite, one column per signal."""

    times: np.ndarray
    values: np.ndarray

    def __post_init__(self):
        times = np.asarray(self.times, dtype=float).flatten()
        values = np.asarray(self.values, dtype=float)
        if times.size < 2 or np.any(np.diff(times) <= 0) or not np.all(np.isfinite(values)):
            raise TrajoptInputError("LinearInterpolation times must be >= 2 increasing values and the values finite")
        if values.size == 0 or values.size % times.size:
            raise TrajoptInputError(f"LinearInterpolation: {values.size} values do not fill {times.size} rows")
        values = values.reshape(times.size, -1)
        object.__setattr__(self, "times", times)
        object.__setattr__(self, "values", values)

    @property
    def columns(self) -> int:
        return self.values.shape[1]

    def at(self, t) -> ca.SX:
        return ca.vertcat(*[ca.pw_lin(t, ca.DM(self.times), ca.DM(self.values[:, i])) for i in range(self.columns)])


@dataclass(frozen=True, eq=False)
class PiecewisePolynomial(Reference):
    """Polynomial pieces, e.g. a spline's (``trajopt.model.io.signals.spline_pieces``): ``breaks`` (K+1,) increasing;
    ``coefficients`` (degree+1, K, n) finite, piece k of column i = sum_m c[m, k, i] (t - breaks[k])^(degree - m)
    (scipy's ``PPoly`` layout); the end pieces extend beyond the breaks. The pieces are selected by ``pw_const``,
    so a numeric ``t`` gives the exact polynomial value."""

    breaks: np.ndarray
    coefficients: np.ndarray

    def __post_init__(self):
        breaks = np.asarray(self.breaks, dtype=float).flatten()
        coefficients = np.asarray(self.coefficients, dtype=float)
        if coefficients.ndim != 3 or coefficients.shape[1] != breaks.size - 1:
            raise TrajoptInputError(f"PiecewisePolynomial coefficients have shape {coefficients.shape}, expected "
                                    f"(degree+1, {breaks.size - 1}, columns)")
        if breaks.size < 2 or np.any(np.diff(breaks) <= 0) or not np.all(np.isfinite(coefficients)):
            raise TrajoptInputError("PiecewisePolynomial breaks must be >= 2 increasing values and the coefficients "
                                    "finite")
        object.__setattr__(self, "breaks", breaks)
        object.__setattr__(self, "coefficients", coefficients)

    @property
    def columns(self) -> int:
        return self.coefficients.shape[2]

    def at(self, t) -> ca.SX:
        inner = ca.DM(self.breaks[1:-1])
        offset = t - ca.pw_const(t, inner, ca.DM(self.breaks[:-1]))
        values = []
        for i in range(self.columns):
            value = ca.pw_const(t, inner, ca.DM(self.coefficients[0, :, i]))
            for m in range(1, self.coefficients.shape[0]):
                value = value * offset + ca.pw_const(t, inner, ca.DM(self.coefficients[m, :, i]))
            values.append(value)
        return ca.vertcat(*values)


@dataclass(frozen=True, eq=False)
class Tracking(Goal):
    """Integral of sum w_i (e_i(t) - r_i(t))^2, r evaluated at the transcription's times.

    `expressions`: SX column (n); `reference`: a ``Reference`` with n columns (``LinearInterpolation`` of a table,
    ``PiecewisePolynomial`` of a spline); `weights`: scalar or (n,).
    """

    expressions: object
    reference: Reference
    weights: object = 1.0
    name = "tracking"

    def __post_init__(self):
        if not isinstance(self.reference, Reference):
            raise TrajoptInputError(f"Tracking reference must be LinearInterpolation(times, values) or "
                                    f"PiecewisePolynomial(breaks, coefficients), got {type(self.reference).__name__}")

    def terms(self, problem):
        values = ca.vec(_sx(self.expressions, "Tracking expressions"))
        weights = np.broadcast_to(np.asarray(self.weights, dtype=float), (values.numel(),))
        if self.reference.columns != values.numel():
            raise TrajoptInputError(f"Tracking reference has {self.reference.columns} columns for "
                                    f"{values.numel()} expressions")
        error = values - self.reference.at(problem.time)
        return GoalTerms((ca.SX(ca.sum1(ca.DM(weights) * error ** 2)),), lambda integrals: integrals[0])


@dataclass(frozen=True, eq=False)
class ResidualPenalty(Goal):
    """Integral of sum (r_i)^2 over residual-actuator controls (weight with `*`)."""

    residuals: object
    name = "residual penalty"

    def terms(self, problem):
        return Effort(self.residuals, power=2.0).terms(problem)
