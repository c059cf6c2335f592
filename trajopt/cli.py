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
import warnings

from trajopt.errors import TrajoptInputError

# name -> (module with main(argv), one-line description)
PROBLEMS = {
    "das3-serratus": ("problems.das3_serratus.serratus_fit", "DAS3 serratus anterior: Euler vs quaternion polynomial paths (table + figure)"),
    "gait2d-prediction": ("problems.gait2d.main", "2D_gait.osim predictive half gait cycle (Moco example2DWalking); --tracking for the tracking variant"),
    "arm26-reaching": ("problems.arm26_reaching.reaching", "arm26 muscle-driven reaching; Moco and bioptim static_arm comparisons"),
    "shoulder-reaching": ("problems.shoulder_reaching.main", "3D arm reach from gimbal lock: quaternion vs YZY Euler shoulder"),
    "muscle-curves": ("trajopt.reports.muscle_curves", "plot the DeGroote 2016 curves (both constant sets)"),
    "walk3d-inverse": ("problems.walk3d.inverse",
                       "Moco's 3D walking MocoInverse (80 muscles, GRFs, function-based paths); --emg, "
                       "--elastic-tendons, --knee-reaction"),
    "walk3d-prediction": ("problems.walk3d.prediction_main",
                          "3D predictive walking, half gait cycle, quaternion pelvis, 80 muscles, foot contact"),
    "shoulder-reaching-polynomial": ("problems.shoulder_reaching.polynomial_paths",
                                     "3D arm reach with polynomial paths in constrained-quaternion shoulder coordinates vs Euler"),
    "path-fits": ("problems.path_fits.main",
                  "held-out accuracy of path surrogates: trajopt vs OpenSim's PolynomialPathFitter vs Moco"),
    "arm26-static-optimization": ("problems.arm26_static_optimization.main",
                                  "arm26 inverse dynamics + static optimization vs OpenSim (the main job)"),
}

BENCHMARKS: dict[str, tuple[str, str]] = {
    "paths": ("trajopt.bench.paths", "arm26 muscle lengths + moment arms: polynomial surrogate vs OpenSim; fitting time"),
    "gait2d": ("trajopt.bench.gait2d", "2D gait prediction: wall time and iterations vs Moco; 25/50/100 intervals"),
    "reaching": ("trajopt.bench.reaching", "arm26 reaching: trajopt vs Moco (run in a child process) and bioptim static_arm"),
    "nlp-derivatives": ("trajopt.bench.nlp_derivatives", "NLP build + derivative evaluation: point-by-point vs expanded graph"),
    "dynamics": ("trajopt.bench.dynamics", "inverse/forward dynamics per call, arm26 and 2D_gait: trajopt vs OpenSim"),
    "walk3d-inverse": ("trajopt.bench.walk3d_inverse",
                       "Moco's 3D walking MocoInverse: trajopt (rigid, elastic) vs Moco, end to end, same run"),
    "walk3d": ("trajopt.bench.walk3d", "3D predictive walking (quaternion pelvis): wall time, iterations at 25/50/100 "
                                       "intervals vs PredSim's reference run"),
    "static-optimization": ("trajopt.bench.static_optimization",
                            "arm26 static optimization, 101-frame elbow motion: trajopt vs OpenSim"),
    "walk3d-static-optimization": ("trajopt.bench.walk3d_static_optimization",
                                   "walk3d static optimization with GRFs and couplers: trajopt vs OpenSim, same run"),
    "smooth-paths": ("trajopt.bench.smooth_paths",
                     "smooth-mode wrapped paths vs exact mode, arm26 and walk3d: length and moment-arm differences, time"),
    "ipopt-settings": ("trajopt.bench.ipopt_settings",
                       "IPOPT settings on the gait2d prediction: speed at 25/50/100 intervals, robustness over 13 speeds"),
    "linear-solvers": ("trajopt.bench.linear_solvers",
                       "where IPOPT's time goes (MUMPS factorizations), factorization vs mesh, MUMPS vs SPRAL (vs HSL)"),
    "batch": ("trajopt.bench.batch", "gait2d speed sweep (13 speeds): serial vs Dask LocalCluster, results/batch/"),
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
    "regenerate-results": ("trajopt.reports.regenerate",
                           "rerun every problem and benchmark into the repository's committed results/"),
    "batch": ("trajopt.batch.cli", "one task over many trials, subjects or a parameter sweep, on Dask (TOML spec)"),
}


INTERRUPTED = 130  # the shell's code for a command ended by SIGINT (128 + 2)

GROUPS = {"run": ("PROBLEM", "run a ready problem; results go to ./trajopt_results/<name> unless --out says "
                           "otherwise", PROBLEMS),
          "bench": ("BENCHMARK", "run a benchmark; its JSON report goes to ./trajopt_results/benchmarks/ unless "
                                 "--out says otherwise", BENCHMARKS)}


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
    from trajopt.opensim_reference import OpenSimNotInstalledError

    module = importlib.import_module(module_name)
    try:
        return int(module.main(argv) or 0)
    except (TrajoptInputError, OpenSimNotInstalledError) as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2


def _one_line_warning(message, category, filename, lineno, line=None) -> str:
    """Warnings on the command line: one line naming the kind, without Python's file and source-line quote."""
    return f"warning ({category.__name__}): {message}\n"


def main(argv: list[str] | None = None) -> int:
    """The console script; Ctrl-C anywhere is one line "interrupted" (with IPOPT's status and iteration when it
    came during a solve) and exit code 130, nothing written after it."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return _main(argv)
    except KeyboardInterrupt as interrupt:
        words = argv[:2] if argv and argv[0] in GROUPS else argv[:1]
        detail = str(interrupt)
        sys.stdout.flush()
        print(f"{' '.join(['trajopt', *words])}: interrupted{': ' + detail if detail else ''}", file=sys.stderr)
        return INTERRUPTED


def _main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    warnings.formatwarning = _one_line_warning
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
    bench = commands.add_parser("bench", help="run a benchmark, writing ./trajopt_results/benchmarks/",
                                add_help=False)
    bench.add_argument("name", metavar="BENCHMARK")
    for name, (_, description) in COMMANDS.items():
        commands.add_parser(name, help=description, add_help=False)

    if argv and argv[0] in COMMANDS:
        return _run(f"trajopt {argv[0]}", COMMANDS[argv[0]][0], argv[1:])
    if argv and argv[0] in GROUPS and (len(argv) == 1 or argv[1] in ("-h", "--help")):
        kind = argv[0]
        metavar, what, entries = GROUPS[kind]
        text = (f"usage: trajopt {kind} {metavar} [options]\n\n{what}; `trajopt {kind} {metavar} --help` shows its "
                f"options.\n\n{metavar.lower()}s:\n{_listing(entries)}\n")
        if len(argv) == 1:
            sys.stderr.write(text + f"trajopt {kind}: error: name a {metavar.lower()}\n")
            return 2
        sys.stdout.write(text)
        return 0
    args, rest = parser.parse_known_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "run":
        return _dispatch("run", PROBLEMS, args.name, rest)
    return _dispatch("bench", BENCHMARKS, args.name, rest)


if __name__ == "__main__":
    sys.exit(main())
