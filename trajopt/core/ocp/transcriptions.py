"""Direct-collocation transcriptions as objects: Trapezoidal, HermiteSimpson (separated), Radau (LGR).

A transcription only describes its grid on normalized time tau in [0, 1]: where the points lie, which
linear combinations of states and dynamics form the defects, the quadrature weights, where path
constraints are enforced and how states/controls are interpolated between points. All of it is linear
algebra on constant matrices, so the NLP builder (`trajopt.core.ocp.nlp`) is shared by every scheme.

Defects are in state units over an interval: D = X @ A - T * F @ B, with X the states at all points
(nx x M), F the dynamics at the points listed in `dynamics_points`, T the duration.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError

# Moco's default mesh interval in seconds (MocoInverse, MocoTrack): the studies' and the commands' default.
MOCO_MESH_INTERVAL = 0.02


@dataclass(frozen=True)
class Grid:
    """Constant matrices describing a transcription on normalized time."""

    tau: np.ndarray  # (M,) all points
    defect_states: np.ndarray  # A, (M, n_defects)
    defect_dynamics: np.ndarray  # B, (len(dynamics_points), n_defects)
    dynamics_points: np.ndarray  # indices into tau where the dynamics are evaluated
    defect_tau: np.ndarray  # (n_defects,) time a defect is reported at
    defect_kind: tuple[str, ...]  # per defect, e.g. "collocation", "midpoint interpolation"
    control_points: np.ndarray  # indices into tau where controls/algebraics are decision variables
    control_extension: np.ndarray  # E, (len(control_points), M): controls at all points = U_dec @ E
    path_points: np.ndarray  # indices into tau where path constraints hold
    quadrature: np.ndarray  # (M,) weights on normalized time: integral = T * sum(w * g)
    mesh_points: np.ndarray | None = None  # indices into tau of the mesh points (None: the path points)
    # Where algebraics are decision variables and their extension to all points (default: the controls').
    algebraic_points: np.ndarray | None = None
    algebraic_extension: np.ndarray | None = None

    def __post_init__(self):
        if self.algebraic_points is None:
            object.__setattr__(self, "algebraic_points", self.control_points)
            object.__setattr__(self, "algebraic_extension", self.control_extension)


def lagrange_weights(nodes: np.ndarray, x: float) -> np.ndarray:
    """Values at x of the Lagrange basis polynomials on `nodes`."""
    weights = np.ones(len(nodes))
    for j, node_j in enumerate(nodes):
        for m, node_m in enumerate(nodes):
            if m != j:
                weights[j] *= (x - node_m) / (node_j - node_m)
    return weights


def _lagrange_polynomials(nodes: np.ndarray) -> list[np.poly1d]:
    polynomials = []
    for j in range(len(nodes)):
        others = np.delete(nodes, j)
        polynomials.append(np.poly1d(others, r=True) / np.prod(nodes[j] - others))
    return polynomials


def _check_intervals(intervals) -> int:
    if int(intervals) != intervals or intervals < 1:
        raise TrajoptInputError(f"intervals must be a positive integer, got {intervals!r}")
    return int(intervals)


class Transcription:
    """Common interface: `grid()` and `interpolation(tau_query, controls)`."""

    intervals: int

    def grid(self) -> Grid:
        raise NotImplementedError

    def _local(self, controls: bool) -> tuple[np.ndarray, np.ndarray]:
        """Local nodes in [0, 1] of one interval and their column offsets relative to the interval start."""
        raise NotImplementedError

    def _points_per_interval(self) -> int:
        raise NotImplementedError

    def interpolation(self, tau_query, controls: bool = False, interval: int | None = None) -> np.ndarray:
        """(M, len(tau_query)) weights: values at tau_query = values at all points @ weights.

        Lagrange polynomials through each interval's points: states linear (trapezoidal), quadratic
        through start/midpoint/end (Hermite-Simpson; not its cubic Hermite), degree d (Radau); controls
        linear (trapezoidal), quadratic (Hermite-Simpson), degree d-1 through the Radau points.
        `interval` forces the polynomial of one mesh interval (for points on its boundary).
        """
        tau_query = np.atleast_1d(np.asarray(tau_query, dtype=float))
        n = self.intervals
        stride = self._points_per_interval()
        nodes, offsets = self._local(controls)
        weights = np.zeros((n * stride + 1, tau_query.size))
        for i, tau in enumerate(tau_query):
            k = int(np.clip(np.floor(tau * n), 0, n - 1)) if interval is None else interval
            local = tau * n - k
            weights[k * stride + offsets, i] = lagrange_weights(nodes, local)
        return weights


@dataclass(frozen=True)
class Trapezoidal(Transcription):
    """Trapezoidal collocation: states and controls at mesh points, O(h^2)."""

    intervals: int = 50

    def __post_init__(self):
        _check_intervals(self.intervals)

    def _points_per_interval(self) -> int:
        return 1

    def _local(self, controls: bool):
        return np.array([0.0, 1.0]), np.array([0, 1])

    def grid(self) -> Grid:
        n, h = self.intervals, 1.0 / self.intervals
        tau = np.linspace(0.0, 1.0, n + 1)
        a = np.zeros((n + 1, n))
        b = np.zeros((n + 1, n))
        for k in range(n):
            a[k, k], a[k + 1, k] = -1.0, 1.0
            b[k, k] = b[k + 1, k] = 0.5 * h
        quadrature = np.full(n + 1, h)
        quadrature[[0, -1]] = 0.5 * h
        everywhere = np.arange(n + 1)
        return Grid(tau, a, b, everywhere, tau[1:], ("trapezoidal",) * n, everywhere,
                    np.eye(n + 1), everywhere, quadrature, everywhere)


@dataclass(frozen=True)
class HermiteSimpson(Transcription):
    """Separated Hermite-Simpson: states and controls at mesh points and midpoints, O(h^4).

    `interpolate_control_midpoints`: midpoint controls are the mean of the two mesh points' instead of free
    variables, as Moco's MocoCasADiSolver does by default ("Moco's terms"); algebraics (e.g. the
    accelerations of implicit dynamics) stay free at every point, as Moco's derivative variables.
    """

    intervals: int = 50
    interpolate_control_midpoints: bool = False

    def __post_init__(self):
        _check_intervals(self.intervals)

    def _points_per_interval(self) -> int:
        return 2

    def _local(self, controls: bool):
        return np.array([0.0, 0.5, 1.0]), np.array([0, 1, 2])

    def grid(self) -> Grid:
        n, h = self.intervals, 1.0 / self.intervals
        m = 2 * n + 1
        tau = np.linspace(0.0, 1.0, m)
        a = np.zeros((m, 2 * n))
        b = np.zeros((m, 2 * n))
        defect_tau, kinds = np.zeros(2 * n), []
        for k in range(n):
            start, middle, end = 2 * k, 2 * k + 1, 2 * k + 2
            simpson, interpolation = 2 * k, 2 * k + 1
            a[start, simpson], a[end, simpson] = -1.0, 1.0
            b[[start, middle, end], simpson] = np.array([1.0, 4.0, 1.0]) * h / 6.0
            a[middle, interpolation] = 1.0
            a[[start, end], interpolation] = -0.5
            b[start, interpolation], b[end, interpolation] = h / 8.0, -h / 8.0
            defect_tau[simpson], defect_tau[interpolation] = tau[end], tau[middle]
            kinds += ["Simpson", "Hermite midpoint"]
        quadrature = np.zeros(m)
        for k in range(n):
            quadrature[[2 * k, 2 * k + 1, 2 * k + 2]] += np.array([1.0, 4.0, 1.0]) * h / 6.0
        everywhere = np.arange(m)
        control_points, extension = everywhere, np.eye(m)
        if self.interpolate_control_midpoints:
            control_points = np.arange(0, m, 2)
            extension = np.zeros((n + 1, m))
            extension[np.arange(n + 1), control_points] = 1.0
            for k in range(n):
                extension[[k, k + 1], 2 * k + 1] = 0.5
        return Grid(tau, a, b, everywhere, defect_tau, tuple(kinds), control_points, extension,
                    everywhere, quadrature, mesh_points=np.arange(0, m, 2), algebraic_points=everywhere,
                    algebraic_extension=np.eye(m))


# MocoCasADiSolver's defaults (MocoDirectCollocationSolver's properties): 100 mesh intervals, Hermite-Simpson,
# midpoint controls interpolated. ``Problem.solve``'s transcription when none is given.
MOCO_DEFAULT_TRANSCRIPTION = HermiteSimpson(intervals=100, interpolate_control_midpoints=True)


@dataclass(frozen=True)
class Radau(Transcription):
    """Legendre-Gauss-Radau collocation of `degree` points per interval (degree 1 = backward Euler).

    States at each interval start and its `degree` Radau points (the last is the interval end);
    controls and algebraics at the Radau points only (at t0 they are extrapolated with the first
    interval's control polynomial); dynamics and path constraints hold at the Radau points.
    """

    degree: int = 3
    intervals: int = 50

    def __post_init__(self):
        _check_intervals(self.intervals)
        if int(self.degree) != self.degree or not 1 <= self.degree <= 9:
            raise TrajoptInputError(f"Radau degree must be an integer in 1..9, got {self.degree!r}")

    def _points_per_interval(self) -> int:
        return self.degree

    def collocation_points(self) -> np.ndarray:
        return np.array(ca.collocation_points(self.degree, "radau"))

    def _local(self, controls: bool):
        points = self.collocation_points()
        if controls:
            return points, np.arange(1, self.degree + 1)
        return np.concatenate([[0.0], points]), np.arange(0, self.degree + 1)

    def grid(self) -> Grid:
        n, d, h = self.intervals, self.degree, 1.0 / self.intervals
        points = self.collocation_points()
        nodes = np.concatenate([[0.0], points])
        derivatives = [p.deriv() for p in _lagrange_polynomials(nodes)]
        # Radau quadrature: integrals of the Lagrange basis on the collocation points alone.
        weights = np.array([p.integ()(1.0) - p.integ()(0.0) for p in _lagrange_polynomials(points)])
        m = n * d + 1
        tau = np.zeros(m)
        a = np.zeros((m, n * d))
        b = np.zeros((n * d, n * d))
        quadrature = np.zeros(m)
        for k in range(n):
            tau[k * d + 1:k * d + d + 1] = (k + points) * h
            for j in range(1, d + 1):
                column = k * d + j - 1
                for r in range(d + 1):
                    a[k * d + r, column] = derivatives[r](points[j - 1])
                b[column, column] = h
            quadrature[k * d + 1:k * d + d + 1] = weights * h
        collocation = np.arange(1, m)
        extension = np.zeros((n * d, m))
        extension[:, 1:] = np.eye(n * d)
        extension[:d, 0] = lagrange_weights(points, 0.0)
        return Grid(tau, a, b, collocation, tau[1:], ("collocation",) * (n * d), collocation, extension,
                    collocation, quadrature, np.arange(d, m, d))
