"""Regenerate the committed ``results/``: ``trajopt regenerate-results`` (or ``python -m trajopt.edge.cli.regenerate``).

The one way the repository's results are rewritten: every problem and benchmark runs in its own process with an
explicit ``--out`` under ``--results`` (default ``./results``, so run it from the repository root). No other
command writes there: their default is ``./trajopt_results/<name>``. Each run first rewrites the folder's index
(``commands.md``: which command writes which folder or report) from the command list. ``--list`` prints the
commands, ``--only`` runs those whose label contains one of the given words. The comparisons with OpenSim and Moco
in the committed summaries need the opensim extra (``pip install -e '.[opensim]'``); without it the run refuses
unless ``--without-opensim`` is given.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

from trajopt.edge.cli.helptext import description
from trajopt.errors import TrajoptInputError
from trajopt.model.io.opensim_reference import opensim_available

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = "rerun every problem and benchmark into the repository's committed results/"

# A benchmark writes <name>.json into its --out folder; the walk3d variants below are kept under names of their own:
# they run into this folder beside the reports, and their report is renamed (RENAMED) and the folder removed.
SCRATCH = ".regenerate-scratch"
RENAMED = {"bench walk3d from tracking": "walk3d_from_tracking.json", "bench walk3d idle": "walk3d_50_idle.json",
           "bench walk3d two threads": "walk3d_50_threads2.json", "bench walk3d 100 intervals": "walk3d_100.json",
           "bench walk3d predsim": "walk3d_predsim_50.json"}
# Benchmark runs whose options make them write a report of another name into their --out folder.
REPORTS = {"bench reaching wrapped paths": "reaching_wrapped_paths.json"}

# The index of results/ (which command writes which folder or report), rewritten by every run.
INDEX = "commands.md"

# (label, trajopt arguments with {results} for the results folder); in order (the gait2d prediction's summary
# reads the mirrored-excitations record, so that variant runs first; the arm26 motion runs write inside the main
# job's folder, which the main job empties, so they run after it).
COMMANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("arm26-static-optimization", ("run", "arm26-static-optimization", "--out", "{results}/arm26_static_optimization")),
    *((f"arm26-static-optimization motion {stem}",
       ("run", "arm26-static-optimization", "--motion", f"trajopt/examples/arm26_static_optimization/{stem}.mot",
        "--out", f"{{results}}/arm26_static_optimization/motion_{stem}"))
      for stem in ("shoulder_elbow_0_90_minjerk", "shoulder60_elbow90_minjerk")),
    *((f"arm26-static-optimization geometric motion {stem}",
       ("run", "arm26-static-optimization", "--paths", "geometric", "--motion",
        f"trajopt/examples/arm26_static_optimization/{stem}.mot",
        "--out", f"{{results}}/arm26_static_optimization/geometric_motion_{stem}"))
      for stem in ("shoulder_elbow_0_90_minjerk", "shoulder60_elbow90_minjerk")),
    ("arm26-reaching", ("run", "arm26-reaching", "--out", "{results}/arm26_reaching")),
    ("arm26-reaching geometric paths", ("run", "arm26-reaching", "--paths", "geometric", "--out",
                                        "{results}/arm26_reaching_geometric")),
    ("arm26-reaching free duration", ("run", "arm26-reaching", "--duration", "free", "--final-time-weight", "0.1",
                                      "--skip-comparisons", "--out", "{results}/arm26_reaching")),
    ("shoulder-reaching", ("run", "shoulder-reaching", "--out", "{results}/shoulder_reaching")),
    ("gait2d-prediction mirror excitations", ("run", "gait2d-prediction", "--mirror-excitations",
                                              "--out", "{results}/gait2d")),
    ("gait2d-prediction", ("run", "gait2d-prediction", "--out", "{results}/gait2d")),
    ("gait2d-prediction tracking", ("run", "gait2d-prediction", "--tracking", "--out", "{results}/gait2d")),
    ("gait2d-metabolics", ("run", "gait2d-metabolics", "--out", "{results}/gait2d_metabolics")),
    ("das3-serratus", ("run", "das3-serratus", "--out", "{results}/path_fits")),
    ("path-fits", ("run", "path-fits", "--out", "{results}/path_fits")),
    ("path-fits geometric", ("run", "path-fits", "--cases", "arm26-geometric", "gait2d-geometric",
                             "--out", "{results}/path_fits")),
    ("path-fits cells", ("run", "path-fits", "--cases", "arm26-cells", "gait2d-cells", "--out", "{results}/path_fits")),
    ("path-fits walk3d cells", ("run", "path-fits", "--cases", "walk3d-cells", "walk3d-band-cells",
                                "--out", "{results}/path_fits")),
    ("shoulder-reaching-polynomial", ("run", "shoulder-reaching-polynomial", "--out",
                                      "{results}/shoulder_reaching_polynomial")),
    ("muscle-curves", ("run", "muscle-curves", "--out", "{results}/muscle_curves")),
    ("walk3d-inverse", ("run", "walk3d-inverse", "--out", "{results}/walk3d_inverse")),
    ("walk3d-inverse emg", ("run", "walk3d-inverse", "--emg", "--out", "{results}/walk3d_inverse_emg")),
    ("walk3d-inverse knee", ("run", "walk3d-inverse", "--knee-reaction", "0.1",
                             "--out", "{results}/walk3d_inverse_knee")),
    ("walk3d-prediction", ("run", "walk3d-prediction", "--recipe", "moco-example", "--resimulate",
                           "--out", "{results}/walk3d_prediction")),
    ("walk3d-prediction predsim", ("run", "walk3d-prediction", "--resimulate",
                                   "--out", "{results}/walk3d_prediction_predsim")),
    ("walk3d-prediction predsim-adapted", ("run", "walk3d-prediction", "--recipe", "predsim-adapted",
                                           "--solver", "mesh-continuation", "--resimulate",
                                           "--out", "{results}/walk3d_prediction_predsim_adapted")),
    # 0.9 m/s on 25 intervals: on 50 the solve from coordinates.sto does not converge (walk3d README).
    *((f"walk3d-prediction predsim {speed} m/s",
       ("run", "walk3d-prediction", "--speed", speed, "--intervals", intervals,
        "--out", f"{{results}}/walk3d_prediction_predsim_{speed}ms"))
      for speed, intervals in (("0.9", "25"), ("1.6", "50"))),
    *((f"walk3d-prediction predsim-adapted {speed} m/s",
       ("run", "walk3d-prediction", "--recipe", "predsim-adapted", "--solver", "mesh-continuation", "--speed", speed,
        "--resimulate", "--out", f"{{results}}/walk3d_prediction_predsim_adapted_{speed}ms"))
      for speed in ("0.9", "1.6")),
    ("walk3d-prediction euler pelvis", ("run", "walk3d-prediction", "--recipe", "moco-example", "--euler-pelvis",
                                        "--resimulate",
                                        "--out", "{results}/walk3d_prediction_euler")),
    *((f"bench {name}", ("bench", name, "--out", "{results}/benchmarks"))
      for name in ("dynamics", "paths", "static-optimization", "reaching", "gait2d", "nlp-derivatives",
                   "walk3d-inverse", "walk3d-static-optimization", "smooth-paths", "ipopt-settings", "linear-solvers",
                   "solver-routes", "solvers", "muscle-analysis")),
    ("bench walk3d", ("bench", "walk3d", "--recipe", "moco-example", "--intervals", "50", "25", "--euler-pelvis",
                      "--out", "{results}/benchmarks")),
    ("bench walk3d from tracking", ("bench", "walk3d", "--recipe", "moco-example", "--intervals", "50",
                                    "--euler-pelvis", "--from-tracking", "--out", "{results}/benchmarks/" + SCRATCH)),
    ("bench walk3d idle", ("bench", "walk3d", "--recipe", "moco-example", "--intervals", "50",
                           "--out", "{results}/benchmarks/" + SCRATCH)),
    ("bench walk3d two threads", ("bench", "walk3d", "--recipe", "moco-example", "--intervals", "50",
                                  "--threads", "2", "--out", "{results}/benchmarks/" + SCRATCH)),
    ("bench walk3d 100 intervals", ("bench", "walk3d", "--recipe", "moco-example", "--intervals", "100",
                                    "--out", "{results}/benchmarks/" + SCRATCH)),
    ("bench walk3d predsim", ("bench", "walk3d", "--intervals", "50",
                              "--out", "{results}/benchmarks/" + SCRATCH)),
    ("bench reaching wrapped paths", ("bench", "reaching", "--wrapped-paths", "smooth", "exact", "exact",
                                      "--wrapped-intervals", "50", "10", "50", "--out", "{results}/benchmarks")),
    ("bench walk3d-track", ("bench", "walk3d-track", "--out", "{results}/benchmarks")),
    ("bench walk3d-ablation", ("bench", "walk3d-ablation", "--out", "{results}/benchmarks")),
    ("bench gait2d-metabolics", ("bench", "gait2d-metabolics", "--out", "{results}/benchmarks")),
    ("bench gait2d-track", ("bench", "gait2d-track", "--out", "{results}/benchmarks")),
    ("bench batch", ("bench", "batch", "--out", "{results}/batch")),
)


def commands(results: Path, only: tuple[str, ...] = ()) -> list[tuple[str, list[str]]]:
    """The (label, argv) pairs that write ``results``; with ``only``, those whose label contains one of the words."""
    chosen = [(label, [a.format(results=results) for a in argv]) for label, argv in COMMANDS
              if not only or any(word in label for word in only)]
    if only and not chosen:
        raise TrajoptInputError(f"--only {' '.join(only)}: matches none of {', '.join(label for label, _ in COMMANDS)}")
    return chosen


def outputs(results: Path) -> dict[str, Path]:
    """label -> what its command leaves in ``results``: a benchmark's report file (``<name>.json`` in its --out, or
    its RENAMED name), or the folder a problem writes."""
    left = {}
    for label, argv in commands(results):
        out = Path(argv[argv.index("--out") + 1])
        if label in RENAMED:
            left[label] = out.parent / RENAMED[label]
        elif label in REPORTS:
            left[label] = out / REPORTS[label]
        elif argv[0] == "bench" and argv[1] != "batch":
            left[label] = out / f"{argv[1].replace('-', '_')}.json"
        else:
            left[label] = out
    return left


def index(results: Path) -> str:
    """Markdown table of what each command leaves in ``results`` (linked relative to it) and its command line, in
    the order they run: the index of the folder, written from COMMANDS so that it follows them."""
    left = outputs(results)
    rows = []
    for label, argv in commands(Path("results")):
        place = left[label].relative_to(results).as_posix() + ("" if left[label].suffix == ".json" else "/")
        rows.append(f"| [{place}]({place}) | `trajopt {' '.join(argv)}` |")
    return "\n".join([
        "# What writes each folder", "",
        "Written by `trajopt regenerate-results` from its command list, in the order it runs them (what of their "
        f"output is committed: [README.md](README.md)). The walk3d benchmark variants run into `benchmarks/{SCRATCH}/`"
        " and their report is renamed.", "",
        "| writes | command |", "|---|---|", *rows, ""])


def _rename_report(results: Path, label: str) -> None:
    """A walk3d variant's report from the scratch folder to its committed name; the scratch folder removed."""
    scratch = results / "benchmarks" / SCRATCH
    report = scratch / "walk3d.json"
    if report.exists():
        report.replace(outputs(results)[label])
    shutil.rmtree(scratch, ignore_errors=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt regenerate-results", description=description(__doc__))
    parser.add_argument("--results", type=Path, default=Path("results"),
                        help="the repository's results folder (default ./results: run from the repository root)")
    parser.add_argument("--only", nargs="+", default=(), metavar="WORD",
                        help="run only the commands whose label contains one of these words (see --list)")
    parser.add_argument("--list", action="store_true", help="print the commands and exit")
    parser.add_argument("--without-opensim", action="store_true",
                        help="run even though opensim is not installed (the OpenSim rows of the summaries are lost)")
    args = parser.parse_args(argv)
    chosen = commands(args.results, tuple(args.only))
    if args.list:
        for label, command in chosen:
            print(f"{label}: trajopt {' '.join(command)}")
        return 0
    if not args.results.is_dir():
        raise TrajoptInputError(f"--results {args.results}: no such folder (run from the repository root, "
                                "or name the checkout's results/)")
    if not (opensim_available() or args.without_opensim):
        raise TrajoptInputError("opensim is not installed: the committed summaries hold OpenSim and Moco comparisons "
                                "(pip install -e '.[opensim]', or --without-opensim to lose them)")
    (args.results / INDEX).write_text(index(args.results))
    failed = []
    for k, (label, command) in enumerate(chosen, 1):
        print(f"[{k}/{len(chosen)}] {label}: trajopt {' '.join(command)}", flush=True)
        started = time.perf_counter()
        if label in RENAMED:  # no stale report from an interrupted run
            shutil.rmtree(args.results / "benchmarks" / SCRATCH, ignore_errors=True)
        code = subprocess.call([sys.executable, "-m", "trajopt", *command])
        if label in RENAMED:
            _rename_report(args.results, label)
        print(f"[{k}/{len(chosen)}] {label}: exit {code}, {time.perf_counter() - started:.0f} s", flush=True)
        if code != 0:
            failed.append(f"{label} (exit {code})")
    if failed:
        print(f"trajopt regenerate-results: {len(failed)} command(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    from trajopt.edge.cli import main as cli

    raise SystemExit(cli(["regenerate-results", *sys.argv[1:]]))
