"""The ``trajopt`` console script.

``trajopt run PROBLEM ...`` runs a ready problem, ``trajopt bench NAME ...`` a benchmark, and
``trajopt fit-paths ...`` fits polynomial muscle-path surrogates. Each problem or benchmark is a
module with ``main(argv) -> int`` that parses its own options, so ``trajopt run NAME --help``
shows them.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from trajopt.errors import TrajoptInputError

# name -> (module with main(argv), one-line description)
PROBLEMS = {
    "das3-serratus": ("problems.das3_serratus.serratus_fit", "DAS3 serratus anterior: Euler vs quaternion polynomial paths (table + figure)"),
    "gait2d-prediction": ("problems.gait2d.main", "2D_gait.osim predictive half gait cycle (Moco example2DWalking); --tracking for the tracking variant"),
    "arm26-reaching": ("problems.arm26_reaching.reaching", "arm26 muscle-driven reaching; Moco and bioptim static_arm comparisons"),
    "shoulder-reaching": ("problems.shoulder_reaching.main", "3D arm reach from gimbal lock: quaternion vs YZY Euler shoulder"),
    "muscle-curves": ("trajopt.reports.muscle_curves", "plot the DeGroote 2016 curves to results/muscle_curves/"),
    "walk3d-inverse": ("problems.walk3d.inverse",
                       "Moco's 3D walking MocoInverse (80 muscles, GRFs, function-based paths); --emg, --elastic-tendons"),
    "shoulder-reaching-polynomial": ("problems.shoulder_reaching.polynomial_paths",
                                     "3D arm reach with polynomial paths in constrained-quaternion shoulder coordinates vs Euler"),
    "path-fits": ("problems.path_fits.main",
                  "held-out accuracy of path surrogates: trajopt vs OpenSim's PolynomialPathFitter vs Moco (results/path_fits/)"),
    "arm26-static-optimization": ("problems.arm26_static_optimization.main",
                                  "arm26 inverse dynamics + static optimization vs OpenSim (results/arm26_static_optimization/)"),
}

BENCHMARKS: dict[str, tuple[str, str]] = {
    "paths": ("trajopt.bench.paths", "arm26 muscle lengths + moment arms: polynomial surrogate vs OpenSim; fitting time"),
    "gait2d": ("trajopt.bench.gait2d", "2D gait prediction: wall time and iterations vs Moco; 25/50/100 intervals"),
    "reaching": ("trajopt.bench.reaching", "arm26 reaching: trajopt vs Moco (run in a child process) and bioptim static_arm"),
    "nlp-derivatives": ("trajopt.bench.nlp_derivatives", "NLP build + derivative evaluation: point-by-point vs expanded graph"),
    "dynamics": ("trajopt.bench.dynamics", "inverse/forward dynamics per call, arm26 and 2D_gait: trajopt vs OpenSim"),
    "walk3d-inverse": ("trajopt.bench.walk3d_inverse",
                       "Moco's 3D walking MocoInverse: trajopt (rigid, elastic) vs Moco, end to end, same run"),
    "static-optimization": ("trajopt.bench.static_optimization",
                            "arm26 static optimization, 101-frame elbow motion: trajopt vs OpenSim"),
}

COMMANDS: dict[str, tuple[str, str]] = {
    "fit-paths": ("trajopt.paths.cli", "fit polynomial muscle-path surrogates to an OpenSim model"),
    "inverse-dynamics": ("trajopt.tools.inverse_dynamics",
                         "inverse dynamics of a motion with external loads (OpenSim's InverseDynamicsTool)"),
    "static-optimization": ("trajopt.tools.static_optimization",
                            "static optimization of a motion with external loads (OpenSim's Static Optimization)"),
    "muscle-analysis": ("trajopt.tools.muscle_analysis",
                        "muscle lengths and moment arms along a motion (OpenSim's MuscleAnalysis)"),
    "muscle-inverse": ("trajopt.tools.muscle_inverse",
                       "muscle-driven inverse simulation of a measured motion (Moco's MocoInverse)"),
}


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad input in one line (exit code 2), without the usage dump."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def _listing(entries: dict[str, tuple[str, str]]) -> str:
    return "\n".join(f"  {name:28s} {description}" for name, (_, description) in entries.items())


def _dispatch(kind: str, entries: dict[str, tuple[str, str]], name: str, argv: list[str]) -> int:
    if name not in entries:
        known = ", ".join(entries) or "none yet"
        print(f"trajopt {kind}: error: unknown {kind} target '{name}' (known: {known})", file=sys.stderr)
        return 2
    return _run(f"trajopt {kind} {name}", entries[name][0], argv)


def _run(prog: str, module_name: str, argv: list[str]) -> int:
    """Run a command module; bad input (a file, an element, a value) is one line on stderr, exit code 2."""
    module = importlib.import_module(module_name)
    try:
        return int(module.main(argv) or 0)
    except TrajoptInputError as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _Parser(
        prog="trajopt",
        description="Optimal control of musculoskeletal models on CasADi and IPOPT.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"problems (trajopt run NAME):\n{_listing(PROBLEMS)}\n\n"
        f"benchmarks (trajopt bench NAME):\n{_listing(BENCHMARKS)}",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    # No -h of their own: `trajopt run NAME --help` must reach the problem's own parser.
    run = commands.add_parser("run", help="run a ready problem (see the list below)", add_help=False)
    run.add_argument("name", metavar="PROBLEM")
    bench = commands.add_parser("bench", help="run a benchmark, writing results/benchmarks/", add_help=False)
    bench.add_argument("name", metavar="BENCHMARK")
    for name, (_, description) in COMMANDS.items():
        commands.add_parser(name, help=description, add_help=False)

    if argv and argv[0] in COMMANDS:
        return _run(f"trajopt {argv[0]}", COMMANDS[argv[0]][0], argv[1:])
    args, rest = parser.parse_known_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "run":
        return _dispatch("run", PROBLEMS, args.name, rest)
    return _dispatch("bench", BENCHMARKS, args.name, rest)


if __name__ == "__main__":
    sys.exit(main())
