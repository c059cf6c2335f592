"""Outputs of the arm26 reaching problems: OpenSim-readable .sto files, figures, a GIF, the Moco and OpenSim checks."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import casadi as ca
import numpy as np

from trajopt.studies.analysis.figures import pyplot, save_figure, write_animation
from trajopt.model.io.tables import Table, read_table, write_sto
from trajopt.core.multibody import point_position
from trajopt.model.io.opensim_reference import opensim_available, run_opensim_task
from trajopt.model.osim import load_osim
from trajopt.model.paths.geometric import GeometricPaths
from trajopt.studies.prediction import MuscleDrivenProblem

HERE = Path(__file__).resolve().parent


def opensim_state_labels(built: MuscleDrivenProblem) -> tuple[list[str], list[str], list[str]]:
    """OpenSim state paths of q, u and activations (as Moco writes them)."""
    joints = {c.name: c.joint for c in built.model.osim.spec.coordinates}
    names = built.model.coordinate_names
    return ([f"/jointset/{joints[n]}/{n}/value" for n in names], [f"/jointset/{joints[n]}/{n}/speed" for n in names],
            [f"/forceset/{m}/activation" for m in built.model.muscle_names])


def trajectories(built: MuscleDrivenProblem, solution) -> dict[str, np.ndarray]:
    """q, u, activations, muscle controls, residuals and tendon forces on the grid, frames x columns."""
    columns = solution.time.size
    result = {"time": solution.time}
    for name in ("q", "u", "activations", "excitations", "residuals", "tendon_forces"):
        expression = getattr(built, name)
        if expression is not None:
            result[name] = np.asarray(solution.value(expression)).reshape(-1, columns).T
    return result


# Axis units of solution.png (arm26's two coordinates are rotational; controls and activations are fractions).
SOLUTION_UNITS = {"q": "rad", "u": "rad/s", "accelerations": "rad/s²", "activations": "0-1", "excitations": "0-1",
                  "residuals": "× optimal force, N·m", "actuator_controls": "× optimal force, N·m"}


def write_results(built: MuscleDrivenProblem, solution, folder, animate: bool = True, hand=None, target=None,
                  moco: Table | None = None, animation_frames: int = 26) -> Path:
    """Write the solution (.sto), OpenSim states/controls, muscle forces, figures and a GIF to ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    write_sto(folder / "solution.sto", solution.table())
    data = trajectories(built, solution)
    q_labels, u_labels, a_labels = opensim_state_labels(built)
    states = np.hstack([data["q"], data["u"], data["activations"]])
    write_sto(folder / "states.sto", Table(data["time"], tuple(q_labels + u_labels + a_labels), states,
                                           name="states"))
    if "excitations" in data:
        write_sto(folder / "controls.sto", Table(data["time"],
                                                 tuple(f"/forceset/{m}" for m in built.model.muscle_names),
                                                 data["excitations"], name="controls"))
    write_sto(folder / "muscle_forces.sto", Table(data["time"], tuple(built.model.muscle_names), data["tendon_forces"],
                                                  name="tendon_forces_N"))
    solution.plot(folder / "solution.png", units=SOLUTION_UNITS)
    plot_muscles(built, data, folder / "muscles.png", moco)
    if animate:
        animate_arm(built, data, folder / "arm.gif", hand=hand, target=target, frames=animation_frames)
    return folder


def read_moco_solution(path) -> Table:
    return read_table(path)


def plot_muscles(built: MuscleDrivenProblem, data: dict, path, moco: Table | None = None) -> None:
    """Coordinates, muscle controls/activations and tendon forces; Moco's solution dashed when given."""
    plt = pyplot()
    figure, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    names = built.model.coordinate_names
    colours = plt.cm.tab10(np.arange(len(built.model.muscle_names)))
    q_labels, _, a_labels = opensim_state_labels(built)
    for k, name in enumerate(names):
        axes[0].plot(data["time"], np.degrees(data["q"][:, k]), label=f"{name} (trajopt)")
        if moco is not None:
            axes[0].plot(moco.time, np.degrees(moco.column(q_labels[k])), "k--", lw=1,
                         label="Moco" if k == 0 else None)
    axes[0].set_ylabel("angle (deg)")
    controls = data.get("excitations", data["activations"])
    for k, muscle in enumerate(built.model.muscle_names):
        axes[1].plot(data["time"], controls[:, k], color=colours[k], label=muscle)
        if moco is not None:
            axes[1].plot(moco.time, moco.column(f"/forceset/{muscle}"), "--", color=colours[k], lw=1)
        axes[2].plot(data["time"], data["tendon_forces"][:, k], color=colours[k], label=muscle)
    axes[1].set_ylabel("excitation" if "excitations" in data else "activation")
    axes[2].set_ylabel("tendon force (N)")
    axes[0].legend(fontsize="small")
    axes[1].legend(fontsize="small", ncol=2)
    for axis in axes:
        axis.set_xlabel("time (s)")
    if moco is not None:
        axes[1].set_title("dashed: Moco (OpenSim 4.6)", fontsize="small")
    save_figure(figure, path, dpi=110)


def _muscle_points(built: MuscleDrivenProblem):
    """Per muscle, its .osim path points as (body, location) (wrap objects are not drawn)."""
    osim = built.model.osim
    result = []
    for muscle in built.model.muscle_specs:
        points = []
        for point in muscle.path.points:
            body_point = osim.point(point.frame, point.location)
            points.append((body_point.body, body_point.location))
        result.append(points)
    return result


def _drawing_points(built: MuscleDrivenProblem, hand) -> tuple[ca.Function, list[int]]:
    """Function q -> 3 x N points (shoulder, elbow, hand, then every muscle's path points) and muscle sizes."""
    model = built.model.multibody
    q = ca.SX.sym("q", model.nq)
    marker = built.model.osim.marker(hand) if hand else None
    hand_point = (marker.body, marker.location) if marker else ("r_ulna_radius_hand", (0.0, -0.181479, 0.0))
    points = [("r_humerus", (0, 0, 0)), ("r_ulna_radius_hand", (0, 0, 0)), hand_point]
    sizes = []
    for muscle_points in _muscle_points(built):
        points += muscle_points
        sizes.append(len(muscle_points))
    columns = [ca.DM(location) if body == "ground" else point_position(model, q, body, location)
               for body, location in points]
    return ca.Function("drawing_points", [q], [ca.horzcat(*columns)]), sizes


def animate_arm(built: MuscleDrivenProblem, data: dict, path, hand=None, target=None, frames: int = 26) -> None:
    """GIF of the arm in the sagittal (x, y) plane, muscle lines coloured by activation (PillowWriter)."""
    plt = pyplot()
    function, sizes = _drawing_points(built, hand)
    chosen = np.linspace(0, data["time"].size - 1, frames).round().astype(int)
    colormap = plt.cm.plasma
    figure, axis = plt.subplots(figsize=(3.6, 3.6))

    def draw(frame):
        index = chosen[frame]
        points = np.asarray(function(data["q"][index]))
        axis.clear()
        axis.plot(points[0, :3], points[1, :3], "-o", color="0.3", lw=4, ms=5)
        start = 3
        for k, size in enumerate(sizes):
            line = points[:, start:start + size]
            start += size
            axis.plot(line[0], line[1], color=colormap(float(data["activations"][index, k])), lw=2)
        if target is not None:
            axis.plot(target[0], target[1], "x", color="red", ms=10, mew=2)
        axis.set_xlim(-0.25, 0.45)
        axis.set_ylim(0.2, 0.9)
        axis.set_aspect("equal")
        axis.set_title(f"t = {data['time'][index]:.2f} s (colour: activation 0-1)", fontsize=7)
        axis.tick_params(labelsize=6)

    write_animation(figure, draw, chosen.size, path, fps=12, dpi=80)


def compare_with_moco(built: MuscleDrivenProblem, solution, moco: Table) -> dict:
    """Largest differences from Moco's solution at Moco's times: coordinates (rad), excitations, activations."""
    q_labels, _, a_labels = opensim_state_labels(built)
    at = np.clip(moco.time, solution.initial_time, solution.initial_time + solution.duration)
    q = np.asarray(solution.value(built.q, at=at)).reshape(-1, at.size).T
    e = np.asarray(solution.value(built.excitations, at=at)).reshape(-1, at.size).T
    a = np.asarray(solution.value(built.activations, at=at)).reshape(-1, at.size).T
    moco_q = np.column_stack([moco.column(label) for label in q_labels])
    moco_e = np.column_stack([moco.column(f"/forceset/{m}") for m in built.model.muscle_names])
    moco_a = np.column_stack([moco.column(label) for label in a_labels])
    return {"max_coordinate_difference_rad": float(np.max(np.abs(q - moco_q))),
            "max_excitation_difference": float(np.max(np.abs(e - moco_e))),
            "max_activation_difference": float(np.max(np.abs(a - moco_a)))}


def opensim_muscle_check(built: MuscleDrivenProblem, solution, folder) -> dict:
    """OpenSim's tendon forces, musculotendon lengths and moment arms at the solution's states vs trajopt's.

    Needs opensim (child process); returns {} without it. Writes ``opensim_muscle_check.json`` in ``folder``.
    """
    if not opensim_available():
        return {}
    folder = Path(folder)
    data = trajectories(built, solution)
    result = run_opensim_task("arm26_muscle_states", {
        "model": str(built.model.osim.spec.file), "states": str((folder / "states.sto").resolve()),
        "muscles": np.array(built.model.muscle_names, dtype=str)})
    lengths, _, _ = built.model.musculotendon_kinematics.map(data["q"].shape[0])(data["q"].T, data["u"].T)
    lengths = np.asarray(lengths).T
    check = {
        "opensim_max_tendon_force_difference_N": float(np.max(np.abs(result["tendon_forces"] - data["tendon_forces"]))),
        "opensim_max_tendon_force_N": float(np.max(np.abs(result["tendon_forces"]))),
        "opensim_max_length_difference_m": float(np.max(np.abs(result["lengths"] - lengths))),
        "opensim_max_force_difference_by_muscle_N": {
            m: float(np.max(np.abs(result["tendon_forces"][:, k] - data["tendon_forces"][:, k])))
            for k, m in enumerate(built.model.muscle_names)},
    }
    # Moment arms along the solution: OpenSim's computeMomentArm vs the polynomial surrogate's -dl/dq.
    frames = data["q"].shape[0]
    sampled = run_opensim_task("sample_paths", {
        "model": str(built.model.osim.spec.file), "coordinates": np.array(built.model.coordinate_names, dtype=str),
        "configurations": data["q"], "muscles": np.array(built.model.muscle_names, dtype=str)})
    arms = np.asarray(built.model.musculotendon_kinematics.map(frames)(data["q"].T, data["u"].T)[2])
    arms = arms.reshape(len(built.model.muscle_names), frames, -1).transpose(1, 0, 2)  # frames x muscles x speeds
    errors = np.abs(arms - sampled["moment_arms"]).max(axis=0)
    check["opensim_max_moment_arm_error_mm"] = {
        m: dict(zip(built.model.coordinate_names, np.round(1000 * errors[k], 3).tolist()))
        for k, m in enumerate(built.model.muscle_names)}
    check["opensim_max_abs_moment_arm_mm"] = {
        m: dict(zip(built.model.coordinate_names,
                    np.round(1000 * np.abs(sampled["moment_arms"][:, k]).max(0), 2).tolist()))
        for k, m in enumerate(built.model.muscle_names)}
    (folder / "opensim_muscle_check.json").write_text(json.dumps(check, indent=1) + "\n")
    return check


@lru_cache(maxsize=None)
def _exact_paths_function(model_file: str, coordinates: tuple[str, ...]):
    """The model's exact-mode geometric paths as q -> (lengths, −∂l/∂q), built once per process (seconds for
    arm26's ellipsoid wraps)."""
    return GeometricPaths(load_osim(model_file)).lengths_and_moment_arms_function(coordinates)


def smooth_paths_check(built: MuscleDrivenProblem, solution, folder) -> dict:
    """Smooth-mode paths along the solution vs exact mode (OpenSim's wrapped path, computed by trajopt): largest
    length and moment-arm (−∂l/∂q) differences per muscle at the grid points. Writes ``smooth_paths_check.json``."""
    model = built.model
    q = trajectories(built, solution)["q"]
    smooth = model.paths.lengths_and_moment_arms_function(model.coordinate_names)
    exact = _exact_paths_function(str(model.osim.spec.file), tuple(model.coordinate_names))
    pairs = [(smooth(x), exact(x)) for x in q]
    lengths = np.array([np.abs(np.asarray(s[0]) - np.asarray(e[0])).ravel() for s, e in pairs])
    arms = np.array([np.abs(np.asarray(s[1]) - np.asarray(e[1])).max(axis=1) for s, e in pairs])
    check = {"band_m": model.paths.smoothing.band, "frames": int(q.shape[0]),
             "max_length_difference_mm": {m: round(1000 * float(lengths[:, k].max()), 4)
                                          for k, m in enumerate(model.muscle_names)},
             "max_moment_arm_difference_mm": {m: round(1000 * float(arms[:, k].max()), 4)
                                              for k, m in enumerate(model.muscle_names)}}
    Path(folder).mkdir(parents=True, exist_ok=True)
    (Path(folder) / "smooth_paths_check.json").write_text(json.dumps(check, indent=1) + "\n")
    return check


def write_geometric_summary(folder, report: dict, command: str) -> Path:
    """``summary.md`` of a ``--paths geometric`` run: the solves, and how far smooth mode's paths are from exact
    mode's (and OpenSim's) along each solution."""
    lines = ["# arm26 reaching with geometric paths in smooth mode", "",
             f"Generated by `{command}`.", "",
             "The muscles' paths are arm26's own geometric paths (straight segments wrapped over the TRI cylinder, the "
             "TRIlongglen cylinder and the TRIlonghh and BIClonghh ellipsoids), in smooth mode "
             "(`trajopt.model.paths.wrapping.smooth`): closed-form wraps blended in over a band. This is an "
             "approximation chosen for optimization; the tables below give its deviation from the exact (OpenSim's) "
             "wrapped paths along each solution. Moment arms are −∂l/∂q of the smooth length.", "",
             "Each problem is solved from the naive guess and again warm-started from a 10-interval solution "
             "(non-convex: the two may end in different local optima).", "",
             "| problem | status | iterations (naive / warm) | objective (naive / warm) | IPOPT s | worst constraint "
             "| re-simulation drift (rad) |",
             "|---|---|---|---|---|---|---|"]
    for name, record in report.items():
        naive, warm = record["naive"], record["warm"]
        lines.append(f"| {name} | {naive['status']} | {naive['iterations']} / {warm['iterations']} | "
                     f"{naive['objective']:.6g} / {warm['objective']:.6g} | {naive['ipopt_seconds']:.2f} | "
                     f"{naive['worst_constraint']} | "
                     f"{naive['max_resimulation_drift']:.2g} |")
    moco = report.get("moco")
    if moco:
        lines += ["", f"Moco's objective on its problem (OpenSim's exact paths, `moco_reference/`): "
                      f"{moco['moco_objective']:.6g}; trajopt's with smooth paths differs by "
                      f"{100 * moco['relative_difference']:+.2f} %. Largest differences from Moco's solution: "
                      f"activation {moco['max_activation_difference']:.3f}, coordinate "
                      f"{moco['max_coordinate_difference_rad']:.3f} rad."]
    if moco and moco.get("band_study"):
        lines += ["", "Moco's problem from the naive guess at other smoothing bands (`reaching.band_study`): the "
                      "band trades the blend's length error (at most 0.273 band per wrapped segment) against "
                      "curvature.", "",
                  "| band (mm) | status | iterations | objective | IPOPT s |", "|---|---|---|---|---|"]
        for row in moco["band_study"]:
            lines.append(f"| {1000 * row['band_m']:g} | {row['status']} | {row['iterations']} | "
                         f"{row['objective']:.6g} | {row['ipopt_seconds']:.2f} |")
    for name, record in report.items():
        check = record.get("paths")
        if not check:
            continue
        lines += ["", f"## {name}: smooth vs exact paths at the {check['frames']} grid points "
                      f"(band {1000 * check['band_m']:g} mm)", "",
                  "| muscle | max length difference (mm) | max moment-arm difference (mm) |", "|---|---|---|"]
        for muscle, value in check["max_length_difference_mm"].items():
            lines.append(f"| {muscle} | {value:.4f} | {check['max_moment_arm_difference_mm'][muscle]:.4f} |")
        if "opensim_max_length_difference_m" in record:
            lines += ["", f"OpenSim 4.6 at the same states (child process): lengths within "
                          f"{1000 * record['opensim_max_length_difference_m']:.3f} mm, tendon forces within "
                          f"{record['opensim_max_tendon_force_difference_N']:.3g} N "
                          f"(of {record['opensim_max_tendon_force_N']:.4g} N)."]
    large = sorted({f"{muscle} in {name} ({value:.2f} mm)" for name, record in report.items()
                    for muscle, value in record.get("paths", {}).get("max_length_difference_mm", {}).items()
                    if value > 0.5})
    if large:
        lines += ["", "## Caveats", "",
                  f"- Smooth mode departs from OpenSim's wrapped path by more than 0.5 mm "
                  f"for {', '.join(large)}: where "
                  "a path's wrap objects act together (TRIlong: a cylinder and an ellipsoid on its shoulder segment, "
                  "whose OpenSim passes smooth mode does not reproduce), or OpenSim's iterative ellipsoid path departs "
                  "from smooth mode's plane section. The muscle forces above say what that does to the dynamics."]
    path = Path(folder) / "summary.md"
    path.write_text("\n".join(lines) + "\n")
    return path
