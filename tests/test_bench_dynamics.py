"""Smoke test of ``trajopt bench dynamics``: it runs, writes its JSON, and both sides agree."""

import json

import pytest

from trajopt.edge.cli import main


@pytest.mark.opensim
@pytest.mark.slow
def test_bench_dynamics_writes_results(tmp_path, opensim_task):
    output = tmp_path / "dynamics.json"
    assert main(["bench", "dynamics", "--states", "3", "--no-codegen", "--out", str(tmp_path)]) == 0
    report = json.loads(output.read_text())
    for name in ("arm26", "gait2d"):
        entry = report["models"][name]
        assert entry["max_abs_tau_difference"] <= 1e-8  # trajopt and OpenSim timed on the same states
        assert entry["trajopt"]["inverse_dynamics"]["mapped_s"] > 0
        assert entry["opensim"]["forward_dynamics_s"] > 0
    assert report["opensim"].startswith("4.")
