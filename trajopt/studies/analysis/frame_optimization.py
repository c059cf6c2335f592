"""The numeric core of static optimization: distribute generalized forces over actuators.

At each frame k the unknowns are muscle activations a (bounded) and residual-actuator controls
e, and the loads must balance exactly:

    Rₖᵀ (F0ₖ + F1ₖ ∘ a) + s ∘ e = τₖ

where Rₖ are moment arms (muscles x coordinates), F0ₖ is the muscle force at zero activation
(passive and damping parts, along the tendon), F1ₖ its growth per unit activation, s the
residual actuators' optimal forces and τₖ the inverse-dynamics generalized forces. The objective
is Σ aᵖ + Σ wⱼ eⱼ², as OpenSim's Static Optimization (reserve controls penalised like muscle
activations when w = 1). Frames are independent, so all frames go to IPOPT as one batched,
block-diagonal NLP (or frame by frame, warm-started from the previous frame).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field, replace

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.ocp import Ipopt
from trajopt.core.ocp.compiled import compile_functions, generic_nlp_functions
from trajopt.core.ocp.interrupts import SolveInterrupted, call_solver
from trajopt.core.ocp.linear_algebra import linear_solver_options


@dataclass(frozen=True)
class FrameLoads:
    """Per-frame numbers for static optimization (n frames, m muscles, j coordinates)."""

    generalized_forces: np.ndarray  # (n, j) from inverse dynamics
    moment_arms: np.ndarray  # (n, m, j)
    force_at_zero_activation: np.ndarray  # (n, m) passive + damping force along the tendon
    force_per_activation: np.ndarray  # (n, m) d(force along tendon)/d(activation)

    def __post_init__(self):
        n, j = np.shape(self.generalized_forces)
        expected = {
            "moment_arms": (n, np.shape(self.force_per_activation)[1], j),
            "force_at_zero_activation": np.shape(self.force_per_activation),
        }
        if np.shape(self.force_per_activation)[0] != n:
            raise TrajoptInputError(
                f"force_per_activation has {np.shape(self.force_per_activation)[0]} frames, generalized_forces {n}"
            )
        for name, shape in expected.items():
            if np.shape(getattr(self, name)) != shape:
                raise TrajoptInputError(f"{name} has shape {np.shape(getattr(self, name))}, expected {shape}")
        for name in ("generalized_forces", "moment_arms", "force_at_zero_activation", "force_per_activation"):
            values = np.asarray(getattr(self, name))
            if not np.all(np.isfinite(values)):
                frame = int(np.argwhere(~np.isfinite(values))[0][0])
                raise TrajoptInputError(f"{name} is not finite at frame {frame}")


@dataclass(frozen=True)
class FrameSolution:
    """Activations, residual controls and the balance error per frame, with IPOPT's stats."""

    activations: np.ndarray  # (n, m)
    residual_controls: np.ndarray  # (n, j)
    muscle_forces: np.ndarray  # (n, m)
    residual_forces: np.ndarray  # (n, j)
    equality_error: np.ndarray  # (n, j) muscle + residual - inverse dynamics
    success: bool
    status: str
    iterations: int
    wall_time: float
    frame_status: list = field(default_factory=list)


def _frame_problem(m: int, j: int, exponent: float, residual_weights: np.ndarray, residual_optimal_forces):
    """One frame's objective and constraint as a Function of (activations, controls, frame data)."""
    activation = ca.SX.sym("activation", m)
    control = ca.SX.sym("residual_control", j)
    arms = ca.SX.sym("moment_arms", m, j)
    passive = ca.SX.sym("force_at_zero_activation", m)
    gain = ca.SX.sym("force_per_activation", m)
    load = ca.SX.sym("generalized_forces", j)
    force = passive + gain * activation
    balance = arms.T @ force + ca.DM(residual_optimal_forces) * control - load
    # |a|^p keeps the objective defined for non-integer p; activations are >= 0 anyway.
    effort = ca.sum1(ca.fabs(activation) ** exponent) if exponent != 2 else ca.sumsqr(activation)
    objective = effort + ca.dot(ca.DM(residual_weights), control**2)
    return ca.Function(
        "static_optimization_frame",
        [activation, control, arms, passive, gain, load],
        [objective, balance],
        ["activation", "residual_control", "moment_arms", "force_at_zero_activation", "force_per_activation",
         "generalized_forces"],
        ["objective", "balance"],
    )


# Larger motions are solved in batches of this many frames: building one NLP over thousands of frames costs
# more than it saves (a 1350-frame, 80-muscle motion: 72 s to build in one piece).
MAX_FRAMES_PER_SOLVE = 101

# The solver settings of static optimization when none are given: a tight tolerance (the problem is a
# small convex QP per frame for exponent 2, so tightness costs a few iterations only).
# Not compiled by default: compiling a large model's batch (80 muscles x 101 frames) takes gcc minutes and
# gigabytes. ``Ipopt(tol=1e-10, compiled=True)`` compiles the NLP functions to C and caches them on disk
# (trajopt.core.ocp.compiled): later processes then build the solver in milliseconds (trajopt bench
# static-optimization measures it on arm26).
DEFAULT_SOLVER = Ipopt(tol=1e-10)

# Added to the default settings when the caller gives a starting point: it is taken to be near the optimum, so a
# small barrier parameter and a small push off the bounds keep IPOPT there instead of re-centring it first.
WARM_START_OPTIONS = {"mu_init": 1e-8, "bound_push": 1e-10, "bound_frac": 1e-10}
WARM_SOLVER = replace(DEFAULT_SOLVER, options={**DEFAULT_SOLVER.options, **WARM_START_OPTIONS})


@dataclass(frozen=True)
class Frames:
    """How static optimization solves the motion's frames: ``batched``, many frames in one IPOPT solve (at most
    ``MAX_FRAMES_PER_SOLVE``; the frames are independent, so the optimum is the same); else one frame per solve,
    each warm-started from the previous one."""

    batched: bool = True
COMPILED_SOLVER = Ipopt(tol=1e-10, compiled=True)


@dataclass(frozen=True)
class FrameGuess:
    """IPOPT's starting point for every frame: activations (frames, muscles) and residual controls (frames,
    coordinates; None: zero). A ``StaticOptimizationResult`` has both, so a previous result is a guess as it is."""

    activations: np.ndarray
    residual_controls: np.ndarray | None = None

    def start(self, frames: int, muscles: int, coordinates: int) -> tuple[np.ndarray, np.ndarray]:
        """(activations, residual controls) as float arrays of the problem's shape, or one line naming the
        mismatch."""
        activations = np.asarray(self.activations, dtype=float)
        controls = np.zeros((frames, coordinates)) if self.residual_controls is None else \
            np.asarray(self.residual_controls, dtype=float)
        for name, values, shape in (("activations", activations, (frames, muscles)),
                                    ("residual controls", controls, (frames, coordinates))):
            if values.shape != shape:
                raise TrajoptInputError(f"static optimization guess: {name} have shape {values.shape}, the problem "
                                        f"{shape} (frames, {'muscles' if name == 'activations' else 'reserves'})")
            if not np.all(np.isfinite(values)):
                frame = int(np.argwhere(~np.isfinite(values))[0][0])
                raise TrajoptInputError(f"static optimization guess: {name} are not finite at frame {frame}")
        return activations, controls


def _settings_key(solver: Ipopt) -> tuple:
    return (solver.tol, int(solver.max_iterations), int(solver.print_level), solver.linear_solver,
            tuple(sorted(solver.options.items())), bool(solver.compiled))  # IPOPT option values: hashable


@functools.lru_cache(maxsize=32)
def _solver(m: int, j: int, frames_per_solve: int, exponent: float, residual_weights: tuple,
            residual_optimal_forces: tuple, settings: tuple) -> ca.Function:
    """IPOPT on ``frames_per_solve`` independent frames, built once per problem shape and settings.

    The NLP is expanded to SX: its functions are small and SX evaluates them much faster than MX.
    """
    frame = _frame_problem(m, j, exponent, np.array(residual_weights), np.array(residual_optimal_forces))
    mapped = frame.map(frames_per_solve)
    a = ca.MX.sym("activations", m, frames_per_solve)
    e = ca.MX.sym("residual_controls", j, frames_per_solve)
    # Moment arms as [R(t0) | R(t1) | ...] (m x j per frame): map takes the blocks as they are. (Its entries are
    # the same numbers in the same order as one column of m*j per frame.)
    data = [ca.MX.sym("moment_arms", m, j * frames_per_solve)] + [
        ca.MX.sym(name, rows, frames_per_solve) for name, rows in (("passive", m), ("gain", m), ("load", j))]
    objective, balance = mapped(a, e, data[0], data[1], data[2], data[3])
    nlp = {
        "x": ca.veccat(a, e),
        "p": ca.veccat(*data),
        "f": ca.sum2(objective),
        "g": ca.vec(balance),
    }
    tolerance, max_iterations, print_level, linear_solver, extra, compiled = settings
    ipopt = {
        "print_level": print_level,
        "tol": tolerance,
        "max_iter": max_iterations,
        **linear_solver_options(linear_solver),
        "constr_viol_tol": 1e-12,
        "sb": "yes",
        # the balance is linear in the unknowns, and so is the objective's gradient when p = 2
        "jac_c_constant": "yes",
        "hessian_constant": "yes" if exponent == 2 else "no",
    }
    ipopt.update(dict(extra))
    options = {"expand": True, "print_time": False, "ipopt": ipopt}
    if compiled:
        # Compiled to C and cached on disk by the NLP's source: a new process loads it instead of differentiating.
        oracle = ca.Function("nlp", [nlp["x"], nlp["p"]], [nlp["f"], nlp["g"]], ["x", "p"], ["f", "g"])
        library = compile_functions(oracle, lambda: generic_nlp_functions(oracle, hessian=True), tag="static")
        if library is not None:
            nlp, extra_options = library.nlpsol_problem()
            options.update(extra_options)
    return ca.nlpsol("static_optimization", "ipopt", nlp, options)


def optimize_frames(
    loads: FrameLoads,
    activation_bounds: tuple[np.ndarray, np.ndarray],
    residual_optimal_forces: np.ndarray,
    residual_weights: np.ndarray | None = None,
    exponent: float = 2.0,
    batched: bool = True,
    solver: Ipopt = DEFAULT_SOLVER,
    guess: FrameGuess | None = None,
) -> FrameSolution:
    """Solve static optimization for every frame; see the module docstring for the problem. ``solver``: the
    IPOPT settings (``trajopt.core.ocp.Ipopt``: tolerance, iterations, print level, linear solver, options).
    ``guess``: IPOPT's starting point per frame (default: activations 0.1 and no reserves for the first solve, then
    each solve starts from the previous solve's last frame)."""
    n, m, j = np.shape(loads.moment_arms)
    lower, upper = (np.broadcast_to(np.asarray(b, float), (m,)) for b in activation_bounds)
    if np.any(lower > upper):
        bad = int(np.argmax(lower > upper))
        raise TrajoptInputError(f"activation bounds of muscle {bad}: lower {lower[bad]} > upper {upper[bad]}")
    optimal = np.broadcast_to(np.asarray(residual_optimal_forces, float), (j,))
    weights = np.ones(j) if residual_weights is None else np.broadcast_to(np.asarray(residual_weights, float), (j,))
    # Frames are independent: batches of at most MAX_FRAMES_PER_SOLVE share one solver (built once per size).
    frames_per_solve = min(n, MAX_FRAMES_PER_SOLVE) if batched else 1
    settings = _settings_key(solver)

    activations = np.zeros((n, m))
    controls = np.zeros((n, j))
    statuses, iterations, previous = [], 0, np.concatenate([np.clip(np.full(m, 0.1), lower, upper), np.zeros(j)])
    start_points = None if guess is None else guess.start(n, m, j)
    start = time.perf_counter()
    for first in range(0, n, frames_per_solve):
        k = min(frames_per_solve, n - first)
        rows = slice(first, first + k)
        nlpsol = _solver(m, j, k, float(exponent), tuple(weights), tuple(optimal), settings)
        parameters = np.concatenate([
            # column-major (m, j) blocks, one per frame, as casadi.reshape reads them
            loads.moment_arms[rows].transpose(0, 2, 1).reshape(k, m * j).ravel(),
            loads.force_at_zero_activation[rows].T.ravel(order="F"),
            loads.force_per_activation[rows].T.ravel(order="F"),
            loads.generalized_forces[rows].T.ravel(order="F"),
        ])
        if start_points is None:
            x0 = np.concatenate([np.tile(previous[:m], k), np.tile(previous[m:], k)])
        else:  # frame by frame, as the unknowns are laid out
            x0 = np.concatenate([start_points[0][rows].ravel(), start_points[1][rows].ravel()])
        with solver.threads_set():
            try:
                result, stats = call_solver(
                    nlpsol, x0=x0, p=parameters,
                    lbx=np.concatenate([np.tile(lower, k), np.full(j * k, -np.inf)]),
                    ubx=np.concatenate([np.tile(upper, k), np.full(j * k, np.inf)]),
                    lbg=0, ubg=0,
                )
            except SolveInterrupted as interrupted:
                interrupted.context = f"static optimization of frames {first}..{first + k - 1} of {n}"
                raise
        statuses.append(stats["return_status"])
        iterations += stats["iter_count"]
        x = np.asarray(result["x"]).ravel()
        activations[rows] = x[: m * k].reshape(k, m)
        controls[rows] = x[m * k:].reshape(k, j)
        previous = np.concatenate([activations[first + k - 1], controls[first + k - 1]])
    wall = time.perf_counter() - start

    forces = loads.force_at_zero_activation + loads.force_per_activation * activations
    residual_forces = controls * optimal
    error = np.einsum("nmj,nm->nj", loads.moment_arms, forces) + residual_forces - loads.generalized_forces
    success = all(s == "Solve_Succeeded" for s in statuses)
    status = "Solve_Succeeded" if success else next(s for s in statuses if s != "Solve_Succeeded")
    return FrameSolution(activations, controls, forces, residual_forces, error, success, status, iterations, wall,
                         statuses if not batched else statuses * n)
