"""Runs never overwrite the committed results/: README's commands, run from another directory, write into
./trajopt_results/<name> only; `trajopt regenerate-results` is the one command that writes results/; a run cleans
the folder it owns of an earlier run's files and never deletes files it did not write."""

import hashlib
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT
from trajopt.edge.cli import PROBLEM_GROUP, registered
from trajopt.model.io.output import MARKER, fresh_output
from trajopt.edge.cli.regenerate import outputs

README = (ROOT / "README.md").read_text()
RESULTS = ROOT / "results"


def _hashes(folder):
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _trajopt(cwd, *argv):
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    return subprocess.run([sys.executable, "-m", "trajopt", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.mark.slow
def test_readme_commands_leave_the_committed_results_unchanged(tmp_path):
    """The cheap problems of README's table, run as a user would (no --out) from a fresh directory."""
    before = _hashes(RESULTS)
    runs = {"muscle-curves": "degroote2016.png", "das3-serratus": "das3_serratus.md"}
    for name, file in runs.items():
        assert f"`trajopt run {name}" in README
        done = _trajopt(tmp_path, "run", name)
        assert done.returncode == 0, done.stderr
        assert (tmp_path / "trajopt_results" / name / file).exists()  # the folder is named after the command
    motion = ROOT / "trajopt" / "examples" / "arm26_static_optimization" / "arm26_InverseKinematics.mot"
    done = _trajopt(tmp_path, "run", "arm26-static-optimization", "--motion", str(motion), "--cutoff", "6")
    assert done.returncode == 0, done.stderr
    # --motion without --out: its own folder, not the main job's
    summary = (tmp_path / "trajopt_results" / "arm26-static-optimization_arm26_InverseKinematics" / "summary.md")
    assert "arm26_InverseKinematics.mot" in summary.read_text().splitlines()[0]
    assert not (tmp_path / "trajopt_results" / "arm26-static-optimization").exists()
    assert _hashes(RESULTS) == before


@pytest.mark.parametrize("name", sorted(registered(PROBLEM_GROUP)))
def test_every_problem_defaults_to_the_current_directory(name, capsys):
    from trajopt.edge.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["run", name, "--help"])
    assert stop.value.code == 0
    assert "./trajopt_results/" in capsys.readouterr().out


def test_readme_commands_table_writes_outside_results():
    rows = [line for line in README.splitlines() if line.startswith("| `trajopt ")]
    assert len(rows) >= 10
    for row in rows:
        writes = row.rstrip(" |").rsplit("|", 1)[-1]
        if "regenerate-results" in row:
            assert "results/" in writes
        else:
            assert "results/" not in writes.replace("trajopt_results/", ""), row


def test_regenerate_results_covers_every_committed_result():
    """Every folder and benchmark file in results/ is written by one of regenerate-results' commands, with --out
    (a benchmark writes its report into its --out folder)."""
    targets = set()
    for path in outputs(RESULTS).values():
        relative = os.path.relpath(path, RESULTS)
        targets.add(relative if path.suffix == ".json" else relative.split(os.sep)[0])
    committed = {p.name for p in RESULTS.iterdir() if p.is_dir() and p.name != "benchmarks"}
    committed |= {f"benchmarks/{p.name}" for p in (RESULTS / "benchmarks").glob("*.json")}
    assert committed <= targets, committed - targets
    assert re.search(r"trajopt regenerate-results", README)


def test_a_run_cleans_its_own_folder_and_never_a_foreign_one(tmp_path):
    owned = fresh_output(tmp_path / "run")
    (owned / "stale.csv").write_text("from an earlier run")
    (owned / "figures").mkdir()
    assert (owned / MARKER).exists()
    fresh_output(owned)
    assert sorted(p.name for p in owned.iterdir()) == [MARKER]
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("the user's")
    fresh_output(foreign)
    assert (foreign / "notes.txt").exists() and not (foreign / MARKER).exists()
    shared = fresh_output(tmp_path / "shared")
    (shared / "tracking_a.sto").write_text("")
    (shared / "prediction_a.sto").write_text("")
    fresh_output(shared, lambda name: name.startswith("tracking_"))
    assert sorted(p.name for p in shared.iterdir()) == [MARKER, "prediction_a.sto"]


def test_an_out_folder_that_cannot_be_created_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    done = _trajopt(tmp_path, "run", "muscle-curves", "--out", str(blocker / "sub"))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "cannot create the folder" in done.stderr
