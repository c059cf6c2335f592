"""The ``trajopt`` console script.

``trajopt run PROBLEM ...`` runs a ready problem, ``trajopt bench NAME ...`` a benchmark, and
``trajopt fit-paths ...`` fits polynomial muscle-path surrogates. Each problem or benchmark is a
module with ``main(argv) -> int`` that parses its own options, so ``trajopt run NAME --help``
shows them.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import sys
import warnings
from importlib.metadata import entry_points
from pathlib import Path

from trajopt.errors import TrajoptInputError
from trajopt.model.io.opensim_reference import OpenSimNotInstalledError
from trajopt.core.ocp.interrupts import raise_if_interrupted, remember_interrupts

# The ready problems and benchmarks are not part of the library: they register themselves as entry points of
# these groups (pyproject.toml), and their one-line descriptions are read from their files without importing them.
PROBLEM_GROUP = "trajopt.run"
BENCHMARK_GROUP = "trajopt.benchmarks"


def _description(module_name: str) -> str:
    """A command module's ``DESCRIPTION`` string, read from its source (importing would load casadi and more)."""
    spec = importlib.util.find_spec(module_name)
    if spec is None or spec.origin is None:
        return "(module not found)"
    for node in ast.parse(Path(spec.origin).read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "DESCRIPTION" for t in node.targets):
            return str(ast.literal_eval(node.value))
    return ""


def registered(group: str) -> dict[str, tuple[str, str]]:
    """name -> (module with main(argv), one-line description) of the entry points of ``group``."""
    return {entry.name: (entry.value, _description(entry.value))
            for entry in sorted(entry_points(group=group), key=lambda entry: entry.name)}


COMMANDS: dict[str, tuple[str, str]] = {
    "fit-paths": ("trajopt.edge.tools.fit_paths", "fit polynomial muscle-path surrogates to an OpenSim model"),
    "inverse-dynamics": ("trajopt.edge.tools.inverse_dynamics",
                         "inverse dynamics of a motion with external loads (OpenSim's InverseDynamicsTool)"),
    "static-optimization": ("trajopt.edge.tools.static_optimization",
                            "static optimization of a motion with external loads (OpenSim's Static Optimization)"),
    "muscle-analysis": ("trajopt.edge.tools.muscle_analysis",
                        "muscle lengths and moment arms along a motion (OpenSim's MuscleAnalysis)"),
    "muscle-inverse": ("trajopt.edge.tools.muscle_inverse",
                       "muscle-driven inverse simulation of a measured motion (Moco's MocoInverse)"),
    "muscle-track": ("trajopt.edge.tools.muscle_track",
                     "muscle-driven tracking of measured walking with foot contact (Moco's MocoTrack)"),
    "regenerate-results": ("trajopt.edge.cli.regenerate",
                           "rerun every problem and benchmark into the repository's committed results/"),
    "batch": ("trajopt.edge.batch.cli",
              "one task over many trials, subjects or a parameter sweep, on Dask (TOML spec)"),
}


INTERRUPTED = 130  # the shell's code for a command ended by SIGINT (128 + 2)

GROUPS = {"run": ("PROBLEM", "run a ready problem; results go to ./trajopt_results/<name> unless --out says "
                           "otherwise", PROBLEM_GROUP),
          "bench": ("BENCHMARK", "run a benchmark; its JSON report goes to ./trajopt_results/benchmarks/ unless "
                                 "--out says otherwise", BENCHMARK_GROUP)}


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad input in one line (exit code 2), without the usage dump."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def _listing(entries: dict[str, tuple[str, str]]) -> str:
    return "\n".join(f"  {name:28s} {description}" for name, (_, description) in entries.items())


def _dispatch(kind: str, entries: dict[str, tuple[str, str]], name: str, argv: list[str]) -> int:
    if name not in entries:
        known = ", ".join(entries) or "none registered: install trajopt (pip install -e .) to register them"
        print(f"trajopt {kind}: error: unknown {kind} target '{name}' (known: {known})", file=sys.stderr)
        return 2
    return _run(f"trajopt {kind} {name}", entries[name][0], argv)


def _run(prog: str, module_name: str, argv: list[str]) -> int:
    """Run a command module; bad input (a file, an element, a value) is one line on stderr, exit code 2."""
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
    remember_interrupts()
    try:
        status = _main(argv)
        raise_if_interrupted()  # a Ctrl-C that Python swallowed (e.g. in a destructor) still ends the run as one
        return status
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
        epilog=f"problems (trajopt run NAME):\n{_listing(registered(PROBLEM_GROUP))}\n\n"
        f"benchmarks (trajopt bench NAME):\n{_listing(registered(BENCHMARK_GROUP))}",
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
        metavar, what, group = GROUPS[kind]
        entries = registered(group)
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
    return _dispatch(args.command, registered(GROUPS[args.command][2]), args.name, rest)


if __name__ == "__main__":
    sys.exit(main())
