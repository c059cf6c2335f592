"""trajopt.edge.batch: spec parser, plan, manifest, retries and resume on the tiny ``sleep`` task; the Dask paths
(LocalCluster with a worker that dies, a separately started scheduler) are in test_batch_dask.py."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from trajopt.edge.batch import BatchSpecError, Manifest, input_key, load_spec, parse_spec, run_batch, write_aggregate
from trajopt.edge.batch.manifest import write_result
from trajopt.edge.batch.spec import sweep_values
from trajopt.edge.batch.sweep import plan

ROOT = Path(__file__).parent.parent


def sleep_spec(**sections) -> dict:
    data = {"task": "sleep", "sweep": {"value": [1, 2, 3, 4, 5]}}
    data.update(sections)
    return data


def write_toml(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# --- spec -------------------------------------------------------------------------------------------------------

def test_range_includes_its_stop_and_the_gait2d_sweep_has_13_speeds():
    assert sweep_values({"start": 0.8, "stop": 2.0, "step": 0.1}, "sweep.speed", "s") == \
        [0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2.0]
    spec = load_spec(ROOT / "trajopt" / "examples" / "gait2d" / "speed_sweep.toml", ["intervals=20"])
    assert len(spec.rows) == 13 and {row["intervals"] for row in spec.rows} == {20}
    assert spec.rows[0]["final_time"] == [0.2, 1.0] and spec.swept == ("speed",)


def test_table_rows_cross_the_sweep_and_files_resolve_against_the_spec_folder(tmp_path):
    (tmp_path / "a.mot").write_text("x")
    (tmp_path / "b.mot").write_text("y")
    data = {"task": "static-optimization", "inputs": {"model": "a.mot"},
            "table": [{"motion": "a.mot"}, {"motion": "b.mot"}], "sweep": {"reserves": [1.0, 10.0]}}
    spec = parse_spec(data, "batch.toml", tmp_path)
    assert len(spec.rows) == 4 and spec.swept == ("motion", "reserves")
    assert spec.rows[3]["motion"] == str(tmp_path / "b.mot") and spec.rows[3]["reserves"] == 10.0


@pytest.mark.parametrize("data, named", [
    ({"task": "no-such-task"}, "task = 'no-such-task'"),
    ({"task": "sleep", "sweep": {"value": [1]}, "colour": "red"}, "colour = 'red'"),
    ({"task": "sleep", "sweep": {"value": [1]}, "inputs": {"seconds": "long"}}, "seconds = 'long'"),
    ({"task": "sleep", "sweep": {"value": [1]}, "inputs": {"secs": 1}}, "secs = 1"),
    ({"task": "sleep"}, "value is missing"),
    ({"task": "sleep", "sweep": {"value": {"start": 2, "stop": 1, "step": 1}}}, "sweep.value = {"),
    ({"task": "sleep", "sweep": {"value": [1, 2]}, "warm_start": {"along": "speed"}}, "warm_start.along = 'speed'"),
    ({"task": "sleep", "sweep": {"value": [1, 2]}, "retry": {"max_retries": -1}}, "retry.max_retries = -1"),
    ({"task": "sleep", "sweep": {"value": [1, 1]}}, "same inputs"),
    ({"task": "gait2d-prediction", "sweep": {"speed": [1.0]}, "inputs": {"final_time": [0.6, 0.4]}},
     "final_time = [0.6, 0.4]"),
])
def test_bad_spec_is_one_line_naming_key_and_value(data, named):
    with pytest.raises(BatchSpecError) as caught:
        plan(parse_spec(data, "bad.toml"))
    message = str(caught.value)
    assert "\n" not in message and message.startswith("bad.toml: ") and named in message


def test_bad_spec_on_the_command_line_is_one_line_exit_2(tmp_path):
    spec = write_toml(tmp_path / "bad.toml", 'task = "sleep"\n[inputs]\nseconds = "long"\n[sweep]\nvalue = [1]\n')
    completed = subprocess.run([sys.executable, "-m", "trajopt", "batch", str(spec), "--serial", "--out",
                                str(tmp_path / "out")], capture_output=True, text=True, cwd=ROOT)
    assert completed.returncode == 2
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and "bad.toml" in lines[0] and "seconds = 'long'" in lines[0]
    syntax = write_toml(tmp_path / "syntax.toml", 'task = "sleep\n')
    completed = subprocess.run([sys.executable, "-m", "trajopt", "batch", str(syntax), "--serial"],
                               capture_output=True, text=True, cwd=ROOT)
    assert completed.returncode == 2 and len(completed.stderr.strip().splitlines()) == 1


# --- plan and manifest ---------------------------------------------------------------------------------------------

def test_chains_start_next_to_start_and_walk_outward():
    spec = parse_spec(sleep_spec(sweep={"value": [1, 2, 3, 4, 5, 6]},
                                 warm_start={"along": "value", "chains": 2, "start": 2}), "s.toml")
    parents = {t.inputs["value"]: (None if t.parent is None else spec.rows[t.parent]["value"]) for t in plan(spec)}
    assert parents == {2: None, 1: 2, 3: 2, 4: None, 5: 4, 6: 5}
    assert [t.inputs["value"] for t in plan(spec)][:2] == [2, 4]  # both runs start at once


def test_input_key_is_order_free_and_follows_file_content(tmp_path):
    motion = tmp_path / "m.mot"
    motion.write_text("one")
    a = input_key("static-optimization", {"motion": str(motion), "reserves": 1.0}, ("motion",))
    assert a == input_key("static-optimization", {"reserves": 1.0, "motion": str(motion)}, ("motion",))
    moved = tmp_path / "copy.mot"
    moved.write_text("one")
    assert a == input_key("static-optimization", {"motion": str(moved), "reserves": 1.0}, ("motion",))
    motion.write_text("two")
    assert a != input_key("static-optimization", {"motion": str(motion), "reserves": 1.0}, ("motion",))


def test_result_folder_is_replaced_whole_and_a_torn_manifest_line_is_ignored(tmp_path):
    first = write_result(tmp_path, "k" * 16, "value=1", {"a.txt": b"1", "partial.txt": b"p"}, {"status": "failed"})
    second = write_result(tmp_path, "k" * 16, "value=1", {"a.txt": b"2"}, {"status": "done"})
    assert first == second and sorted(p.name for p in second.iterdir()) == ["a.txt", "result.json"]
    assert [p.name for p in (tmp_path / "tasks").iterdir()] == [second.name]  # no temporary folder left
    manifest = Manifest(tmp_path)
    manifest.append({"key": "k" * 16, "status": "done", "result": str(second.relative_to(tmp_path))})
    with open(manifest.path, "a") as stream:
        stream.write('{"key": "x", "stat')  # a run killed while writing
    assert list(manifest.finished()) == ["k" * 16]
    (second / "result.json").write_text(json.dumps({"status": "failed"}))  # the folder disagrees: not finished
    assert manifest.finished() == {}


# --- runs (serial: no Dask) ----------------------------------------------------------------------------------------

def test_exception_is_retried_and_recorded(tmp_path):
    spec = parse_spec(sleep_spec(sweep={"value": [1, 2]}, inputs={"raise_until_attempt": 1},
                                 retry={"max_retries": 1}), "s.toml")
    report = run_batch(spec, tmp_path, serial=True, progress=False)
    assert (report.done, report.failed, report.retried, report.attempts) == (2, 0, 2, 4)
    lines = Manifest(tmp_path).records()
    assert [(r["attempt"], r["status"]) for r in lines if r["label"] == "value=1"] == [(1, "failed"), (2, "done")]
    failed = next(r for r in lines if r["status"] == "failed")
    assert failed["failure"] == "exception" and "asked to fail on attempt 1" in failed["error"]


def test_failures_beyond_the_policy_keep_error_and_partial_result_and_resume_reruns_only_them(tmp_path):
    spec = parse_spec(sleep_spec(sweep={"value": [1, 2, 3]}, retry={"max_retries": 0}), "s.toml")
    failing = parse_spec(sleep_spec(sweep={"value": [1, 2, 3]}, retry={"max_retries": 0},
                                    inputs={"solver_failure": True}), "s.toml")
    # Same keys except for the failing flag: run the failing spec's value=2 first by hand.
    report = run_batch(failing, tmp_path / "a", serial=True, progress=False)
    assert (report.done, report.failed, report.retried) == (0, 3, 0)  # solver failures are not retried by default
    record = Manifest(tmp_path / "a").latest()[plan(failing)[1].key]
    assert record["failure"] == "solver" and record["error"] == "asked to report a failed solve"
    assert (tmp_path / "a" / record["result"] / "solution.sto").exists()  # the partial result is kept
    # Resume: finished tasks are skipped by key, unfinished ones run.
    first = run_batch(spec, tmp_path / "b", serial=True, progress=False)
    assert first.done == 3
    lines = len(Manifest(tmp_path / "b").records())
    again = run_batch(spec, tmp_path / "b", serial=True, progress=False, resume=True)
    assert (again.done, again.resumed, again.attempts) == (0, 3, 0) and len(Manifest(tmp_path / "b").records()) == lines
    with pytest.raises(BatchSpecError, match="--resume"):
        run_batch(spec, tmp_path / "b", serial=True, progress=False)


def test_solver_failures_retried_when_the_policy_says_so(tmp_path):
    spec = parse_spec(sleep_spec(sweep={"value": [1]}, inputs={"solver_failure": True},
                                 retry={"max_retries": 2, "solver_failures": True}), "s.toml")
    report = run_batch(spec, tmp_path, serial=True, progress=False)
    assert (report.failed, report.attempts) == (1, 3)


def test_warm_start_passes_the_neighbours_solution_and_resume_keeps_it(tmp_path):
    data = sleep_spec(sweep={"value": [1, 2, 3, 4]}, warm_start={"along": "value", "chains": 1, "start": 2},
                      aggregate={"x": "value", "y": ["square"]})
    spec = parse_spec(data, "s.toml")
    run_batch(spec, tmp_path, serial=True, progress=False)
    guesses = {r["inputs"]["value"]: r["summary"]["guess_value"] for r in Manifest(tmp_path).records()}
    assert guesses == {2: None, 1: 2.0, 3: 2.0, 4: 3.0}
    # A resumed run whose value=4 was lost starts it from value=3's stored solution.
    manifest = Manifest(tmp_path)
    kept = [line for line in manifest.path.read_text().splitlines() if '"value=4"' not in line]
    manifest.path.write_text("\n".join(kept) + "\n")
    again = run_batch(spec, tmp_path, serial=True, progress=False, resume=True)
    assert (again.done, again.resumed) == (1, 3) and again.records[0]["summary"]["guess_value"] == 3.0
    written = write_aggregate(spec, tmp_path)
    assert [p.name for p in written] == ["aggregate.csv", "aggregate.md", "aggregate.png"]
    table = (tmp_path / "aggregate.csv").read_text().splitlines()
    assert table[0].startswith("value,status,attempts,square") and table[4].split(",")[3] == "16.0"


@pytest.mark.slow
def test_static_optimization_task_on_a_few_arm26_frames(tmp_path):
    """The task runs the static-optimization tool: 8 frames of the elbow flexion, reserves as the tool's."""
    spec_file = write_toml(tmp_path / "so.toml", f"""
task = "static-optimization"
[inputs]
model = "{ROOT / 'trajopt/examples/arm26/arm26.osim'}"
paths = "{ROOT / 'trajopt/examples/arm26/paths.json'}"
motion = "{ROOT / 'trajopt/examples/arm26_static_optimization/elbow_flex_0_90_minjerk.mot'}"
frames = 8
[sweep]
first_frame = [0, 50]
""")
    spec = load_spec(spec_file)
    report = run_batch(spec, tmp_path / "out", serial=True, progress=False)
    assert (report.done, report.failed) == (2, 0)
    for record in report.records:
        assert record["summary"]["frames"] == 8
        folder = tmp_path / "out" / record["result"]
        assert {"activations.sto", "forces.sto", "reserves.sto", "summary.md", "log.txt"} <= \
            {p.name for p in folder.iterdir()}
    # The batch changes nothing: the same 8 frames through `trajopt static-optimization` give the same activations.
    from trajopt.edge.cli import main
    from trajopt.model.io import read_table, write_sto

    motion = read_table(ROOT / "trajopt/examples/arm26_static_optimization/elbow_flex_0_90_minjerk.mot")
    part = type(motion)(motion.time[50:58], motion.labels, motion.data[50:58], motion.in_degrees, motion.name)
    write_sto(tmp_path / "part.mot", part)
    assert main(["static-optimization", str(ROOT / "trajopt/examples/arm26/arm26.osim"), str(tmp_path / "part.mot"),
                 "--paths", str(ROOT / "trajopt/examples/arm26/paths.json"), "--out", str(tmp_path / "direct")]) == 0
    record = next(r for r in report.records if r["inputs"]["first_frame"] == 50)
    batch = read_table(tmp_path / "out" / record["result"] / "activations.sto")
    direct = read_table(tmp_path / "direct" / "activations.sto")
    assert batch.labels == direct.labels and abs(batch.data - direct.data).max() < 1e-9


def test_bad_input_inside_a_task_is_recorded_once_not_retried(tmp_path):
    spec_file = write_toml(tmp_path / "so.toml", f"""
task = "static-optimization"
[inputs]
model = "{ROOT / 'trajopt/examples/arm26/arm26.osim'}"
paths = "{ROOT / 'trajopt/examples/arm26/paths.json'}"
motion = "{ROOT / 'trajopt/examples/arm26_static_optimization/elbow_flex_0_90_minjerk.mot'}"
frames = 5
[sweep]
first_frame = [0]
[retry]
max_retries = 3
""")
    report = run_batch(load_spec(spec_file), tmp_path / "out", serial=True, progress=False)
    assert (report.failed, report.attempts) == (1, 1)
    record = report.records[0]
    assert record["failure"] == "input" and "needs at least 6 frames, got 5" in record["error"]


def test_dask_is_imported_only_when_a_cluster_runs():
    code = ("import sys, trajopt, trajopt.edge.batch, trajopt.edge.batch.cli; "
            "print(any(m.split('.')[0] in ('dask', 'distributed') for m in sys.modules))")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert completed.stdout.strip() == "False", completed.stderr


def test_yaml_spec_reads_as_the_same_toml(tmp_path):
    pytest.importorskip("yaml")
    toml = write_toml(tmp_path / "s.toml", 'task = "sleep"\n[sweep]\nvalue = [1, 2]\n[retry]\nmax_retries = 0\n')
    yaml = write_toml(tmp_path / "s.yaml", "task: sleep\nsweep:\n  value: [1, 2]\nretry:\n  max_retries: 0\n")
    assert load_spec(toml).rows == load_spec(yaml).rows and load_spec(yaml).retry.max_retries == 0


@pytest.mark.slow
def test_gait2d_sweep_task_warm_starts_and_meets_its_speed(tmp_path):
    """Two speeds on 25 intervals, 1.4 m/s warm-started from 1.3 m/s; stride / (2 t_f) is the imposed speed."""
    data = {"task": "gait2d-prediction", "inputs": {"intervals": 25, "final_time": [0.2, 1.0], "pelvis_tx": [0, 3]},
            "sweep": {"speed": [1.3, 1.4]}, "warm_start": {"along": "speed", "start": 1.3}}
    report = run_batch(parse_spec(data, "g.toml"), tmp_path, serial=True, progress=False)
    assert report.done == 2
    for record in report.records:
        s = record["summary"]
        assert s["stride_length"] / (2 * s["final_time"]) == pytest.approx(record["inputs"]["speed"], rel=1e-6)
        assert s["cadence"] == pytest.approx(60.0 / s["final_time"]) and 0.2 < s["final_time"] < 1.0
        assert 0 < s["cost_of_transport"] < 1
    assert [r["warm_start"] for r in report.records] == [None, "speed=1.3"]


def test_a_failed_warm_started_solve_is_retried_from_the_default_guess(tmp_path):
    data = {"task": "sleep", "sweep": {"value": [1.0, 2.0]}, "inputs": {"solver_failure_value": 2.0},
            "warm_start": {"along": "value"},
            "retry": {"max_retries": 1, "solver_failures": True}}
    report = run_batch(parse_spec(data, "s.toml"), tmp_path, serial=True, progress=False)
    attempts = [(r["attempt"], r["warm_start"], r["summary"]["guess_value"]) for r in report.records
                if r["inputs"]["value"] == 2.0]
    assert attempts == [(1, "value=1", 1.0), (2, None, None)] and report.done == 2


def test_inverse_dynamics_task_over_two_motions_writes_what_the_command_writes(tmp_path):
    motions = [ROOT / "trajopt/examples/arm26_static_optimization" / name
               for name in ("elbow_flex_0_90_minjerk.mot", "arm26_InverseKinematics.mot")]
    data = {"task": "inverse-dynamics", "inputs": {"model": str(ROOT / "trajopt/examples/arm26/arm26.osim")},
            "table": [{"motion": str(m)} for m in motions]}
    report = run_batch(parse_spec(data, "id.toml"), tmp_path / "out", serial=True, progress=False)
    assert report.done == 2
    from trajopt.edge.cli import main

    for record in report.records:
        direct = tmp_path / "direct"
        assert main(["inverse-dynamics", str(ROOT / "trajopt/examples/arm26/arm26.osim"), record["inputs"]["motion"],
                     "--out", str(direct)]) == 0
        assert (tmp_path / "out" / record["result"] / "inverse_dynamics.sto").read_text() == \
            (direct / "inverse_dynamics.sto").read_text()
    assert "| elbow_flex_0_90_minjerk.mot | done |" in \
        (write_aggregate(parse_spec(data, "id.toml"), tmp_path / "out")[1]).read_text()


def test_progress_bar_shows_done_failed_running_and_eta(tmp_path):
    import io

    from trajopt.edge.batch.progress import ProgressBar

    stream = io.StringIO()
    spec = parse_spec(sleep_spec(sweep={"value": [1, 2, 3]}, inputs={"solver_failure_value": 3.0},
                                 retry={"max_retries": 0}), "s.toml")
    run_batch(spec, tmp_path, serial=True, stream=stream)
    lines = stream.getvalue().splitlines()
    assert lines[0].endswith("0/3: 0 done, 0 failed, 1 running, ETA ?")
    assert "1/3: 1 done, 0 failed, 1 running, ETA 0:00:" in lines[1]
    assert lines[-1].startswith("batch s [########################] 3/3: 2 done, 1 failed, 0 running, took 0:00:")
    # Resumed tasks count as finished but not towards the rate: 1 new task in ~0 s, 1 left.
    assert ProgressBar("x", 4, skipped=2).line(3, 0, 1).endswith("3/4: 3 done, 0 failed, 1 running, 2 resumed, "
                                                                 "ETA 0:00:00")
