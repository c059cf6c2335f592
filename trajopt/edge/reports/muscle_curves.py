"""Plot the DeGroote 2016 curves and their inverses for both constant sets: ``trajopt run muscle-curves``."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from trajopt.studies.analysis.figures import pyplot, save_figure
from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import add_out
from trajopt.model.io.output import fresh_output

from trajopt.core.muscles import (
    DEGROOTE2016_OPENSIM,
    DEGROOTE2016_PUBLISHED,
    fiber_force_length_active_degroote2016,
    fiber_force_length_passive_degroote2016,
    fiber_force_length_passive_inverse_degroote2016,
    fiber_force_velocity_degroote2016,
    fiber_force_velocity_inverse_degroote2016,
    tendon_force_length_degroote2016,
    tendon_force_length_inverse_degroote2016,
)

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = 'plot the DeGroote 2016 curves (both constant sets)'

STYLES = {
    DEGROOTE2016_OPENSIM.name: dict(color="tab:blue", linestyle="-", label="OpenSim set (default)"),
    DEGROOTE2016_PUBLISHED.name: dict(color="tab:orange", linestyle="--", label="published / SymPy set"),
}


def _plot(figure_path: Path) -> None:
    plt = pyplot()
    tendon_length = np.linspace(0.95, 1.07, 300)
    tendon_force = np.linspace(-0.15, 2.0, 300)
    fiber_length = np.linspace(0.2, 1.8, 300)
    passive_force = np.linspace(0.0, 3.0, 300)
    fiber_velocity = np.linspace(-1.0, 1.0, 300)
    velocity_multiplier = np.linspace(0.0, 1.75, 300)

    figure, axes = plt.subplots(3, 3, figsize=(14, 12))
    for constants in (DEGROOTE2016_OPENSIM, DEGROOTE2016_PUBLISHED):
        style = STYLES[constants.name]
        axes[0, 0].plot(tendon_length, tendon_force_length_degroote2016(tendon_length, constants=constants), **style)
        axes[0, 1].plot(
            fiber_length, fiber_force_length_active_degroote2016(fiber_length, constants=constants), **style
        )
        axes[0, 1].plot(
            fiber_length,
            fiber_force_length_passive_degroote2016(fiber_length, constants=constants),
            **dict(style, linewidth=1.0, label=None),
        )
        axes[0, 2].plot(fiber_velocity, fiber_force_velocity_degroote2016(fiber_velocity, constants=constants), **style)
        axes[1, 0].plot(
            tendon_force, tendon_force_length_inverse_degroote2016(tendon_force, constants=constants), **style
        )
        axes[1, 1].plot(
            passive_force, fiber_force_length_passive_inverse_degroote2016(passive_force, constants=constants), **style
        )
        axes[1, 2].plot(
            velocity_multiplier,
            fiber_force_velocity_inverse_degroote2016(velocity_multiplier, constants=constants),
            **style,
        )

    # Bottom row: where the two sets differ (OpenSim minus published).
    differences = [
        (tendon_length, tendon_force_length_degroote2016, "tendon force"),
        (fiber_length, fiber_force_length_active_degroote2016, "active fiber force-length"),
        (fiber_length, fiber_force_length_passive_degroote2016, "passive fiber force-length"),
        (fiber_velocity, fiber_force_velocity_degroote2016, "force-velocity"),
    ]
    for axis, group in zip(axes[2], (differences[:1], differences[1:3], differences[3:])):
        for (x, curve, name), color in zip(group, ("tab:green", "tab:purple")):
            difference = curve(x, constants=DEGROOTE2016_OPENSIM) - curve(x, constants=DEGROOTE2016_PUBLISHED)
            axis.plot(x, difference, color=color, label=name)
        axis.legend(loc="best")

    labels = [
        ("tendon force-length (strain 0.049)", "normalized tendon length l̃T", "normalized tendon force f̃T"),
        ("fiber force-length: active (thick), passive (thin)", "normalized fiber length l̃M", "force multiplier"),
        ("fiber force-velocity", "normalized fiber velocity ṽM (lengthening > 0)", "force-velocity multiplier f̃V"),
        ("tendon force-length inverse", "normalized tendon force f̃T", "normalized tendon length l̃T"),
        ("passive fiber force-length inverse", "normalized passive fiber force f̃PE", "normalized fiber length l̃M"),
        ("fiber force-velocity inverse", "force-velocity multiplier f̃V", "normalized fiber velocity ṽM"),
        ("OpenSim minus published: tendon", "normalized tendon length l̃T", "difference in f̃T"),
        ("OpenSim minus published: fiber force-length", "normalized fiber length l̃M", "difference in multiplier"),
        ("OpenSim minus published: force-velocity", "normalized fiber velocity ṽM", "difference in f̃V"),
    ]
    for axis, (title, x_label, y_label) in zip(axes.ravel(), labels):
        axis.set_title(title)
        axis.set_xlabel(x_label)
        axis.set_ylabel(y_label)
        axis.grid(True, alpha=0.3)
    for axis in (*axes[0], axes[1, 2], *axes[2]):
        axis.axhline(0.0, color="black", linewidth=0.6)
    axes[0, 0].legend(loc="upper left")
    axes[0, 1].set_ylim(-0.1, 2.0)
    figure.suptitle(
        "DeGroote et al. (2016) musculotendon curves: OpenSim's DeGrooteFregly2016Muscle vs published constants"
    )
    save_figure(figure, figure_path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt run muscle-curves", description=description(__doc__))
    add_out(parser, "muscle-curves")
    args = parser.parse_args(argv)
    figure_path = fresh_output(args.out) / "degroote2016.png"
    _plot(figure_path)
    print(f"wrote {figure_path}")
    return 0
