"""Functions of one coordinate used by custom joints (OpenSim's Constant, LinearFunction,
PolynomialFunction, SimmSpline, NaturalCubicSpline, MultiplierFunction).

Each maps a casadi expression (or number) to a casadi expression; `derivative` gives d f / d x.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np
from scipy.interpolate import CubicSpline

from trajopt.errors import TrajoptInputError


class CoordinateFunction:
    """Interface: ``f(x)`` value and ``f.derivative(x)`` slope, both casadi-compatible."""

    def __call__(self, x):
        raise NotImplementedError

    def derivative(self, x):
        raise NotImplementedError


@dataclass(frozen=True)
class Constant(CoordinateFunction):
    """f(x) = value."""

    value: float = 0.0

    def __call__(self, x):
        return self.value + 0 * x

    def derivative(self, x):
        return 0 * x


@dataclass(frozen=True)
class Linear(CoordinateFunction):
    """f(x) = slope * x + intercept (OpenSim LinearFunction coefficients = [slope, intercept])."""

    slope: float = 1.0
    intercept: float = 0.0

    def __call__(self, x):
        if self.slope == 1.0 and self.intercept == 0.0:
            return x
        return self.slope * x + self.intercept

    def derivative(self, x):
        return self.slope + 0 * x


@dataclass(frozen=True)
class Polynomial(CoordinateFunction):
    """f(x) = c[0] x^(n-1) + ... + c[n-1]: highest power first, as OpenSim's PolynomialFunction."""

    coefficients: tuple[float, ...]

    def __call__(self, x):
        result = 0 * x + (self.coefficients[0] if self.coefficients else 0.0)
        for c in self.coefficients[1:]:
            result = result * x + c  # Horner
        return result

    def derivative(self, x):
        n = len(self.coefficients)
        return Polynomial(tuple(c * (n - 1 - i) for i, c in enumerate(self.coefficients[:-1])) or (0.0,))(x)


class _PiecewiseCubic(CoordinateFunction):
    """Cubic pieces y_k + b_k dx + c_k dx^2 + d_k dx^3 on [x_k, x_k+1], linear outside the knots."""

    def __init__(self, x, y, b, c, d):
        self.x, self.y = np.asarray(x, float), np.asarray(y, float)
        self.b, self.c, self.d = np.asarray(b, float), np.asarray(c, float), np.asarray(d, float)

    def _select(self, x, pieces):
        # An if_else chain over the knots (O(n) SX nodes, fine for OpenSim's short splines): the piece of the last
        # interior knot at or below x. Pieces and comparisons are built as vectors, so the loop only chains.
        values = ca.vertsplit(pieces(x))
        above = ca.vertsplit(x >= ca.DM(self.x[1:-1])) if len(self.x) > 2 else []
        result = values[0]
        for k, condition in enumerate(above, start=1):
            result = ca.if_else(condition, values[k], result)
        return result

    def __call__(self, x):
        xs, ys, b, c, d = self.x, self.y, self.b, self.c, self.d
        start, y0 = ca.DM(xs[:-1]), ca.DM(ys[:-1])
        b0, c0, d0 = ca.DM(b[:-1]), ca.DM(c[:-1]), ca.DM(d[:-1])
        inside = self._select(x, lambda v: y0 + (v - start) * (b0 + (v - start) * (c0 + (v - start) * d0)))
        below = ys[0] + (x - xs[0]) * b[0]
        above = ys[-1] + (x - xs[-1]) * b[-1]
        return ca.if_else(x < xs[0], below, ca.if_else(x > xs[-1], above, inside))

    def derivative(self, x):
        xs, b, c, d = self.x, self.b, self.c, self.d
        start, b0, c2, d0 = ca.DM(xs[:-1]), ca.DM(b[:-1]), ca.DM(2 * c[:-1]), ca.DM(d[:-1])
        inside = self._select(x, lambda v: b0 + (v - start) * (c2 + 3 * (v - start) * d0))
        return ca.if_else(x < xs[0], b[0], ca.if_else(x > xs[-1], b[-1], inside))


def _check_knots(x, y, what):
    x = np.asarray(x, float).ravel()
    y = np.asarray(y, float).ravel()
    if x.size != y.size or x.size < 2 or np.any(np.diff(x) <= 0):
        raise TrajoptInputError(f"{what}: needs >= 2 increasing x values and as many y values (x={x}, y={y})")
    return x, y


class SimmSpline(_PiecewiseCubic):
    """OpenSim's SimmSpline: cubic spline whose end third derivatives match divided differences
    (the Forsythe-Malcolm-Moler end conditions), linear extrapolation with the end slopes."""

    def __init__(self, x, y):
        x, y = _check_knots(x, y, "SimmSpline")
        n = x.size
        if n == 2:
            slope = (y[1] - y[0]) / (x[1] - x[0])
            super().__init__(x, y, [slope, slope], [0.0, 0.0], [0.0, 0.0])
            return
        h = np.diff(x)
        delta = np.diff(y) / h
        # Tridiagonal system for sigma_k = y''_k / 6 (diag, off-diagonal h, right-hand side rhs).
        diag = np.zeros(n)
        rhs = np.zeros(n)
        diag[1:-1] = 2 * (h[:-1] + h[1:])
        rhs[1:-1] = delta[1:] - delta[:-1]
        diag[0], diag[-1] = -h[0], -h[-1]
        if n > 3:
            rhs[0] = (rhs[2] / (x[3] - x[1]) - rhs[1] / (x[2] - x[0])) * h[0] ** 2 / (x[3] - x[0])
            rhs[-1] = -(rhs[-2] / (x[-1] - x[-3]) - rhs[-3] / (x[-2] - x[-4])) * h[-1] ** 2 / (x[-1] - x[-4])
        for i in range(1, n):
            t = h[i - 1] / diag[i - 1]
            diag[i] -= t * h[i - 1]
            rhs[i] -= t * rhs[i - 1]
        sigma = np.zeros(n)
        sigma[-1] = rhs[-1] / diag[-1]
        for i in range(n - 2, -1, -1):
            sigma[i] = (rhs[i] - h[i] * sigma[i + 1]) / diag[i]
        b = np.zeros(n)
        b[:-1] = delta - h * (sigma[1:] + 2 * sigma[:-1])
        b[-1] = delta[-1] + h[-1] * (sigma[-2] + 2 * sigma[-1])
        d = np.append((sigma[1:] - sigma[:-1]) / h, (sigma[-1] - sigma[-2]) / h[-1])
        super().__init__(x, y, b, 3 * sigma, d)


class NaturalCubicSpline(_PiecewiseCubic):
    """Natural cubic spline (zero second derivative at both ends), linear outside the knots."""

    def __init__(self, x, y):
        x, y = _check_knots(x, y, "NaturalCubicSpline")
        spline = CubicSpline(x, y, bc_type="natural")
        c3, c2, c1 = spline.c[0], spline.c[1], spline.c[2]
        slope_end = float(spline(x[-1], 1))
        super().__init__(x, y, np.append(c1, slope_end), np.append(c2, 0.0), np.append(c3, 0.0))


@dataclass(frozen=True)
class Multiplier(CoordinateFunction):
    """f(x) = scale * function(x) (OpenSim MultiplierFunction)."""

    function: CoordinateFunction
    scale: float = 1.0

    def __call__(self, x):
        return self.scale * self.function(x)

    def derivative(self, x):
        return self.scale * self.function.derivative(x)
