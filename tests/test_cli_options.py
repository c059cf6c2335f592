"""One command-line style: every command's parser is built (no solve runs) and every option spelling means one
thing across the commands (same destination, type and kind); the shared options have one default; ``--out`` is a
folder the command's files land in."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT
from trajopt.edge.cli import BENCHMARK_GROUP, COMMANDS, PROBLEM_GROUP, main, registered
from trajopt.edge.cli.regenerate import RENAMED, SCRATCH, commands, outputs
from trajopt.model.io import read_table
from trajopt.core.ocp import SolverRoute
from trajopt.core.ocp.transcriptions import MOCO_MESH_INTERVAL
from trajopt.model.paths.wrapping.smooth import SmoothWrapping

ARM26 = ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim"
ARM26_PATHS = ROOT / "trajopt" / "examples" / "arm26" / "paths.json"
ELBOW = ROOT / "trajopt" / "examples" / "arm26_static_optimization" / "elbow_flex_0_90_minjerk.mot"


class _Built(Exception):
    """Raised in place of parsing: carries the command's parser out of its ``main``."""


def _parser_of(module_name: str) -> argparse.ArgumentParser:
    """The parser a command's ``main`` builds, caught when it starts parsing (nothing after that runs)."""
    module = importlib.import_module(module_name)

    def caught(self, args=None, namespace=None):
        raise _Built(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(argparse.ArgumentParser, "parse_known_args", caught)
        with pytest.raises(_Built) as built:
            module.main([])
    return built.value.args[0]


def _all_commands() -> dict[str, str]:
    """command -> module; entry points whose module this checkout does not have (registered by another install)
    are left out."""
    found = {f"trajopt {name}": module for name, (module, _) in COMMANDS.items()}
    found |= {f"trajopt run {name}": module for name, (module, _) in registered(PROBLEM_GROUP).items()}
    found |= {f"trajopt bench {name}": module for name, (module, _) in registered(BENCHMARK_GROUP).items()}
    return {command: module for command, module in found.items() if importlib.util.find_spec(module) is not None}


COMMAND_MODULES = _all_commands()
PARSERS = {name: _parser_of(module) for name, module in COMMAND_MODULES.items()}


def _options(parser) -> dict[str, argparse.Action]:
    return {spelling: action for action in parser._actions for spelling in action.option_strings}


def test_every_command_is_found_and_listed():
    assert {"trajopt batch", "trajopt fit-paths", "trajopt regenerate-results", "trajopt muscle-track",
            "trajopt run walk3d-prediction", "trajopt bench walk3d"} <= set(PARSERS)
    assert len(registered(PROBLEM_GROUP)) >= 10 and len(registered(BENCHMARK_GROUP)) >= 10


def test_every_option_spelling_means_one_thing():
    meanings = defaultdict(dict)
    for command, parser in PARSERS.items():
        for spelling, action in _options(parser).items():
            # one value or several (--intervals: one run, or a sweep), a value that may be left out (--emg's file)
            count = None if action.nargs in ("+", "*", "?") else action.nargs
            meanings[spelling][command] = (action.dest, action.type, type(action).__name__, count)
    different = {spelling: uses for spelling, uses in meanings.items() if len(set(uses.values())) > 1}
    assert different == {}


# Options several commands share through one helper: one help text (apart from the command's default).
ONE_HELP = ("--solver", "--elastic-tendons", "--recipe", "--from-tracking", "--no-moco", "--smoothing-band")


def test_shared_options_have_one_default():
    helps = defaultdict(dict)
    for command, parser in PARSERS.items():
        options = _options(parser)
        # walk3d-tracking (and its benchmark, which defaults to the command's) is coarser: minutes, not hours
        coarser = ("trajopt run walk3d-tracking", "trajopt bench walk3d-track")
        if "--mesh-interval" in options and command not in coarser:
            assert options["--mesh-interval"].default == MOCO_MESH_INTERVAL, command
        if "--tolerance" in options:  # --tol is the same option
            assert options["--tol"].dest == "tolerance", command
        if "--compiled" in options or "--uncompiled" in options:  # a pair, one destination
            assert options["--compiled"].dest == options["--uncompiled"].dest == "compiled", command
        if "--solver" in options:  # every solver route offered, the command's default one of them
            solver = options["--solver"]
            assert solver.choices == [route.value for route in SolverRoute], command
            assert solver.default in solver.choices, command
        if "--smoothing-band" in options:
            assert options["--smoothing-band"].default == SmoothWrapping().band, command
        for spelling in ONE_HELP:
            if spelling in options:
                action = options[spelling]
                helps[spelling][command] = action.help.replace(f"(default {action.default})", "")
        for flag in ("--no-figures", "--no-progress"):
            if flag in options:
                assert options[flag].default is False, command
    assert {"trajopt run gait2d-prediction", "trajopt run walk3d-prediction", "trajopt bench walk3d"} <= \
        set(helps["--solver"])
    for spelling, texts in helps.items():  # one help text, the command's default aside
        assert len(set(texts.values())) == 1, (spelling, texts)


def test_out_is_a_folder_named_after_the_command():
    for command, parser in PARSERS.items():
        if command == "trajopt regenerate-results":  # writes the repository's results/, --results names it
            assert "--out" not in _options(parser)
            continue
        out = _options(parser)["--out"]
        assert out.type is Path, command
        words = command.split()
        expected = ("benchmarks" if words[1] == "bench" and words[2] != "batch" else words[-1])
        if out.default is not None:  # None: the folder's name also follows other options (--motion, --emg)
            assert out.default == Path.cwd() / "trajopt_results" / expected, command


@pytest.mark.parametrize("command", ["inverse-dynamics", "muscle-analysis",
                                     pytest.param("static-optimization", marks=pytest.mark.slow)])
def test_a_tool_writes_inside_a_new_out_folder(tmp_path, capsys, command):
    out = tmp_path / "not" / "yet" / "there"
    extra = () if command == "inverse-dynamics" else ("--paths", str(ARM26_PATHS))  # polynomial paths: seconds
    extra += ("--no-figures",) if command == "static-optimization" else ()
    assert main([command, str(ARM26), str(ELBOW), "--out", str(out), *extra]) == 0
    capsys.readouterr()
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != ".trajopt-output"]
    assert written and all(p.parent == out or out in p.parents for p in written)
    if command == "inverse-dynamics":
        forces = read_table(out / "inverse_dynamics.sto")
        assert forces.num_frames == read_table(ELBOW).num_frames


@pytest.mark.parametrize("command", [["inverse-dynamics", ARM26, ELBOW], ["muscle-analysis", ARM26, ELBOW],
                                     ["muscle-inverse", ARM26, ELBOW], ["fit-paths", ARM26, "--geometric"],
                                     ["run", "muscle-curves"], ["bench", "nlp-derivatives"]])
def test_a_file_name_as_out_is_refused_in_one_line(tmp_path, capsys, command):
    out = tmp_path / "result.json"
    assert main([str(word) for word in command] + ["--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--out {out}: give a folder" in err
    assert not out.exists()


@pytest.mark.slow
def test_a_benchmark_writes_its_report_inside_out(tmp_path, capsys, monkeypatch):
    import trajopt.benchmarks.smooth_paths as bench

    monkeypatch.setattr(bench, "MODELS", {"arm26": bench.MODELS["arm26"]})  # one model: seconds
    out = tmp_path / "new"
    assert main(["bench", "smooth-paths", "--configurations", "2", "--out", str(out)]) == 0
    capsys.readouterr()
    report = json.loads((out / "smooth_paths.json").read_text())
    assert report["models"]["arm26"]["configurations"] == 2
    assert [p.name for p in out.iterdir()] == ["smooth_paths.json"]


def test_regenerate_keeps_the_committed_benchmark_names(tmp_path):
    """Benchmarks write <name>.json into their --out folder; regenerate-results runs them into results/benchmarks
    and keeps the committed names of the walk3d variants by renaming their report."""
    committed = {p.name for p in (ROOT / "results" / "benchmarks").glob("*.json")}
    left = outputs(tmp_path)
    reports = {path.name for label, path in left.items() if label.startswith("bench ") and label != "bench batch"}
    assert reports == committed
    for label, argv in commands(tmp_path):
        if label in RENAMED:
            assert argv[argv.index("--out") + 1] == str(tmp_path / "benchmarks" / SCRATCH)
            assert left[label].parent == tmp_path / "benchmarks"


def test_regenerate_renames_a_walk3d_variant_report(tmp_path):
    from trajopt.edge.cli.regenerate import _rename_report

    scratch = tmp_path / "benchmarks" / SCRATCH
    scratch.mkdir(parents=True)
    (scratch / "walk3d.json").write_text('{"benchmark": "walk3d"}')
    _rename_report(tmp_path, "bench walk3d idle")
    assert json.loads((tmp_path / "benchmarks" / "walk3d_50_idle.json").read_text()) == {"benchmark": "walk3d"}
    assert not scratch.exists()


def test_window_and_mesh_interval_checks_are_one_line():
    from trajopt.edge.cli.options import check_mesh_interval, check_window
    from trajopt.errors import TrajoptInputError

    assert check_window(None) is None and check_window([0.5, 1.5]) == (0.5, 1.5)
    with pytest.raises(TrajoptInputError, match="--window 1 0.5"):
        check_window([1.0, 0.5])
    with pytest.raises(TrajoptInputError, match="--mesh-interval"):
        check_mesh_interval(-np.inf)
