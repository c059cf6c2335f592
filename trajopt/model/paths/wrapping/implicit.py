"""First derivatives of a wrap's iterative solves by the implicit function theorem.

OpenSim finds closest points and tangent points by Newton and Levenberg-Marquardt iterations. Differentiated as
unrolled, every step is in the derivative's graph, and each level of casadi Functions around them evaluates them
again to differentiate. At a root z of F(z, p) = 0 the implicit function theorem gives dz/dp = -F_z⁻¹ F_p from the
residual alone. `Solves` records each solve's result z and residual F(z, p) as the wrap is evaluated, and replays
them: a solve replayed is z - F_z⁻¹ (F(z, p) - F_recorded), equal to z (the residuals are the same operations on
the same numbers) with the first derivative -F_z⁻¹ F_p. A wrap replayed is its closed-form parts only; its Jacobian
is the wrap's custom Jacobian (`trajopt.model.paths.wrapping.ellipsoid`), evaluated from the recorded solves.
F is as small as the solve's stopping test makes it, so these derivatives differ from those of the unrolled
iterations by about that much; second derivatives are not the solution's: use them for first derivatives only.
"""

from __future__ import annotations

import enum
from functools import lru_cache

import casadi as ca


class WrapDerivatives(enum.Enum):
    """How a wrap's iterative solves are differentiated: through the iterations as unrolled (the exact derivatives
    of the computed values, first and second), or by the implicit function theorem at the solves' results (first
    derivatives only, much cheaper; they differ from the unrolled ones by about the solves' tolerance)."""

    UNROLLED = "unrolled"
    IMPLICIT = "implicit"


def finite_or_zero(x):
    """x where finite, else 0 (a solve at a singular point contributes no derivative)."""
    return ca.if_else(ca.fabs(x) < ca.inf, x, 0)


@lru_cache(maxsize=None)
def _with_jacobian(residual: ca.Function) -> ca.Function:
    """(z, *parameters) -> (F, F_z) of `residual`."""
    z = ca.SX.sym("z", residual.sparsity_in(0))
    parameters = [ca.SX.sym(residual.name_in(i), residual.sparsity_in(i)) for i in range(1, residual.n_in())]
    value = residual(z, *parameters)
    return ca.Function(f"{residual.name()}_with_jacobian", [z, *parameters], [value, ca.jacobian(value, z)])


class Solves:
    """A wrap computation's iterative solves, in the order the computation meets them: computed and recorded
    (`given` None: each result z, then its residual), or replayed from `given` (what `record` returned)."""

    def __init__(self, given=None):
        self.given = given
        self.recorded = []
        self._used = 0

    def _next(self, rows, columns):
        block = ca.reshape(self.given[self._used:self._used + rows * columns], rows, columns)
        self._used += rows * columns
        return block

    def root(self, iterate, residual: ca.Function, *parameters, count: int = 1):
        """The root z of `residual`(z, *parameters) = 0 that `iterate`() computes (called only when recording);
        with `count` > 1, `residual` is scalar and applied column by column (z 1 x count)."""
        function = residual if count == 1 else residual.map(count)
        if self.given is None:
            z = iterate()
            self.recorded += [ca.vec(z), ca.vec(function(z, *parameters))]
            return z
        rows, columns = residual.size1_in(0), residual.size2_in(0) * count
        # A solve on a branch the computation does not take may have no finite result: any finite one will do.
        z, recorded = finite_or_zero(self._next(rows, columns)), self._next(rows, columns)
        with_jacobian = _with_jacobian(residual)
        value, by_z = (with_jacobian if count == 1 else with_jacobian.map(count))(z, *parameters)
        change = value - recorded
        step = change / by_z if rows == 1 else ca.solve(by_z, change)
        return z - finite_or_zero(step)

    def record(self):
        """The recorded results and residuals as one column."""
        return ca.vertcat(*self.recorded)
