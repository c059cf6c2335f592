"""Report of a muscle-driven inverse solution: files, figures against a reference solution and EMG, summary.md.

``write_report(folder, solution, ...)`` writes the solution's tables (``trajopt.studies.analysis`` writes them), a
per-muscle comparison with a reference solution (e.g. Moco's ``MocoInverse_solution.sto``: max and RMS
activation difference), figures of activations against that reference and against EMG, the forward
dynamics check, and a ``summary.md`` whose first lines say whether the solve succeeded and what to watch.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trajopt.studies.analysis.figures import pyplot, save_figure
from trajopt.studies.analysis.reaction_goal import affine_value
from trajopt.model.io.output import fresh_output


@dataclass(frozen=True)
class ActivationComparison:
    """Per muscle: max and RMS |trajopt − reference| activation over the common grid."""

    muscles: tuple[str, ...]
    max_difference: np.ndarray
    rms_difference: np.ndarray

    def rows(self) -> list[tuple[str, float, float]]:
        return [(m, float(a), float(b)) for m, a, b in zip(self.muscles, self.max_difference, self.rms_difference)]


def compare_activations(solution, reference) -> ActivationComparison:
    """``reference``: a ``Table`` with ``/forceset/<muscle>/activation`` columns (Moco's labels), interpolated
    linearly to the solution's times."""
    muscles = tuple(m for m in solution.muscle_names if f"/forceset/{m}/activation" in reference.labels)
    ours = solution.activations
    maxima, rms = [], []
    for muscle in muscles:
        theirs = np.interp(solution.times, reference.time, reference.column(f"/forceset/{muscle}/activation"))
        difference = ours[:, solution.muscle_names.index(muscle)] - theirs
        maxima.append(np.max(np.abs(difference)))
        rms.append(np.sqrt(np.mean(difference ** 2)))
    return ActivationComparison(muscles, np.array(maxima), np.array(rms))


def plot_activations(path, solution, reference=None, reference_name: str = "Moco", emg=None,
                     title: str = "Muscle activations") -> Path:
    """One small axes per muscle: trajopt solid, reference dashed, tracked EMG (``EmgTracking``) dotted."""
    plt = pyplot()
    names = solution.muscle_names
    columns = 8 if len(names) > 16 else 4
    rows = int(np.ceil(len(names) / columns))
    figure, axes = plt.subplots(rows, columns, figsize=(2.2 * columns, 1.5 * rows + 0.6), sharex=True, sharey=True,
                                squeeze=False)
    for k, name in enumerate(names):
        ax = axes[k // columns][k % columns]
        ax.plot(solution.times, solution.activations[:, k], color="tab:blue", linewidth=1.2)
        label = f"/forceset/{name}/activation"
        if reference is not None and label in reference.labels:
            ax.plot(reference.time, reference.column(label), color="tab:orange", linestyle="--", linewidth=1.0)
        if emg is not None and name in emg.columns:
            ax.plot(emg.emg.time, emg.reference(name), color="k", linestyle=":", linewidth=1.0)
        ax.set_title(name, fontsize=7)
        ax.tick_params(labelsize=6)
    axes[0][0].set_ylim(0, 1)  # shared by all: once, not per axes (each call revisits every sibling)
    for k in range(len(names), rows * columns):
        axes[k // columns][k % columns].axis("off")
    handles = [plt.Line2D([], [], color="tab:blue", label="trajopt")]
    if reference is not None:
        handles.append(plt.Line2D([], [], color="tab:orange", linestyle="--", label=reference_name))
    if emg is not None:
        handles.append(plt.Line2D([], [], color="k", linestyle=":", label="EMG (scaled)"))
    figure.legend(handles=handles, loc="upper right", fontsize=8)
    figure.suptitle(f"{title} (activation, 0-1; time in s)", fontsize=10)
    figure.subplots_adjust(left=0.04, right=0.98, bottom=0.04, top=1 - 0.9 / (1.5 * rows + 0.6), hspace=0.45,
                           wspace=0.12)
    return save_figure(figure, path, dpi=100, tight=False)


def summary_lines(solution, title: str, settings: list[tuple[str, str, str]] | None = None,
                  comparison: ActivationComparison | None = None, reference_objective: float | None = None,
                  timings: dict | None = None) -> list[str]:
    """Markdown lines: status and caveats first, then objective, timing, settings and comparison tables."""
    check = solution.dynamics_check()
    lines = [f"# {title}", ""]
    if solution.success:
        lines.append(f"Solve succeeded ({solution.status}) in {solution.iterations} IPOPT iterations.")
    else:
        lines.append(f"**Solve FAILED: {solution.status}** after {solution.iterations} iterations; worst "
                     f"constraint: {solution.worst_constraint}. The files hold the last iterate.")
    forces = solution.actuator_forces
    if forces.size:
        worst = np.max(np.abs(forces), axis=0)
        names = solution.actuator_names
        top = np.argsort(worst)[::-1][:3]
        lines.append("Largest actuator (reserve/residual) forces: "
                     + ", ".join(f"{names[k]} {worst[k]:.3g} N·m or N" for k in top) + ".")
    lines += ["", f"Objective: {solution.objective:.6g}"
              + (f" (reference {reference_objective:.6g}, difference "
                 f"{100 * (solution.objective / reference_objective - 1):+.3f} %)" if reference_objective else ""),
              "", "Objective terms: " + ", ".join(f"{k} {v:.6g}" for k, v in solution.effort_terms().items()), "",
              f"Forward check at the {solution.times.size} grid points: generalized-force balance error "
              f"{check.max_generalized_force_error:.2e} (N·m or N), forward-dynamics acceleration error "
              f"{check.max_acceleration_error:.2e} (rad/s² or m/s²).", ""]
    if timings:
        lines += ["| stage | seconds |", "|---|---|"] + [f"| {k} | {v:.3f} |" for k, v in timings.items()] + [""]
    if settings:
        lines += ["## Problem settings", "", "| setting | trajopt | reference |", "|---|---|---|"]
        lines += [f"| {a} | {b} | {c} |" for a, b, c in settings] + [""]
    if comparison is not None and comparison.muscles:
        order = np.argsort(comparison.max_difference)[::-1]
        lines += ["## Activations vs the reference solution", "",
                  f"Over {len(comparison.muscles)} muscles: largest max difference "
                  f"{comparison.max_difference.max():.4f}, median RMS {np.median(comparison.rms_difference):.4f}.",
                  "", "| muscle | max abs difference | RMS difference |", "|---|---|---|"]
        lines += [f"| {comparison.muscles[k]} | {comparison.max_difference[k]:.4f} | "
                  f"{comparison.rms_difference[k]:.4f} |" for k in order] + [""]
    return lines


def write_report(folder, solution, title: str, reference=None, reference_name: str = "Moco",
                 reference_objective: float | None = None, settings=None, timings=None, caveats=(),
                 emg=None, sections=None, figures: bool = True) -> Path:
    """Solution files, figures (unless not ``figures``) and ``summary.md`` in ``folder`` (created); returns the
    folder. ``sections``: ``folder -> markdown lines`` placed before the list of files (it may write figures)."""
    folder = fresh_output(folder)
    solution.write(folder)
    if figures:
        plot_activations(folder / "figures" / "activations.png", solution, reference, reference_name, emg)
    comparison = compare_activations(solution, reference) if reference is not None else None
    lines = summary_lines(solution, title, settings, comparison, reference_objective, timings)
    if caveats:
        lines[2:2] = ["**Caveats**", ""] + [f"- {c}" for c in caveats] + [""]
    if sections is not None:
        lines += list(sections(folder))
    lines += ["## Files the command writes", "",
              "`solution.sto` (Moco's labels), `activations.sto`, `excitations.sto`, `actuators.sto` "
              "(actuator forces), `forces.sto` (tendon and actuator forces), `joint_reactions.sto`"
              + ("; `figures/activations.png`." if figures else "."), ""]
    (folder / "summary.md").write_text("\n".join(lines))
    return folder


def reaction_goal_section(folder, goals, solution, baseline, baseline_name: str = "effort only") -> list[str]:
    """Markdown lines and a figure (``figures/joint_reactions_goal.png``) comparing the loads the
    ``JointReactionGoal``s minimize at ``solution`` with those at ``baseline`` (the same problem without them)."""
    plt = pyplot()
    inverse = solution.inverse
    kinematics = solution.variables.data.kinematics
    wrenches = solution.variables.external_wrenches
    lines = ["## Joint reaction goals", "",
             f"Resultant of each goal's load components (N), at the grid points, with and without the goal "
             f"({baseline_name}: objective {baseline.objective:.6g}).", "",
             "| joint (components) | peak, with goal | peak, " + baseline_name + " | mean, with goal | mean, "
             + baseline_name + " |", "|---|---|---|---|---|"]
    figure, axes = plt.subplots(len(goals), 1, figsize=(7, 2.6 * len(goals)), squeeze=False)
    for goal, axis in zip(goals, axes[:, 0]):
        affine = goal.affine_load(inverse.model, kinematics, wrenches)  # once for both solutions
        with_goal = np.linalg.norm(affine_value(affine, solution.muscle_forces), axis=1)
        without = np.linalg.norm(affine_value(affine, baseline.muscle_forces), axis=1)
        parts = ", ".join([f"force-{'xyz'[i]}" for i in goal.forces] + [f"moment-{'xyz'[i]}" for i in goal.moments])
        lines.append(f"| {goal.joint} ({parts}) | {with_goal.max():.1f} | {without.max():.1f} | "
                     f"{with_goal.mean():.1f} | {without.mean():.1f} |")
        axis.plot(solution.times, without, label=baseline_name)
        axis.plot(solution.times, with_goal, label=f"with the {goal.joint} goal (weight {goal.weight:g})")
        axis.set_ylabel(f"{goal.joint} (N)")
        axis.legend(fontsize=7)
    axes[-1, 0].set_xlabel("time (s)")
    save_figure(figure, Path(folder) / "figures" / "joint_reactions_goal.png", dpi=110)
    effort = solution.effort_terms()
    lines += ["", "Effort terms with the goals: " + ", ".join(f"{k} {v:.6g}" for k, v in effort.items())
              + "; without: " + ", ".join(f"{k} {v:.6g}" for k, v in baseline.effort_terms().items()) + ".",
              "Figure: `figures/joint_reactions_goal.png`.", ""]
    return lines
