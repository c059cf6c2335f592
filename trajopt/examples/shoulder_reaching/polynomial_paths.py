"""The 3D-arm reach with polynomial muscle paths fitted in constrained-quaternion shoulder coordinates, compared
with a fit in YZY Euler angles (``trajopt run shoulder-reaching-polynomial``).

The arm's 9 straight-line geometric paths (trajopt/examples/shoulder_reaching/model.py) are the sampler: lengths and
moment arms about the body angular velocity of the humerus (spatial moment arms) and the elbow, at Latin-
hypercube configurations of Q* = (Q1, Q2, Q3) in [-0.55, 0.55]³ (rotations up to about 145 deg from hanging)
and the elbow's range. The quaternion fit uses moment arms about Q* (r_Q* = Eᵀ r_S); the Euler fit the same
orientations as YZY angles (moment arms r_E = Jᵀ r_S). Both use ``trajopt.model.paths.fitting.ACCURATE``. Held-out
errors compare spatial moment arms ((Eᵀ)⁻¹ r_Q*, (Jᵀ)⁻¹ r_E), the torques the dynamics sees. The quaternion
paths then drive the reaching problem (``QuaternionBallPaths``; Hermite-Simpson 40 intervals, as the geometric
run); its torques are checked against the geometric paths' spatial moment arms at the solution. The Euler
paths drive the same reach with the YZY shoulder (``euler_polynomial_arm``; moment arms -∂l/∂θ about the angles),
compared with the quaternion-path run and with the geometric-path YZY reach through the gimbal-lock start (θ2 = 0).
Writes ``./trajopt_results/shoulder-reaching-polynomial/`` (summary.md, solution.sto, solution_euler_yzy.sto, the
fitted paths_*.json) or ``--out``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import replace

import casadi as ca
import numpy as np

from trajopt.model.paths.domain_report import print_path_domain_warning
from trajopt.errors import TrajoptInputError
from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import add_out, out_folder
from trajopt.model.io import write_sto
from trajopt.core.multibody import rotations
from trajopt.core.ocp import HermiteSimpson
from trajopt.model.paths.domain import PathDomain
from trajopt.model.paths.fitting import ACCURATE, fit_paths
from trajopt.model.paths.polynomial import PolynomialPaths
from trajopt.model.paths.quaternion import euler_angular_velocity_matrix, spatial_from_constrained_jacobian
from trajopt.model.paths.quaternion_paths import BallJointQuaternion, QuaternionBallPaths, constrained_moment_arms
from trajopt.model.paths.samples import PathSamples
from trajopt.examples.shoulder_reaching import analysis
from trajopt.examples.shoulder_reaching.model import ELBOW_RANGE, SHOULDER, ShoulderArm, shoulder_arm
from trajopt.examples.shoulder_reaching.reaching import build_problem, naive_guess, solve_naive_and_warm, solver

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = '3D arm reach with polynomial paths in constrained-quaternion shoulder coordinates vs Euler'

SHOULDER_JOINT = BallJointQuaternion(SHOULDER, ("shoulder_qw", "shoulder_qx", "shoulder_qy", "shoulder_qz"))
VARIABLES = (*SHOULDER_JOINT.variables, "elbow_flexion")
EULER_VARIABLES = ("shoulder_1_y", "shoulder_2_z", "shoulder_3_y", "elbow_flexion")
DOMAIN = PathDomain.box(VARIABLES, [[-0.55, 0.55]] * 3 + [list(ELBOW_RANGE)], "Q* box (|Q*_i| <= 0.55), elbow range")
NAME = "shoulder_reaching_polynomial"
NEAR_LOCK = 0.01  # rad: |θ2| below this counts as at the YZY gimbal lock in summary.md
# The Euler fit stalls above the targets near gimbal lock; capped (degree 6, 120 terms) to bound its run time.
EULER_SETTINGS = replace(ACCURATE, max_degree=6, max_terms=120)


class GeometricArmSampler:
    """``trajopt.model.paths.refit.PathSampler`` over the arm's geometric paths, in (Q1, Q2, Q3, elbow)."""

    identity = "shoulder_arm:geometric"
    coordinates = VARIABLES

    def __init__(self, arm: ShoulderArm):
        self.arm = arm

    def coordinate_ranges(self, coordinates):
        return DOMAIN.ranges[[VARIABLES.index(c) for c in coordinates]]

    def is_rotational(self, coordinate):
        return True

    def spatial(self, q_model: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Lengths (n x m) and moment arms about the speeds (n x m x 4: ω_x, ω_y, ω_z, elbow)."""
        n = len(q_model)
        lengths, _, arms = self.arm.musculotendon_kinematics.map(n)(q_model.T, np.zeros((self.arm.multibody.nv, n)))
        m = len(self.arm.paths)
        return np.asarray(lengths).T, np.asarray(arms).reshape(4, n, m).transpose(1, 2, 0)

    def sample(self, coordinates, configurations, muscles=None) -> PathSamples:
        x = np.atleast_2d(np.asarray(configurations, dtype=float))
        q0 = np.sqrt(np.clip(1 - np.sum(x[:, :3] ** 2, axis=1), 0, None))
        q_model = np.column_stack([q0, x[:, :3], x[:, 3]])
        lengths, spatial = self.spatial(q_model)
        arms = np.empty_like(spatial)
        for k in range(spatial.shape[1]):
            arms[:, k, :3] = constrained_moment_arms(q_model[:, :4], spatial[:, k, :3])
            arms[:, k, 3] = spatial[:, k, 3]
        names = self.arm.muscle_names
        return PathSamples(VARIABLES, names, x, lengths, arms, {m: VARIABLES for m in names})


def euler_samples(sampler: GeometricArmSampler, samples: PathSamples) -> PathSamples:
    """The same configurations as YZY angles, moment arms about the angles (r_E = Jᵀ r_S)."""
    q_model = np.column_stack([np.sqrt(1 - np.sum(samples.q[:, :3] ** 2, axis=1)), samples.q])
    angles = np.array([rotations.rotation_to_euler("YZY", np.asarray(rotations.quaternion_to_rotation(row[:4])))
                       for row in q_model])
    lengths, spatial = sampler.spatial(q_model)
    arms = np.empty_like(spatial)
    for i, row in enumerate(angles):
        j = np.asarray(euler_angular_velocity_matrix(row, "YZY"))
        arms[i, :, :3] = spatial[i, :, :3] @ j
        arms[i, :, 3] = spatial[i, :, 3]
    q = np.column_stack([angles, samples.q[:, 3]])
    names = samples.muscles
    return PathSamples(EULER_VARIABLES, names, q, lengths, arms, {m: EULER_VARIABLES for m in names}), spatial


def spatial_errors(paths: PolynomialPaths, samples: PathSamples, spatial: np.ndarray, euler: bool) -> dict:
    """Per-muscle RMS of length and of spatial moment arms (mm) of ``paths`` at ``samples``."""
    out = {}
    for k, muscle in enumerate(samples.muscles):
        path = paths[muscle]
        columns = [samples.coordinates.index(c) for c in path.coordinates]
        lengths = np.asarray(path.length_function.map(samples.size)(samples.q[:, columns].T)).ravel()
        arms = np.zeros((samples.size, 4))
        arms[:, columns] = np.asarray(path.moment_arms_function.map(samples.size)(samples.q[:, columns].T)).T
        mapped = np.empty_like(arms)
        for i in range(samples.size):
            if euler:
                j = np.asarray(euler_angular_velocity_matrix(samples.q[i, :3], "YZY"))
                mapped[i, :3] = np.linalg.solve(j.T, arms[i, :3])
            else:
                quaternion = np.concatenate([[np.sqrt(1 - np.sum(samples.q[i, :3] ** 2))], samples.q[i, :3]])
                mapped[i, :3] = np.asarray(spatial_from_constrained_jacobian(arms[i, :3], quaternion)).ravel()
            mapped[i, 3] = arms[i, 3]
        true_lengths = samples.lengths[:, k]
        error = mapped - spatial[:, k]
        out[muscle] = (float(np.sqrt(np.mean((lengths - true_lengths) ** 2))) * 1e3,
                       float(np.sqrt(np.mean(error ** 2))) * 1e3, float(np.percentile(np.abs(error), 99)) * 1e3,
                       path.report.terms)
    return out


class _PolynomialPath:
    """One muscle of ``QuaternionBallPaths`` with the GeometricPath interface ShoulderArm uses (name, length(q))."""

    def __init__(self, name: str, index: int, lengths: ca.Function):
        self.name, self.index, self.lengths = name, index, lengths

    def length(self, q):
        return self.lengths(q)[self.index]


def polynomial_arm(arm: ShoulderArm, paths: QuaternionBallPaths) -> ShoulderArm:
    """The arm with its muscle paths replaced by the quaternion polynomial paths (same muscles)."""
    lengths = paths.lengths_function(arm.multibody.coordinate_names)
    order = list(paths.muscles)
    return replace(arm, paths=tuple(_PolynomialPath(name, order.index(name), lengths) for name in arm.muscle_names),
                   fitted_paths=paths)


def euler_polynomial_arm(arm: ShoulderArm, paths: PolynomialPaths, names: dict[str, str] | None = None) -> ShoulderArm:
    """The Euler-shoulder arm (``shoulder_arm("YZY")``) with its muscle paths replaced by polynomial paths fitted in
    its angles (same muscles). ``names`` maps the fit's variables to the arm's coordinates; default
    ``EULER_VARIABLES`` (θ1, θ2, θ3, elbow) onto the arm's coordinates in order. The arm's moment arms are then
    -∂l/∂θ of the polynomial (its speeds are the angle rates)."""
    if arm.euler_sequence is None or arm.euler_sequence.upper() != "YZY":
        raise TrajoptInputError(f"euler_polynomial_arm: the paths are fitted in YZY angles, the arm's shoulder is "
                                f"{arm.euler_sequence or 'a quaternion'}")
    coordinates = arm.multibody.coordinate_names
    names = dict(zip(EULER_VARIABLES, coordinates)) if names is None else dict(names)
    unmapped = [v for v in paths.coordinates if names.get(v) not in coordinates]
    if unmapped:
        raise TrajoptInputError(f"euler_polynomial_arm: fitted variables {unmapped} map to no coordinate of the arm "
                                f"({', '.join(coordinates)})")
    q = ca.SX.sym("q", len(coordinates))
    inner = paths.lengths_and_moment_arms_function(paths.coordinates)
    lengths = ca.Function("euler_polynomial_lengths", [q],
                          [inner(ca.vertcat(*[q[coordinates.index(names[v])] for v in paths.coordinates]))[0]],
                          ["q"], ["lengths"])
    order = list(paths.muscles)
    fitted_names = {coordinate: variable for variable, coordinate in names.items()}
    return replace(arm, paths=tuple(_PolynomialPath(name, order.index(name), lengths) for name in arm.muscle_names),
                   fitted_paths=paths, fitted_coordinates=tuple(fitted_names.get(c, c) for c in coordinates))


def moment_arm_check(polynomial: ShoulderArm, geometric: ShoulderArm, q: np.ndarray, forces: np.ndarray):
    """Moment arms (nv x n x m) of both arms at configurations q (nq x n) and the muscle generalized forces
    (nv x n) at tendon forces (m x n): (polynomial arms, geometric arms, polynomial forces, geometric forces)."""
    n = q.shape[1]
    zero = np.zeros((geometric.multibody.nv, n))
    arms = [np.asarray(a.musculotendon_kinematics.map(n)(q, zero)[2]).reshape(geometric.multibody.nv, n, -1)
            for a in (polynomial, geometric)]
    return (*arms, *(np.einsum("vnm,mn->vn", a, forces) for a in arms))


def middle_angle_checks(built, solution, paths: PolynomialPaths) -> dict:
    """A YZY-shoulder solution's middle angle θ2 (0: gimbal lock), residuals and grid points outside the Euler
    fit's domain."""
    q = solution.value(built.q)
    crossings = [i for i in range(2, q.shape[1]) if q[1, i - 1] * q[1, i] < 0]
    return {"nodes": int(q.shape[1]), "nodes_outside": int(paths.domain.outside(q.T, EULER_VARIABLES).sum()),
            "middle_angle_range": (float(q[1].min()), float(q[1].max())),
            "min_abs_sin_middle_angle_after_start": float(np.abs(np.sin(q[1, 1:])).min()),
            "middle_angle_sign_changes": [(float(solution.time[i]), float(q[1, i - 1]), float(q[1, i]))
                                          for i in crossings],
            "last_time_near_lock": float(solution.time[np.flatnonzero(np.abs(q[1]) < NEAR_LOCK)[-1]]),
            "max_abs_residual_control": float(np.abs(solution.value(built.residuals)).max())}


def euler_torque_checks(arm: ShoulderArm, polynomial: ShoulderArm, paths: PolynomialPaths, built, solution) -> dict:
    """A YZY-polynomial-path solution against the geometric arm: generalized forces at its tendon forces, moment
    arms (all grid points and those inside the fit's domain), and the torque differences about the humerus axes."""
    q, forces = solution.value(built.q), solution.value(built.tendon_forces)
    poly_arms, geo_arms, poly_tau, geo_tau = moment_arm_check(polynomial, arm, q, forces)
    # the same torque differences about the humerus axes, (Jᵀ)⁻¹ Δτ_E, where J is far from singular
    away = np.abs(np.sin(q[1])) >= 0.3
    difference = poly_tau - geo_tau
    spatial = [np.linalg.solve(np.asarray(euler_angular_velocity_matrix(q[:3, i], "YZY")).T, difference[:3, i])
               for i in np.flatnonzero(away)]
    inside = ~paths.domain.outside(q.T, EULER_VARIABLES)
    return {"max_torque_difference": float(np.abs(difference).max()),
            "max_torque": float(np.abs(geo_tau).max()),
            "max_moment_arm_difference": float(np.abs(poly_arms - geo_arms).max()),
            "max_moment_arm_difference_inside": float(np.abs(poly_arms - geo_arms)[:, inside].max())
            if inside.any() else float("nan"),
            "max_humerus_torque_difference_away_from_lock": float(np.abs(spatial).max()) if spatial else float("nan")}


def euler_reach(arm: ShoulderArm, paths: PolynomialPaths, intervals: int = 40) -> dict:
    """The reach (problem, naive guess, warm start) with the YZY arm's paths replaced by ``paths``; the same from
    the naive guess with θ2 >= 0 (inside the fit's samples); the geometric-path YZY reach from the naive guess and
    from the polynomial-path solution. Solutions and the checks reported in summary.md."""
    poly_arm = euler_polynomial_arm(arm, paths)
    # The study compares a reach free to leave the fit's domain with one kept at θ2 >= 0: neither is bounded by the
    # domain's box, and each is reported against it.
    built = build_problem("YZY", arm=poly_arm, bound_by_path_domain=False)
    naive, warm, _ = solve_naive_and_warm(built, intervals)
    bounded = build_problem("YZY", arm=poly_arm, bound_by_path_domain=False)
    bounded.problem.require(bounded.q[1], lower=0.0, name="middle angle >= 0 (the Euler fit's samples)")
    inside = bounded.problem.solve(HermiteSimpson(intervals), solver(), guess=naive_guess(bounded))
    geometric = build_problem("YZY")
    geometric_naive = geometric.problem.solve(HermiteSimpson(intervals), solver(), guess=naive_guess(geometric))
    geometric_from_polynomial = geometric.problem.solve(HermiteSimpson(intervals), solver(warm=True), guess=naive)
    solves = {"polynomial": (built, naive), "polynomial_bounded": (bounded, inside),
              "geometric": (geometric, geometric_naive),
              "geometric_from_polynomial": (geometric, geometric_from_polynomial)}
    # At θ2 = 0 only θ1 + θ3 turns the humerus: a length depends on θ1 + θ3 alone and ∂l/∂θ1 = ∂l/∂θ3.
    lock = np.array([[t, 0.0, -t, built.start_elbow] for t in np.linspace(-np.pi, np.pi, 73)])
    at_lock = paths.lengths_and_moment_arms_function(EULER_VARIABLES)
    lengths, arms = (np.stack(v) for v in zip(*[[np.asarray(o) for o in at_lock(x)] for x in lock]))
    geo_lengths, _, geo_lock_arms = arm.musculotendon_kinematics.map(len(lock))(lock.T, np.zeros((4, len(lock))))
    geo_lengths = np.asarray(geo_lengths)
    geo_lock_arms = np.asarray(geo_lock_arms).reshape(4, len(lock), -1)
    return {"naive": naive, "warm": warm, "solves": {k: s for k, (_, s) in solves.items()},
            "path_domain": {k: print_path_domain_warning(b.path_domain_report(s))
                            for k, (b, s) in solves.items() if k.startswith("polynomial")},
            "angles": {k: middle_angle_checks(b, s, paths) for k, (b, s) in solves.items()},
            "torques": {k: euler_torque_checks(arm, poly_arm, paths, *solves[k])
                        for k in ("polynomial", "polynomial_bounded")},
            "fitted_middle_angle_range": tuple(paths.domain.ranges[1]),
            "lock_length_spread": float((lengths.max(axis=0) - lengths.min(axis=0)).max()),
            "lock_arm_asymmetry": float(np.abs(arms[:, :, 0] - arms[:, :, 2]).max()),
            "geometric_lock_length_spread": float((geo_lengths.max(axis=1) - geo_lengths.min(axis=1)).max()),
            "geometric_lock_arm_asymmetry": float(np.abs(geo_lock_arms[0] - geo_lock_arms[2]).max())}


def _status(solution) -> str:
    return solution.status if solution.success else f"{solution.status} (worst: {solution.worst_constraint})"


def euler_section(euler: dict, naive, warm, quaternion: dict, reused: bool) -> list[str]:
    """summary.md lines of the reach with the YZY Euler polynomial paths beside the quaternion-path solves
    (``quaternion``: their max_torque_difference and min_abs_sin_middle_angle_after_start)."""
    e_naive, e_warm = euler["naive"], euler["warm"]
    angles, torques, solves = euler["angles"], euler["torques"], euler["solves"]
    low, high = euler["fitted_middle_angle_range"]
    lines = [
        "## Reaching with the YZY Euler polynomial paths", "",
        "The same reach (problem, naive guess, warm start from 20 intervals, IPOPT settings) "
        "with the YZY Euler shoulder",
        "(`shoulder_arm(\"YZY\")`, start angles θ2 = 0, θ1 + θ3 = 0, residuals on the angles, as in",
        "results/shoulder_reaching) whose paths are the Euler fit above (`euler_polynomial_arm`): the dynamics get the",
        "moment arms -∂l/∂θ of the polynomial about the Euler angles. "
        + ("The fits were loaded from the committed paths_*.json (`--reuse-fits`), not refitted." if reused else
           "The fits are this run's."), "",
        "| | quaternion paths, naive guess | quaternion paths, warm start | YZY Euler paths, naive guess | "
        "YZY Euler paths, warm start |", "|---|---|---|---|---|",
        f"| status | {_status(naive)} | {_status(warm)} | {_status(e_naive)} | {_status(e_warm)} |",
        f"| iterations | {naive.iterations} | {warm.iterations} | {e_naive.iterations} | {e_warm.iterations} |",
        f"| objective | {naive.objective:.5g} | {warm.objective:.5g} | {e_naive.objective:.5g} | "
        f"{e_warm.objective:.5g} |",
        f"| IPOPT seconds | {naive.wall_time:.3g} | {warm.wall_time:.3g} | {e_naive.wall_time:.3g} | "
        f"{e_warm.wall_time:.3g} |",
        f"| max |Δτ| polynomial vs geometric moment arms (N·m) | {quaternion['max_torque_difference']:.3g} | | "
        f"{torques['polynomial']['max_torque_difference']:.3g} | |",
        f"| min |sin θ2| after t = 0 (YZY middle angle) | {quaternion['min_abs_sin_middle_angle_after_start']:.3g} | | "
        f"{angles['polynomial']['min_abs_sin_middle_angle_after_start']:.3g} | |", "",
        "IPOPT seconds on a shared machine (2 cores, other solves running). Δτ: quaternion paths about the humerus",
        "axes and the elbow; Euler paths about the Euler angles and the elbow "
        "(the generalized forces of each model).", "",
        "Through the gimbal-lock pose: the YZY shoulder, 40 intervals; θ2 is the YZY middle angle (0 with the arm",
        "hanging, the start). The geometric-path solves repeat `trajopt run shoulder-reaching`'s YZY problem.", "",
        "| | Euler paths, naive guess | Euler paths, θ2 >= 0, naive guess | geometric paths, naive guess | "
        "geometric paths, from the Euler-path solution |", "|---|---|---|---|---|"]
    keys = ("polynomial", "polynomial_bounded", "geometric", "geometric_from_polynomial")

    def row(label, cell):
        return f"| {label} | " + " | ".join(cell(k) for k in keys) + " |"

    lines += [
        row("status", lambda k: _status(solves[k])),
        row("iterations", lambda k: str(solves[k].iterations)),
        row("objective", lambda k: f"{solves[k].objective:.5g}"),
        row("IPOPT seconds", lambda k: f"{solves[k].wall_time:.3g}"),
        row("max |residual control|", lambda k: f"{angles[k]['max_abs_residual_control']:.3g}"),
        row("θ2 range (rad)", lambda k: "{:.3g} to {:.3g}".format(*angles[k]["middle_angle_range"])),
        row("min |sin θ2| after t = 0", lambda k: f"{angles[k]['min_abs_sin_middle_angle_after_start']:.3g}"),
        row(f"last t with |θ2| < {NEAR_LOCK} rad (s)", lambda k: f"{angles[k]['last_time_near_lock']:.3g}"),
        row("θ2 changes sign at", lambda k: "; ".join(f"t = {t:.3g} s ({a:.2g} → {b:.2g})" for t, a, b in
                                                       angles[k]["middle_angle_sign_changes"]) or "-"),
        row("grid points outside the Euler fit's domain",
            lambda k: f"{angles[k]['nodes_outside']} of {angles[k]['nodes']}"),
        row("worst coordinate outside the fit's domain, by (rad)",
            lambda k: "-" if k not in euler["path_domain"] or not euler["path_domain"][k].frames_outside else
            f"{euler['path_domain'][k].worst_coordinate}, {euler['path_domain'][k].worst_excess:.3g}"),
        row("max |Δτ| polynomial vs geometric (N·m)",
            lambda k: f"{torques[k]['max_torque_difference']:.3g}" if k in torques else "-"),
        row("max |Δ moment arm| (mm/rad) [inside the domain]",
            lambda k: f"{torques[k]['max_moment_arm_difference'] * 1e3:.3g} "
                      f"[{torques[k]['max_moment_arm_difference_inside'] * 1e3:.3g}]" if k in torques else "-"),
        row("max |(Jᵀ)⁻¹ Δτ| where |sin θ2| >= 0.3 (N·m)",
            lambda k: f"{torques[k]['max_humerus_torque_difference_away_from_lock']:.3g}" if k in torques else "-"),
        "",
        f"- the Euler fit's θ2 samples span [{low:.3g}, {high:.3g}] rad (scipy's YZY angles have θ2 >= 0): θ2 < 0 is "
        f"extrapolation, and so is 0 <= θ2 < {low:.3g}. A θ2 < 0 orientation has θ2 > 0 with θ1, θ3 shifted by π, a "
        "jump a continuous solution cannot make.",
        f"- Δτ: muscle generalized forces at the solution's tendon forces, polynomial vs geometric moment arms about "
        f"the Euler angles (torques up to {torques['polynomial']['max_torque']:.2f} N·m); (Jᵀ)⁻¹ Δτ: the same as "
        "humerus-axes torques where J is far from singular",
        f"- at gimbal lock (θ2 = 0, θ3 = -θ1, elbow at the start angle) a length depends on θ1 + θ3 only and "
        f"∂l/∂θ1 = ∂l/∂θ3; the polynomial's lengths vary by up to {euler['lock_length_spread'] * 1e3:.3g} mm over "
        f"θ1 in [-π, π] and |∂l/∂θ1 - ∂l/∂θ3| reaches {euler['lock_arm_asymmetry'] * 1e3:.3g} mm/rad (the geometric "
        f"paths: {euler['geometric_lock_length_spread'] * 1e3:.2g} mm and "
        f"{euler['geometric_lock_arm_asymmetry'] * 1e3:.2g} mm/rad), so at the start pose the polynomial's paths "
        "depend on the free plane-of-elevation angle θ1",
        f"- reading: from the naive guess the Euler-path reach converged in {e_naive.iterations} iterations "
        f"(geometric paths: {solves['geometric'].iterations}, objective {solves['geometric'].objective:.4g}, near "
        f"θ2 = 0 until t = {angles['geometric']['last_time_near_lock']:.2g} s); its solution swings through θ2 < 0 "
        f"(down to {angles['polynomial']['middle_angle_range'][0]:.3g} rad), where the fit extrapolates, and its "
        f"muscle generalized forces differ from the geometric paths' by up to "
        f"{torques['polynomial']['max_torque_difference']:.3g} N·m (quaternion paths: "
        f"{quaternion['max_torque_difference']:.3g} N·m): it converges, to the motion of other muscle dynamics. "
        "Started from it, the geometric YZY problem returns near θ2 = 0 (until t = "
        f"{angles['geometric_from_polynomial']['last_time_near_lock']:.2g} s) with objective "
        f"{solves['geometric_from_polynomial'].objective:.4g}, "
        f"below the quaternion-path reach's {naive.objective:.4g}: "
        "near lock its residuals on the angles stand for large humerus torques (results/shoulder_reaching/summary.md)",
        "- the geometric-path YZY problem started from the Euler-path solution uses the warm-start IPOPT settings "
        "(`WARM_START_OPTIONS`, reaching.py)",
        "- the geometric-path runs of both shoulders (KKT, re-simulation): results/shoulder_reaching/summary.md; "
        "the Euler-path solution: solution_euler_yzy.sto (written by the command)", ""]
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt run shoulder-reaching-polynomial", description=description(__doc__))
    add_out(parser, "shoulder-reaching-polynomial")
    parser.add_argument("--samples", type=int, default=1500, help="training configurations (held-out: 600)")
    parser.add_argument("--reuse-fits", action="store_true", help="load the fits saved in --out by an earlier run")
    args = parser.parse_args(argv)
    args.out = out_folder(args.out)  # one line when it cannot be a folder
    arm = shoulder_arm()
    sampler = GeometricArmSampler(arm)
    train, heldout = (sampler.sample(VARIABLES, DOMAIN.sample(args.samples, 0)),
                      sampler.sample(VARIABLES, DOMAIN.sample(600, 1)))
    start = time.perf_counter()
    saved = args.out / "paths_quaternion.json"
    if args.reuse_fits and saved.is_file():
        quaternion_paths = PolynomialPaths.load(saved)
    else:
        quaternion_paths, _ = fit_paths(train, ACCURATE, model="shoulder_arm",
                                        ranges={c: tuple(r) for c, r in zip(VARIABLES, DOMAIN.ranges)})
        quaternion_paths = PolynomialPaths(list(quaternion_paths), "shoulder_arm", DOMAIN)
        quaternion_paths.save(saved)
    quaternion_seconds = time.perf_counter() - start
    euler_train, _ = euler_samples(sampler, train)
    euler_heldout, euler_spatial = euler_samples(sampler, heldout)
    start = time.perf_counter()
    saved_euler = args.out / "paths_euler_yzy.json"
    euler_paths = PolynomialPaths.load(saved_euler) if args.reuse_fits and saved_euler.is_file() else None
    euler_paths = euler_paths or fit_paths(euler_train, EULER_SETTINGS, model="shoulder_arm",
                               ranges={c: (min(euler_train.q[:, i].min(), euler_heldout.q[:, i].min()),
                                           max(euler_train.q[:, i].max(), euler_heldout.q[:, i].max()))
                                       for i, c in enumerate(EULER_VARIABLES)})[0]
    euler_paths.save(saved_euler)
    euler_seconds = time.perf_counter() - start
    _, spatial = sampler.spatial(np.column_stack([np.sqrt(1 - np.sum(heldout.q[:, :3] ** 2, axis=1)), heldout.q]))
    q_errors = spatial_errors(quaternion_paths, heldout, spatial, euler=False)
    e_errors = spatial_errors(euler_paths, euler_heldout, euler_spatial, euler=True)
    print(f"fitted: quaternion {quaternion_seconds:.1f} s, Euler {euler_seconds:.1f} s")

    paths = QuaternionBallPaths(quaternion_paths, (SHOULDER_JOINT,))
    poly_arm = polynomial_arm(arm, paths)
    built = build_problem(arm=poly_arm)
    print("shoulder-reaching-polynomial: the reach with the quaternion polynomial paths (40 intervals from the naive "
          "guess, 20, 40 warm-started) ...", flush=True)
    naive, warm, coarse = solve_naive_and_warm(built)
    q = naive.value(built.q)
    forces = naive.value(built.tendon_forces)
    domain = {"naive guess": print_path_domain_warning(built.path_domain_report(naive)),
              "warm start": print_path_domain_warning(built.path_domain_report(warm))}
    # torques: polynomial moment arms (chain rule through Q* (Q)) vs geometric spatial moment arms
    n = q.shape[1]
    poly_arms, geo_arms, poly_tau, geo_tau = moment_arm_check(poly_arm, arm, q, forces)
    middle = analysis.yzy_middle_angle(arm, q)
    # the paper's identity: chain-rule moment arms = (Eᵀ)⁻¹ R_Q* at unit quaternions
    identity = 0.0
    for i in range(n):
        unit = q[:4, i] / np.linalg.norm(q[:4, i])
        x = np.concatenate([unit[1:] * np.sign(unit[0]), [q[4, i]]])
        for k, muscle in enumerate(poly_arm.muscle_names):
            path = quaternion_paths[muscle]
            columns = [VARIABLES.index(c) for c in path.coordinates]
            r_star = np.zeros(4)
            r_star[columns] = np.asarray(path.moment_arms_function(x[columns])).ravel()
            expected = np.asarray(spatial_from_constrained_jacobian(r_star[:3], np.sign(unit[0]) * unit)).ravel()
            identity = max(identity, float(np.abs(expected - poly_arms[:3, i, k]).max()))
    lines = ["# Shoulder reaching with polynomial muscle paths in constrained-quaternion coordinates", "",
             "Generated by `trajopt run shoulder-reaching-polynomial` "
             "(trajopt/examples/shoulder_reaching/polynomial_paths.py).",
             f"Domain: {DOMAIN.describe()}; {train.size} training / {heldout.size} held-out configurations (Latin",
             "hypercube), lengths and moment arms of the arm's straight-line geometric paths (the sampler). "
             "Held-out errors",
             "are RMS over configurations of the length and of the spatial moment arms "
             "(about the humerus angular velocity",
             "and the elbow), i.e. what the dynamics sees; 99th percentile of |error| in brackets.", "",
             "| muscle | quaternion terms | quaternion length RMS (mm) | quaternion spatial moment-arm RMS (mm) [p99] "
             "| YZY Euler terms | Euler length RMS (mm) | Euler spatial moment-arm RMS (mm) [p99] |",
             "|---|---|---|---|---|---|---|"]
    for muscle in arm.muscle_names:
        a, b = q_errors[muscle], e_errors[muscle]
        lines.append(f"| {muscle} | {a[3]} | {a[0]:.3f} | {a[1]:.3f} [{a[2]:.2f}] | {b[3]} | {b[0]:.3f} | "
                     f"{b[1]:.3f} [{b[2]:.2f}] |")
    reused = args.reuse_fits and saved.is_file() and saved_euler.is_file()
    timing = "fits loaded from an earlier run (--reuse-fits)" if reused else \
        f"quaternion {quaternion_seconds:.1f} s, Euler {euler_seconds:.1f} s (shared machine)"
    lines += ["", f"Fitting time: {timing}.",
              "Quaternion fit: `ACCURATE`; Euler fit: `ACCURATE` capped at degree 6 and 120 terms (run time).",
              "The Euler fit's spatial moment arms are (Jᵀ)⁻¹ r_E: near the YZY gimbal lock (arm hanging, inside this",
              "domain) J is singular and small errors in r_E become large torque errors.", "",
              "## Reaching with the quaternion polynomial paths", "",
              "| | naive guess | warm start (from 20 intervals) |", "|---|---|---|",
              f"| status | {naive.status} | {warm.status} |",
              f"| iterations | {naive.iterations} | {warm.iterations} |",
              f"| objective | {naive.objective:.5g} | {warm.objective:.5g} |",
              f"| IPOPT seconds | {naive.wall_time:.3g} | {warm.wall_time:.3g} |", "",
              *[f"- muscle paths ({kind}): {report.sentence()}" for kind, report in domain.items()],
              f"- shoulder and elbow muscle torques at the solution (its tendon forces), "
              "polynomial vs geometric spatial "
              f"moment arms: max |Δτ| = {np.abs(poly_tau - geo_tau).max():.4f} N·m (torques up to "
              f"{np.abs(geo_tau).max():.2f} N·m); "
              f"max |Δ moment arm| = {np.abs(poly_arms - geo_arms).max() * 1e3:.3f} mm",
              f"- chain-rule moment arms (-∂l/∂Q N(Q), eq. 4) vs (Eᵀ)⁻¹ R_Q* (eq. 15) of the polynomial: max "
              f"{identity:.2e} m",
              f"- YZY middle angle θ2 of the solution's orientations (0: arm hanging, gimbal lock): min |sin θ2| after "
              f"t = 0: {np.abs(np.sin(middle[1:])).min():.3g}",
              "- the geometric-path run of the same problem: results/shoulder_reaching/summary.md", ""]
    # written now and again below: a failed or interrupted Euler-path solve leaves the quaternion results
    (args.out / "summary.md").write_text("\n".join(lines))
    write_sto(args.out / "solution.sto", naive.table())
    print("shoulder-reaching-polynomial: the reach with the YZY Euler polynomial paths (40 intervals from the naive "
          "guess, 20, 40 warm-started; with θ2 >= 0) and the geometric-path YZY reach (from the naive guess and from "
          "the Euler-path solution) ...", flush=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's gimbal-lock warning while converting the Euler guess
        euler = euler_reach(shoulder_arm("YZY"), euler_paths)
    write_sto(args.out / "solution_euler_yzy.sto", euler["naive"].table())
    quaternion = {"max_torque_difference": float(np.abs(poly_tau - geo_tau).max()),
                  "min_abs_sin_middle_angle_after_start": float(np.abs(np.sin(middle[1:])).min())}
    lines += euler_section(euler, naive, warm, quaternion, reused)
    (args.out / "summary.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
