"""trajopt.edge.batch under faults: bad output folders and scheduler addresses, two runs into one folder, a torn
manifest line, damaged result files, inputs changed before a resume, Ctrl-C, a dying Dask worker, and the default's
serial fallback. Every task is the tiny ``sleep`` task (trajopt.edge.batch.testing): its result is value**2 and its
solution file holds the value, so a recomputed or resumed task is checked against numbers the batch cannot make up."""

import io
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from trajopt.edge.batch import Manifest, parse_spec, run_batch, write_aggregate
from trajopt.edge.batch.executors import serial_fallback
from trajopt.edge.batch.runner import InputsChanged
from trajopt.edge.batch.sweep import plan
from terminal import sigint_as_in_a_terminal

ROOT = Path(__file__).parent.parent


def batch_command(*args) -> list[str]:
    return [sys.executable, "-m", "trajopt", "batch", *map(str, args), "--no-progress"]


def run_cli(*args, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run(batch_command(*args), capture_output=True, text=True, cwd=ROOT, timeout=timeout)


def write_spec(path: Path, values, seconds=0.0, extra="") -> Path:
    path.write_text(f'task = "sleep"\n[inputs]\nseconds = {seconds}\n[sweep]\nvalue = {list(values)}\n'
                    f'[retry]\nmax_retries = 0\n{extra}')
    return path


def valid_jsonl(path: Path) -> list[dict]:
    """Every line of the file parses as a JSON object (raises otherwise); the file ends with a newline."""
    data = path.read_bytes()
    assert data.endswith(b"\n")
    return [json.loads(line) for line in data.decode().splitlines()]


def stored_value(out: Path, record: dict) -> float:
    """The value in a task's solution file (its last line: time, value)."""
    return float((out / record["result"] / "solution.sto").read_text().split()[-1])


def one_error_line(completed: subprocess.CompletedProcess) -> str:
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in completed.stderr, completed.stderr
    return lines[0]


# --- 1. one-line errors --------------------------------------------------------------------------------------------

def test_out_that_is_a_file_or_under_a_file_is_one_line_and_exit_2(tmp_path):
    spec = write_spec(tmp_path / "s.toml", [1, 2])
    blocker = tmp_path / "afile"
    blocker.write_text("not a folder")
    is_file = run_cli(spec, "--serial", "--out", blocker)
    assert is_file.returncode == 2 and f"--out {blocker}: is a file" in one_error_line(is_file)
    under_file = run_cli(spec, "--serial", "--out", blocker / "sub")
    assert under_file.returncode == 2 and f"{blocker} is a file" in one_error_line(under_file)
    assert blocker.read_text() == "not a folder"


def test_scheduler_that_is_not_an_address_is_one_line_and_exit_2(tmp_path):
    pytest.importorskip("distributed")
    spec = write_spec(tmp_path / "s.toml", [1, 2])
    completed = run_cli(spec, "--scheduler", "nonsense", "--out", tmp_path / "out")
    assert completed.returncode == 2 and "--scheduler nonsense: cannot connect" in one_error_line(completed)


def test_input_file_deleted_mid_run_fails_that_task_in_one_line_and_the_aggregate_is_written(tmp_path):
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.txt").write_text(name * 10)
    rows = [{"value": 1.0, "data": "a.txt", "seconds": 0.05}, {"value": 2.0, "data": "b.txt", "seconds": 1.0},
            {"value": 3.0, "data": "c.txt", "seconds": 0.05}]
    spec = parse_spec({"task": "sleep", "retry": {"max_retries": 2}, "table": rows}, "files.toml", tmp_path)
    out = tmp_path / "out"

    def delete_c_once_a_task_finished():  # while value=2 sleeps its second
        deadline = time.time() + 30
        while time.time() < deadline and not Manifest(out).records():
            time.sleep(0.02)
        (tmp_path / "c.txt").unlink()

    deleter = threading.Thread(target=delete_c_once_a_task_finished)
    deleter.start()
    report = run_batch(spec, out, serial=True, progress=False)
    deleter.join()
    assert (report.done, report.failed, report.retried) == (2, 1, 0)  # a missing input is bad input: no retry
    failed = next(r for r in report.records if r["status"] == "failed")
    assert failed["inputs"]["value"] == 3.0 and failed["failure"] == "input"
    assert "\n" not in failed["error"] and "c.txt" in failed["error"]
    write_aggregate(spec, out)  # its input file is gone: the task is found by its identity
    table = (out / "aggregate.csv").read_text().splitlines()
    assert table[0].startswith("data,seconds,value,status,attempts,square")
    assert len(table) == 4 and table[3].startswith("c.txt,0.05,3.0,failed: input file unreadable after the batch")
    assert [row.split(",")[5] for row in table[1:3]] == ["1.0", "4.0"]  # the squares of the finished tasks


# --- 2. one run per output folder ----------------------------------------------------------------------------------

@pytest.mark.slow
def test_second_run_into_the_same_folder_refuses_at_once_and_a_dead_holder_does_not_block(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('task = "sleep"\n[[table]]\nvalue = 1.0\nseconds = 6.0\n[[table]]\nvalue = 2.0\nseconds = 0.0\n')
    out = tmp_path / "out"
    holder = subprocess.Popen(batch_command(spec, "--serial", "--out", out), cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, preexec_fn=sigint_as_in_a_terminal)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not (out / "spec.json").exists():  # written once the lock is held
            time.sleep(0.05)
        second = run_cli(spec, "--serial", "--out", out, "--resume")
        assert holder.poll() is None  # refused while the holder still runs, not after waiting for it
        line = one_error_line(second)
        assert second.returncode == 2 and str(out) in line and f"pid {holder.pid}" in line
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.communicate(timeout=30)
    assert (out / "batch.lock").read_text().strip() == str(holder.pid)  # the dead holder's lock file stays
    resumed = run_cli(spec, "--serial", "--out", out, "--resume", timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    done = [r for r in valid_jsonl(out / "manifest.jsonl") if r["status"] == "done"]
    assert sorted(r["summary"]["square"] for r in done) == [1.0, 4.0]


# --- 3. a torn manifest line ---------------------------------------------------------------------------------------

def test_torn_last_manifest_line_is_dropped_and_its_task_recomputed_on_resume(tmp_path):
    spec = parse_spec({"task": "sleep", "sweep": {"value": [1.0, 2.0, 3.0]}}, "s.toml")
    run_batch(spec, tmp_path, serial=True, progress=False)
    manifest = Manifest(tmp_path)
    data = manifest.path.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    torn = data[:last_start + (len(data) - last_start) // 2]  # killed halfway through writing the last line
    manifest.path.write_bytes(torn)
    lost = json.loads(data[last_start:])
    report = run_batch(spec, tmp_path, serial=True, progress=False, resume=True, stream=io.StringIO())
    assert any("dropped its last line" in note for note in report.notes)
    assert (report.done, report.resumed) == (1, 2) and report.records[0]["key"] == lost["key"]
    lines = valid_jsonl(manifest.path)
    assert len(lines) == 3 and sorted(r["summary"]["square"] for r in lines) == [1.0, 4.0, 9.0]
    write_aggregate(spec, tmp_path)
    rows = (tmp_path / "aggregate.csv").read_text().splitlines()[1:]
    assert [row.split(",")[:4] for row in rows] == [["1.0", "done", "1", "1.0"], ["2.0", "done", "1", "4.0"],
                                                     ["3.0", "done", "1", "9.0"]]


def test_manifest_line_is_one_write_that_ends_in_a_newline(tmp_path):
    manifest = Manifest(tmp_path)
    manifest.append({"key": "a", "status": "done", "note": "x" * 70_000})  # longer than a pipe's atomic write
    manifest.append({"key": "b", "status": "failed"})
    assert [r["key"] for r in valid_jsonl(manifest.path)] == ["a", "b"]


# --- 4. checksums of the results -----------------------------------------------------------------------------------

def test_missing_truncated_or_corrupted_result_files_are_recomputed_on_resume(tmp_path):
    spec = parse_spec({"task": "sleep", "sweep": {"value": [1.0, 2.0, 3.0, 4.0]}}, "s.toml")
    first = run_batch(spec, tmp_path, serial=True, progress=False)
    record = {r["inputs"]["value"]: r for r in first.records}
    assert record[1.0]["files"]["solution.sto"]["bytes"] == len((tmp_path / record[1.0]["result"] /
                                                                "solution.sto").read_bytes())
    (tmp_path / record[1.0]["result"] / "solution.sto").unlink()
    with open(tmp_path / record[2.0]["result"] / "solution.sto", "r+b") as stream:
        stream.truncate(10)
    corrupted = tmp_path / record[3.0]["result"] / "summary.json"
    corrupted.write_bytes(corrupted.read_bytes().replace(b"9.0", b"8.0"))  # same size, other content
    again = run_batch(spec, tmp_path, serial=True, progress=False, resume=True, stream=io.StringIO())
    assert (again.done, again.resumed) == (3, 1)
    notes = [n for n in again.notes if "recomputing" in n]
    assert len(notes) == 3
    assert "value=1" in notes[0] and "solution.sto is missing" in notes[0]
    assert "value=2" in notes[1] and "solution.sto is truncated (10 of" in notes[1]
    assert "value=3" in notes[2] and "summary.json is corrupted" in notes[2]
    finished = Manifest(tmp_path).finished()
    assert len(finished) == 4
    assert sorted(stored_value(tmp_path, r) for r in finished.values()) == [1.0, 2.0, 3.0, 4.0]
    assert json.loads(corrupted.read_text())["square"] == 9.0


# --- 5. inputs changed before a resume -----------------------------------------------------------------------------

def test_trial_file_edited_after_its_task_finished_refuses_resume_unless_forced(tmp_path):
    (tmp_path / "a.txt").write_text("12345")
    (tmp_path / "b.txt").write_text("123")
    data = {"task": "sleep", "table": [{"value": 1.0, "data": "a.txt"}, {"value": 2.0, "data": "b.txt"}]}
    spec_file = tmp_path / "trials.toml"
    spec_file.write_text('task = "sleep"\n[[table]]\nvalue = 1.0\ndata = "a.txt"\n[[table]]\nvalue = 2.0\n'
                         'data = "b.txt"\n')
    out = tmp_path / "out"
    run_batch(parse_spec(data, str(spec_file), tmp_path), out, serial=True, progress=False)
    (tmp_path / "b.txt").write_text("1234567")
    refused = run_cli(spec_file, "--serial", "--out", out, "--resume")
    line = one_error_line(refused)
    assert refused.returncode == 2 and "task data=b.txt,value=2" in line and "data file b.txt edited" in line
    assert "a.txt" not in line and "--force" in line
    forced = run_batch(parse_spec(data, str(spec_file), tmp_path), out, serial=True, progress=False, resume=True,
                       force=True, stream=io.StringIO())
    assert (forced.done, forced.resumed) == (1, 1) and forced.records[0]["summary"]["data_bytes"] == 7
    assert any("data=b.txt,value=2: inputs changed" in note for note in forced.notes)


@pytest.mark.slow
def test_resume_with_another_set_refuses_naming_the_change_and_force_recomputes(tmp_path):
    spec_file = write_spec(tmp_path / "s.toml", [1, 2, 3])
    out = tmp_path / "out"
    assert run_cli(spec_file, "--serial", "--out", out).returncode == 0
    refused = run_cli(spec_file, "--serial", "--out", out, "--resume", "--set", "seconds=0.01")
    line = one_error_line(refused)
    assert refused.returncode == 2 and "task value=1 finished with other inputs (seconds 0.0 -> 0.01)" in line
    assert "and 2 more task(s)" in line
    forced = run_cli(spec_file, "--serial", "--out", out, "--resume", "--force", "--set", "seconds=0.01")
    assert forced.returncode == 0 and "3 done, 0 failed, 0 resumed" in forced.stdout
    assert forced.stderr.count("inputs changed since it finished (seconds 0.0 -> 0.01)") == 3


def test_changed_inputs_raise_in_the_library_too(tmp_path):
    spec = parse_spec({"task": "sleep", "sweep": {"value": [1.0]}}, "s.toml")
    run_batch(spec, tmp_path, serial=True, progress=False)
    other = parse_spec({"task": "sleep", "sweep": {"value": [1.0]}, "inputs": {"raise_until_attempt": 0,
                                                                               "seconds": 0.001}}, "s.toml")
    with pytest.raises(InputsChanged, match=r"value=1 finished with other inputs \(seconds 0.0 -> 0.001\)"):
        run_batch(other, tmp_path, serial=True, progress=False, resume=True)
    assert plan(other)[0].identity == plan(spec)[0].identity and plan(other)[0].key != plan(spec)[0].key


# --- 6. Ctrl-C -----------------------------------------------------------------------------------------------------

def test_sigint_stops_the_batch_marks_the_running_task_interrupted_and_resume_finishes(tmp_path):
    spec = write_spec(tmp_path / "s.toml", [1, 2, 3, 4, 5, 6], seconds=0.8)
    out = tmp_path / "out"
    batch = subprocess.Popen(batch_command(spec, "--serial", "--out", out), cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, preexec_fn=sigint_as_in_a_terminal)
    deadline = time.time() + 60
    while time.time() < deadline and not Manifest(out).records():
        time.sleep(0.02)
    time.sleep(0.3)
    batch.send_signal(signal.SIGINT)  # the second task is sleeping its 0.8 s
    sent = time.time()
    stdout, stderr = batch.communicate(timeout=60)
    assert time.time() - sent < 10 and batch.returncode == 130, stderr
    assert "interrupted" in stdout and "Traceback" not in stderr
    lines = valid_jsonl(out / "manifest.jsonl")
    statuses = [r["status"] for r in lines]
    assert statuses.count("interrupted") == 1 and statuses[-1] == "interrupted" and "failed" not in statuses
    assert len(lines) <= 3  # no task started after the signal (one or two finished before it)
    assert lines[-1]["attempt"] == 1 and "SIGINT" in lines[-1]["error"]
    assert json.loads((out / "batch.json").read_text())["stopped_by_sigint"] is True
    done_before = statuses.count("done")
    resumed = run_cli(spec, "--serial", "--out", out, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert f"{6 - done_before} done, 0 failed, {done_before} resumed" in resumed.stdout
    finished = Manifest(out).finished()
    assert sorted(r["summary"]["square"] for r in finished.values()) == [1, 4, 9, 16, 25, 36]


@pytest.mark.slow
def test_sigint_on_a_local_cluster_interrupts_only_the_running_tasks(tmp_path):
    pytest.importorskip("distributed")
    spec = write_spec(tmp_path / "s.toml", [1, 2, 3, 4, 5], seconds=1.0)
    out = tmp_path / "out"
    batch = subprocess.Popen(batch_command(spec, "--workers", "2", "--out", out), cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=sigint_as_in_a_terminal)
    deadline = time.time() + 60
    while time.time() < deadline and not Manifest(out).records():
        time.sleep(0.02)
    time.sleep(0.3)  # both workers are in a task
    batch.send_signal(signal.SIGINT)
    stdout, stderr = batch.communicate(timeout=60)
    assert batch.returncode == 130 and "interrupted" in stdout, stderr
    statuses = [r["status"] for r in valid_jsonl(out / "manifest.jsonl")]
    assert 1 <= statuses.count("interrupted") <= 2 and "failed" not in statuses  # one per busy worker at most
    resumed = run_cli(spec, "--serial", "--out", out, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(r["summary"]["square"] for r in Manifest(out).finished().values()) == [1, 4, 9, 16, 25]


# --- 7. a dying Dask worker ----------------------------------------------------------------------------------------

@pytest.mark.slow
def test_worker_death_is_recorded_as_worker_died_resumable_and_batch_json_counts_workers(tmp_path):
    pytest.importorskip("distributed")
    flag = tmp_path / "die"
    flag.write_text("the task's worker exits while this file exists")
    # One retry: a task the dying worker had been handed too is retried and done; value=2 dies on both attempts.
    data = {"task": "sleep", "inputs": {"seconds": 0.2}, "retry": {"max_retries": 1},
            "table": [{"value": 1.0}, {"value": 2.0, "exit_while_file": str(flag)}, {"value": 3.0}]}
    spec = parse_spec(data, "dies.toml")
    report = run_batch(spec, tmp_path / "out", workers=2, progress=False)
    assert (report.mode, report.done, report.failed) == ("local", 2, 1)
    died = [r for r in report.records if r["inputs"]["value"] == 2.0]
    assert [(r["attempt"], r["status"]) for r in died] == [(1, "failed"), (2, "failed")]
    assert all(r["error"].startswith("worker died (KilledWorker") for r in died)
    written = json.loads((tmp_path / "out" / "batch.json").read_text())
    pids = {r["summary"]["worker"] for r in report.records if r["status"] == "done"}
    assert written["workers"] == 2 and written["workers_used"] == len(pids) >= 1
    assert 0 <= written["workers_at_end"] <= 2  # the nannies restart dead workers; at the end some may be restarting
    flag.unlink()
    again = run_batch(spec, tmp_path / "out", serial=True, progress=False, resume=True)
    assert (again.done, again.resumed, again.failed) == (1, 2, 0)
    assert again.records[0]["summary"]["square"] == 4.0


# --- 8. serial when a cluster cannot help --------------------------------------------------------------------------

def planned(values, warm=None):
    data = {"task": "sleep", "sweep": {"value": values}}
    if warm:
        data["warm_start"] = warm
    tasks = plan(parse_spec(data, "s.toml"))
    return tasks, {t.index for t in tasks}


def test_serial_fallback_when_one_task_a_chain_or_short_tasks():
    tasks, to_run = planned([1.0])
    assert serial_fallback(tasks, to_run, None, cores=2) == (1, "1 task to run")
    tasks, to_run = planned([1.0, 2.0, 3.0], warm={"along": "value"})
    assert serial_fallback(tasks, to_run, None, cores=2) == (1, "the warm-start plan runs one task at a time")
    tasks, to_run = planned([1.0, 2.0, 3.0, 4.0])
    workers, reason = serial_fallback(tasks, to_run, 0.5, cores=2)  # 4 x 0.5 s: a cluster saves at most 1 s
    assert workers == 1 and "at most 1 s" in reason
    assert serial_fallback(tasks, to_run, 10.0, cores=2) == (2, None)  # 20 s saved: a cluster helps
    assert serial_fallback(tasks, to_run, None, cores=8) == (4, None)  # no more workers than tasks
    assert serial_fallback(tasks, to_run, 10.0, cores=1) == (1, "1 core")
    tasks, to_run = planned([1.0, 2.0, 3.0, 4.0], warm={"along": "value", "chains": 2})
    assert serial_fallback(tasks, to_run, 10.0, cores=4) == (2, None)  # two chains: two tasks side by side


def test_default_batch_of_short_tasks_runs_serially_and_says_so(tmp_path):
    """Serial, and why: the tasks are too short for a cluster to pay (or, without the batch extra, Dask is absent)."""
    spec = write_spec(tmp_path / "s.toml", [1, 2, 3, 4], seconds=0.01)
    completed = run_cli(spec, "--out", tmp_path / "out")
    assert completed.returncode == 0 and "on 1 serial worker(s)" in completed.stdout
    line = one_error_line(completed)
    reason = "4 tasks of about 0.01 s;" if importlib.util.find_spec("distributed") else "Dask is not installed"
    assert line.startswith(f"trajopt batch: runs serially (fallback: {reason}")
    written = json.loads((tmp_path / "out" / "batch.json").read_text())
    assert written["scheduler"].startswith(f"serial (fallback: {reason.rstrip(';')}") and written["mode"] == "serial"


@pytest.mark.slow
def test_default_times_a_first_task_then_sends_the_rest_to_a_cluster_when_it_pays(tmp_path, monkeypatch):
    """A task kind with no estimate: the first task runs here; 3 more of 1 s each save 1.5 s on 2 workers, more than
    a start-up of 0.5 s (the cost set low so the test stays short), so they go to a LocalCluster."""
    pytest.importorskip("distributed")
    import dataclasses
    import functools

    from trajopt.edge.batch import executors, runner, tasks

    monkeypatch.setitem(tasks.TASKS, "sleep", dataclasses.replace(tasks.TASKS["sleep"], expected_seconds=None))
    monkeypatch.setattr(runner, "serial_fallback",
                        functools.partial(executors.serial_fallback, cost=executors.ClusterCost(0.5)))
    monkeypatch.setattr(runner.os, "cpu_count", lambda: 2)
    spec = parse_spec({"task": "sleep", "inputs": {"seconds": 1.0}, "sweep": {"value": [1.0, 2.0, 3.0, 4.0]}},
                      "probe.toml")
    report = run_batch(spec, tmp_path, progress=False, stream=io.StringIO())
    assert (report.mode, report.workers, report.done) == ("local", 2, 4)
    assert re.fullmatch(r"local \(2 workers, after a first task of 1(\.\d)? s in this process\)", report.scheduler)
    assert len(report.notes) == 1 and re.fullmatch(r"trajopt batch: a first task took 1(\.\d)? s here; the other 3 go "
                                                   r"to a LocalCluster of 2 workers", report.notes[0])
    assert report.records[0]["summary"]["pid"] == os.getpid()  # the first task ran here, the others elsewhere
    assert all(r["summary"]["pid"] != os.getpid() for r in report.records[1:])
    assert sorted(r["summary"]["square"] for r in report.records) == [1.0, 4.0, 9.0, 16.0]
