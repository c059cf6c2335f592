"""Files of a shoulder-reaching run: .sto trajectories, figures and a 3D GIF of the arm (matplotlib)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from trajopt.studies.analysis.figures import pyplot, save_figure, write_animation
from trajopt.examples.shoulder_reaching.analysis import (euler_residuals_as_spatial_torques, shoulder_torques,
                                                         yzy_middle_angle)
from trajopt.model.io import write_sto
from trajopt.core.multibody import point_position
from trajopt.examples.shoulder_reaching.reaching import ReachingProblem


def write_solution(built: ReachingProblem, solution, folder: Path) -> None:
    """solution.sto (states and controls, OpenSim-readable) and solution.png (all trajectories)."""
    folder.mkdir(parents=True, exist_ok=True)
    write_sto(folder / "solution.sto", solution.table())
    quaternion = built.model.euler_sequence is None
    solution.plot(folder / "solution.png", units={
        "q": "quaternion components, elbow rad" if quaternion else "rad", "u": "rad/s", "accelerations": "rad/s²",
        "activations": "0-1", "excitations": "0-1", "residuals": "N·m (optimal force 1)"})


def plot_comparison(quaternion: tuple[ReachingProblem, object], euler: tuple[ReachingProblem, object],
                    path: Path) -> None:
    """YZY middle angle, quaternion norm error, shoulder residuals (as humerus-axes torques) and activations."""
    plt = pyplot()
    (qb, qs), (eb, es) = quaternion, euler
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    ax = axes[0, 0]
    ax.plot(qs.time, np.degrees(yzy_middle_angle(qb.model, qs.value(qb.q))), label="quaternion solution")
    ax.plot(es.time, np.degrees(es.value(eb.q)[1]), "--", label="YZY solution (θ2)")
    ax.axhline(0, color="k", lw=0.5)
    ax.set(title="YZY middle angle (0 = gimbal lock)", xlabel="time (s)", ylabel="deg")
    ax.legend()
    ax = axes[0, 1]
    q = qs.value(qb.q)
    ax.semilogy(qs.time, np.abs(np.linalg.norm(q[0:4], axis=0) - 1) + 1e-17)
    ax.set(title="quaternion solution: |‖Q‖ - 1|", xlabel="time (s)")
    ax = axes[1, 0]
    spatial = euler_residuals_as_spatial_torques(eb.model, es.value(eb.q), es.value(eb.residuals))
    shown = np.where(np.isfinite(spatial), spatial, np.nan)
    for k, axis in enumerate("xyz"):
        ax.plot(qs.time, qs.value(qb.residuals)[k], label=f"quaternion {axis}")
        ax.plot(es.time, shown[k], "--", label=f"YZY {axis}")
    ax.set(title="shoulder residual torque, humerus axes (N·m)", xlabel="time (s)")
    ax.legend(fontsize=7, ncol=2)
    ax = axes[1, 1]
    activations = qs.value(qb.activations)
    for k, name in enumerate(qb.model.muscle_names):
        ax.plot(qs.time, activations[k], label=name)
    ax.set(title="quaternion solution: activations", xlabel="time (s)")
    ax.legend(fontsize=7)
    save_figure(fig, path, dpi=110)


def plot_torque_identity(built: ReachingProblem, solution, path: Path) -> None:
    """Shoulder muscle torques along the solution by the three routes of ``analysis``."""
    plt = pyplot()
    torques = shoulder_torques(built.model, solution.value(built.q), solution.value(built.tendon_forces))
    fig, ax = plt.subplots(figsize=(7, 4))
    for k, axis in enumerate("xyz"):
        line, = ax.plot(solution.time, torques["spatial"][k], lw=3, alpha=0.4, label=f"{axis}: spatial moment arms")
        ax.plot(solution.time, torques["quaternion"][k], "--", color=line.get_color(), label=f"{axis}: ½ G R_Q (eq. 4)")
        ax.plot(solution.time, torques["constrained"][k], ":", color="k", lw=1)
    ax.set(title="shoulder muscle torque (humerus axes); dotted: (Eᵀ)⁻¹ R_Q* (eq. 15)", xlabel="time (s)", ylabel="N·m")
    ax.legend(fontsize=7)
    save_figure(fig, path, dpi=110)


def animate_arm(built: ReachingProblem, solution, path: Path, frames: int = 30) -> None:
    """GIF of the arm in 3D (oblique and front views), muscle lines coloured by activation (blue 0, red max)."""
    plt = pyplot()
    arm = built.model
    model = arm.multibody
    times = np.linspace(solution.initial_time, solution.initial_time + solution.duration, frames)
    q = np.atleast_2d(solution.value(built.q, at=times))
    activations = np.atleast_2d(solution.value(built.activations, at=times))
    top = max(float(activations.max()), 1e-3)
    colormap = plt.get_cmap("coolwarm")
    elbow = model.joint("elbow").parent
    shoulder = np.asarray(model.joint("shoulder").parent.translation)

    def position(k, body, location):
        if body == "ground":
            return np.asarray(location, dtype=float)
        return np.asarray(point_position(model, q[:, k], body, location)).ravel()

    fig = plt.figure(figsize=(7.0, 3.8))
    views = [fig.add_subplot(1, 2, i + 1, projection="3d") for i in range(2)]
    fig.subplots_adjust(left=0.0, right=1.0, bottom=0.0, top=0.86, wspace=0.05)

    def draw(k):
        for ax, (elevation, azimuth), name in zip(views, ((20, -50), (5, 0)),
                                                  ("oblique view", "front view (x toward the viewer)")):
            ax.cla()
            bones = np.array([shoulder, position(k, "r_humerus", elbow.translation), position(k, *arm.hand)])
            # Axes: ground x (forward), z (lateral), y (up).
            ax.plot(bones[:, 0], bones[:, 2], bones[:, 1], "k-", lw=4)
            for m, muscle_path in enumerate(arm.paths):
                points = np.array([position(k, p.body, p.location) for p in muscle_path.points])
                ax.plot(points[:, 0], points[:, 2], points[:, 1], color=colormap(activations[m, k] / top), lw=2)
            ax.scatter([built.target[0]], [built.target[2]], [built.target[1]], color="g", s=25)
            ax.set(xlim=shoulder[0] + np.array([-0.3, 0.4]), ylim=shoulder[2] + np.array([-0.25, 0.45]),
                   zlim=shoulder[1] + np.array([-0.6, 0.1]), xticks=[], yticks=[], zticks=[])
            ax.set_box_aspect((0.7, 0.7, 0.7), zoom=1.1)
            ax.set_title(name, fontsize=8)
            ax.view_init(elevation, azimuth)
        fig.suptitle(f"t = {times[k]:.2f} s; muscle colour: activation 0 (blue) to {top:.2f} (red); green: target",
                     fontsize=8)

    write_animation(fig, draw, frames, path, fps=10, dpi=70)
