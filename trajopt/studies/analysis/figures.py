"""The figure and animation module every command and example draws with: matplotlib's pyplot on a file backend
(``trajopt.core.ocp.figures.pyplot``, in the core so that ``Solution.plot`` shares it), saving a figure, writing a GIF
from a per-frame drawing function, and the curve figures of inverse dynamics and static optimization results
(optionally against a reference such as OpenSim).

Curves: trajopt solid, reference dashed in the same colour. Matplotlib is imported lazily, so importing this module
costs nothing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from trajopt.core.ocp.figures import pyplot


def save_figure(figure, path, dpi: int = 110, tight: bool = True) -> Path:
    """Lay out (``tight``), save ``figure`` to ``path`` (folders made) and close it."""
    plt = pyplot()
    if tight:
        figure.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=dpi)
    plt.close(figure)
    return path


def write_animation(figure, draw, frames: int, path, fps: int = 12, dpi: int = 70) -> Path:
    """A GIF of ``figure`` redrawn by ``draw(frame)`` for frame = 0 .. frames-1 (Pillow); closes the figure."""
    plt = pyplot()
    from matplotlib.animation import PillowWriter

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = PillowWriter(fps=fps)
    with writer.saving(figure, str(path), dpi=dpi):
        for frame in range(frames):
            draw(frame)
            writer.grab_frame()
    plt.close(figure)
    return path


def plot_series(path, title: str, ylabel: str, times, labels, values, reference_times=None,
                reference_values=None, reference_name: str = "OpenSim", ours_name: str = "trajopt",
                extra=None) -> Path:
    """One axes: each column of ``values`` (frames x labels) solid, the reference's dashed.

    ``extra``: optional (name, times, values) drawn dotted (e.g. another trajopt variant).
    """
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(7.5, 4.5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    values = np.asarray(values)
    for j, label in enumerate(labels):
        color = colors[j % len(colors)]
        axes.plot(times, values[:, j], color=color, linewidth=1.8, label=label)
        if reference_values is not None:
            axes.plot(reference_times, np.asarray(reference_values)[:, j], color=color, linestyle="--", linewidth=1.2)
        if extra is not None:
            axes.plot(extra[1], np.asarray(extra[2])[:, j], color=color, linestyle=":", linewidth=1.2)
    handles, names = axes.get_legend_handles_labels()
    styles = [plt.Line2D([], [], color="k", linestyle="-", label=ours_name)]
    if reference_values is not None:
        styles.append(plt.Line2D([], [], color="k", linestyle="--", label=reference_name))
    if extra is not None:
        styles.append(plt.Line2D([], [], color="k", linestyle=":", label=extra[0]))
    axes.legend(handles + styles, names + [s.get_label() for s in styles], fontsize=8, ncol=2, loc="best")
    axes.set_title(title, fontsize=10)
    axes.set_xlabel("time [s]")
    axes.set_ylabel(ylabel)
    axes.grid(alpha=0.3)
    return save_figure(figure, path, dpi=110)


def plot_joint_reactions(path, inverse_dynamics, joints, title: str) -> Path:
    """Forces and moments of ``joints`` (names), one row per joint (Figure 20 of the arm26 paper)."""
    plt = pyplot()
    result = inverse_dynamics
    figure, axes = plt.subplots(len(joints), 2, figsize=(9, 3.2 * len(joints)), squeeze=False)
    for row, joint in enumerate(joints):
        k = result.joint_names.index(joint)
        for column, (kind, values, unit) in enumerate((("force", result.reaction_forces, "N"),
                                                        ("moment", result.reaction_moments, "N·m"))):
            ax = axes[row, column]
            for axis in range(3):
                ax.plot(result.times, values[:, k, axis], label="xyz"[axis])
            ax.set_title(f"{joint} reaction {kind} on {result.child_bodies[k]} ({result.expressed_in.label} axes)",
                         fontsize=9)
            ax.set_xlabel("time [s]")
            ax.set_ylabel(unit)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
    figure.suptitle(title, fontsize=10)
    return save_figure(figure, path, dpi=110)
