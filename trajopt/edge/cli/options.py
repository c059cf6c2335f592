"""The options the commands share, one function each, so an option has one spelling, one help text and one
meaning in every command (tools, ready problems, benchmarks, batch).

``--out`` is always a folder, created by the run, with fixed file names inside; by default
``./trajopt_results/<command name>``. Values that depend on the problem (IPOPT's tolerance, the iteration limit,
the print level, whether the NLP is compiled) keep the command's own default, given by the caller; Moco's mesh
interval is defined once, in ``trajopt.core.ocp.transcriptions``.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from trajopt.errors import TrajoptInputError
from trajopt.model.io.output import DEFAULT_PARENT, create_folder, default_output, folder_name
from trajopt.core.ocp import SolverRoute
from trajopt.core.ocp.transcriptions import MOCO_MESH_INTERVAL

def integer_at_least(least: int):
    """An argparse ``type``: an integer of at least ``least`` (a count, a limit), one line otherwise."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, got {value}")
        return value
    return parse


def number_above(least: float, strict: bool = False):
    """An argparse ``type``: a finite number >= ``least`` (> with ``strict``): a weight, a force, a tolerance."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value) or value < least or (strict and value == least):
            raise argparse.ArgumentTypeError(f"must be a finite number {'>' if strict else '>='} {least:g}, "
                                             f"got {text}")
        return value
    return parse


# One object per meaning, so an option spelled alike in several commands parses alike (tests/test_cli_options.py).
COUNT = integer_at_least(1)  # runs, repeats, random states, workers
NON_NEGATIVE = number_above(0.0)  # a term's weight, a reserve's optimal force: zero switches it off
POSITIVE = number_above(0.0, strict=True)


def add_hidden_alias(parser, spelling: str, dest: str, **kwargs) -> None:
    """An old spelling of an option: parsed into the same ``dest``, not shown by ``--help``."""
    parser.add_argument(spelling, dest=dest, help=argparse.SUPPRESS, default=argparse.SUPPRESS, **kwargs)


def add_out(parser, folder: str, variants: str = "") -> None:
    """``--out DIR``: the folder the command writes its files into (created), default
    ``./trajopt_results/<folder>``; ``folder`` is the command's name as typed (``walk3d-prediction``). With
    ``variants`` (how other options change the default folder's name) ``--out`` is None unless given, and the
    command names the folder."""
    shown = f"./{DEFAULT_PARENT}/{folder}"
    parser.add_argument("--out", type=Path, default=None if variants else default_output(folder), metavar="DIR",
                        help=f"output folder, created; fixed file names inside (default {shown}"
                             + (f"; {variants}" if variants else "") + ")")


def out_folder(path, *, create: bool = True) -> Path:
    """``--out`` as a folder (created unless ``create`` is false), or one line saying why it cannot be: an existing
    file, or a new name ending in a file suffix (``paths.json``), since the command writes fixed names inside."""
    return create_folder(path) if create else folder_name(path)


def report_file(folder, name: str) -> Path:
    """``<folder>/<name>.json``, a benchmark's report: the folder checked as ``out_folder`` and created."""
    return out_folder(folder) / f"{name}.json"


def add_report_out(parser) -> None:
    """A benchmark's ``--out DIR``: the folder its report ``<name>.json`` goes into (default
    ``./trajopt_results/benchmarks``; ``trajopt regenerate-results`` passes ``results/benchmarks``)."""
    parser.add_argument("--out", type=Path, default=default_output("benchmarks"), metavar="DIR",
                        help=f"output folder for the report <name>.json, created (default ./{DEFAULT_PARENT}/"
                             "benchmarks)")


def add_tolerance(parser, default: float) -> None:
    """``--tolerance``: IPOPT's convergence tolerance (``--tol`` is the same option)."""
    parser.add_argument("--tolerance", type=float, default=default, metavar="TOL",
                        help=f"IPOPT's convergence tolerance (tol; default {default:g})")
    add_hidden_alias(parser, "--tol", "tolerance", type=float)


def add_max_iterations(parser, default: int) -> None:
    """``--max-iterations``: IPOPT's iteration limit."""
    parser.add_argument("--max-iterations", type=int, default=default, metavar="N",
                        help=f"IPOPT's iteration limit (max_iter; default {default})")


def add_print_level(parser, default: int) -> None:
    """``--print-level``: IPOPT's print level (0 silent, 5 a line per iteration)."""
    parser.add_argument("--print-level", type=int, default=default, metavar="LEVEL",
                        help=f"IPOPT's print level (0: silent, 5: a line per iteration; default {default})")


def add_mesh_interval(parser, default: float = MOCO_MESH_INTERVAL) -> None:
    """``--mesh-interval``: the mesh interval in seconds (default Moco's)."""
    parser.add_argument("--mesh-interval", type=float, default=default, metavar="S",
                        help=f"mesh interval in s (default {default:g}); the window is split into equal intervals")


def check_mesh_interval(value: float) -> float:
    if not value > 0:
        raise TrajoptInputError(f"--mesh-interval must be > 0 s, got {value}")
    return float(value)


def add_intervals(parser, default, sweep: bool = False) -> None:
    """``--intervals``: the number of mesh intervals (``sweep``: one or more, each a run)."""
    shown = " ".join(str(n) for n in default) if sweep else default
    parser.add_argument("--intervals", type=int, default=default, metavar="N", nargs="+" if sweep else None,
                        help=f"mesh intervals{' (one run each)' if sweep else ''} (default {shown})")


def add_solver_route(parser, default: SolverRoute) -> None:
    """``--solver ROUTE``: how a prediction is solved (``trajopt.core.ocp.SolverRoute``; ``SolverRoute(args.solver)``
    reads it); ``default`` is the command's."""
    parser.add_argument("--solver", choices=[route.value for route in SolverRoute], default=default.value,
                        help="how the prediction is solved: ipopt, IPOPT on the mesh from the guess; "
                             "mesh-continuation, IPOPT on half the mesh first, then on the mesh from that solution "
                             f"(default {default.value})")


def add_elastic_tendons(parser) -> None:
    """``--elastic-tendons``: compliant tendons (``ElasticTendons``) instead of rigid ones."""
    parser.add_argument("--elastic-tendons", action="store_true",
                        help="compliant tendons: normalized tendon-force states in De Groote 2016's implicit form, "
                             "the model's tendon strain (default: rigid tendons)")


def add_no_moco(parser) -> None:
    """``--no-moco``: a benchmark compares with Moco's recorded run instead of running Moco."""
    parser.add_argument("--no-moco", action="store_true",
                        help="use Moco's recorded run instead of running Moco (which runs when opensim is installed)")


def add_smoothing_band(parser, default: float) -> None:
    """``--smoothing-band``: the band of geometric paths' smooth wrapping (``SmoothWrapping.band``; ``default``
    ``SmoothWrapping().band``, given by the caller so that this module stays off the paths package)."""
    parser.add_argument("--smoothing-band", type=float, default=default, metavar="M",
                        help=f"geometric paths' smooth wrapping band in m (default {default:g}): a wrap blends in over "
                             "its first band of extra length, each wrapped segment within 0.273 band of the "
                             "closed-form wrap")


def add_window(parser, default: tuple[float, float] | None = None) -> None:
    """``--window T0 T1``: the time window of the motion the study covers (``default`` None: all of it)."""
    shown = "the motion's whole span" if default is None else f"{default[0]:g} {default[1]:g}"
    parser.add_argument("--window", type=float, nargs=2, metavar=("T0", "T1"), default=default,
                        help=f"time window in s (default: {shown})")


def check_window(window) -> tuple[float, float] | None:
    """None, or ``--window`` as (t0, t1) with t0 < t1 (one line otherwise)."""
    if window is None:
        return None
    t0, t1 = (float(t) for t in window)
    if not t0 < t1:
        raise TrajoptInputError(f"--window {t0:g} {t1:g}: the start must be before the end")
    return t0, t1


def add_cutoff(parser, *old: str) -> None:
    """``--cutoff HZ``: low-pass filter of the coordinates (``old`` spellings kept as the same option)."""
    parser.add_argument("--cutoff", type=float, metavar="HZ",
                        help="low-pass filter of the coordinates in Hz (OpenSim's: 3rd-order Butterworth); "
                             "default none")
    for spelling in old:
        add_hidden_alias(parser, spelling, "cutoff", type=float)


def add_compiled(parser, default: bool) -> None:
    """``--compiled`` / ``--uncompiled``: evaluate the NLP's functions as C code compiled at run time, or in
    CasADi's virtual machine; ``default`` is the command's."""
    pair = parser.add_mutually_exclusive_group()
    pair.add_argument("--compiled", dest="compiled", action="store_true",
                      help="compile the NLP's functions to C at run time" + (" (default)" if default else ""))
    pair.add_argument("--uncompiled", dest="compiled", action="store_false",
                      help="evaluate the NLP in CasADi's virtual machine" + ("" if default else " (default)"))
    parser.set_defaults(compiled=default)


def add_animate(parser, gif: str) -> None:
    """``--animate``: also write the command's animation, ``gif`` (its file name, or which files)."""
    parser.add_argument("--animate", action="store_true", help=f"also write an animation of the solution: {gif}")


def add_no_figures(parser) -> None:
    """``--no-figures``: tables and summary only."""
    parser.add_argument("--no-figures", action="store_true", help="write the tables and summary only, no figures")


def add_no_progress(parser) -> None:
    """``--no-progress``: no progress bar."""
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
