"""Figure of a Solution (one panel per state variable and per control/algebraic variable), and ``pyplot``, the
matplotlib import every figure of the library goes through (``trajopt.studies.analysis.figures`` re-exports it)."""

from __future__ import annotations

from pathlib import Path


def pyplot():
    """matplotlib.pyplot on a file backend (Agg unless one such as pdf or svg is already chosen: files only, no
    window), imported on first use so that importing the library does not load matplotlib."""
    import matplotlib

    if matplotlib.get_backend().lower() not in ("agg", "pdf", "svg", "ps", "cairo"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_solution(solution, path, units: dict | None = None) -> Path:
    """Save states (top rows) and controls/algebraics (bottom rows) versus time to `path`; ``units`` maps a variable
    name to the unit shown on its axis (e.g. {"q": "rad", "u": "rad/s", "activations": "-"})."""
    plt = pyplot()
    problem = solution.discrete.problem
    variables = list(problem.states) + list(problem.controls) + list(problem.algebraics)
    figure, axes = plt.subplots(len(variables), 1, figsize=(7, 1.8 * len(variables) + 0.8), sharex=True,
                                squeeze=False)
    for axis, variable in zip(axes[:, 0], variables):
        values = solution.value(variable.symbol).reshape(variable.size, -1)
        for label, row in zip(variable.labels, values):
            axis.plot(solution.time, row, marker=".", markersize=3, label=label)
        unit = (units or {}).get(variable.name)
        axis.set_ylabel(f"{variable.name} ({unit})" if unit else variable.name)
        if variable.size > 1:
            axis.legend(fontsize="small")
    axes[-1, 0].set_xlabel("time (s)")
    state = "converged" if solution.success else f"FAILED: {solution.status}"
    figure.suptitle(f"{state}, objective {solution.objective:.6g}")
    figure.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
