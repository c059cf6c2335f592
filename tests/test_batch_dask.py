"""trajopt.edge.batch on Dask: a LocalCluster whose worker dies mid-task (the task is retried, nothing is lost, a
resumed run does no finished task again), and a separately started ``dask scheduler`` with two ``dask worker``s."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from trajopt.edge.batch import Manifest, parse_spec, run_batch  # noqa: E402

ROOT = Path(__file__).parent.parent
DASK = Path(sys.executable).parent / "dask"


def spec_with_rows(rows, retries=1, **inputs) -> dict:
    return {"task": "sleep", "inputs": inputs, "table": rows, "retry": {"max_retries": retries}}


def check_nothing_lost(out: Path, count: int) -> list[dict]:
    """Every task has exactly one 'done' line and a result folder that says done."""
    records = Manifest(out).records()
    done = [r for r in records if r["status"] == "done"]
    assert len(done) == count and len({r["key"] for r in done}) == count
    assert len(Manifest(out).finished()) == count
    for record in done:
        result = json.loads((out / record["result"] / "result.json").read_text())
        assert result["status"] == "done" and result["summary"]["square"] == record["inputs"]["value"] ** 2
    return records


@pytest.mark.slow
def test_worker_that_dies_mid_task_is_retried_on_local_cluster(tmp_path):
    rows = [{"value": 1.0}, {"value": 2.0, "exit_until_attempt": 1}, {"value": 3.0}, {"value": 4.0}]
    spec = parse_spec(spec_with_rows(rows, seconds=0.2), "dies.toml")
    report = run_batch(spec, tmp_path, workers=2, progress=False)
    assert (report.mode, report.workers, report.done, report.failed) == ("local", 2, 4, 0)
    records = check_nothing_lost(tmp_path, 4)
    # A task the scheduler had already handed to the dying worker is retried too (never lost).
    assert report.retried == sum(r["status"] == "failed" for r in records) >= 1
    assert all(r["failure"] == "worker" for r in records if r["status"] == "failed")
    lost = [r for r in records if r["inputs"]["exit_until_attempt"] == 1]
    assert [(r["attempt"], r["status"], r["failure"]) for r in lost] == [(1, "failed", "worker"), (2, "done", None)]
    assert "KilledWorker" in lost[0]["error"]


@pytest.mark.slow
def test_sigkill_of_a_worker_process_then_resume(tmp_path):
    """`trajopt batch` on 2 LocalCluster workers; a worker process is SIGKILLed mid-task from outside."""
    psutil = pytest.importorskip("psutil")
    spec = tmp_path / "kill.toml"
    spec.write_text('task = "sleep"\n[inputs]\nseconds = 3.0\n[sweep]\nvalue = [1, 2, 3, 4, 5, 6]\n'
                    '[retry]\nmax_retries = 1\n')
    out = tmp_path / "out"
    command = [sys.executable, "-m", "trajopt", "batch", str(spec), "--workers", "2", "--out", str(out)]
    batch = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    victim = None
    deadline = time.time() + 120
    while victim is None and time.time() < deadline:
        time.sleep(0.5)
        lines = Manifest(out).records()
        if lines:  # tasks are running: kill the worker that runs the next one (a worker of this batch only)
            pids = {p.pid for p in psutil.Process(batch.pid).children(recursive=True)}
            busy = {int(r["summary"]["pid"]) for r in lines}
            workers = [p for p in pids if p in busy] or [p for p in pids if "dask" in " ".join(
                psutil.Process(p).cmdline()) or "multiprocessing" in " ".join(psutil.Process(p).cmdline())]
            if workers:
                victim = workers[0]
                os.kill(victim, signal.SIGKILL)
    stdout, stderr = batch.communicate(timeout=300)
    assert victim is not None, stderr
    assert batch.returncode == 0, stderr
    records = check_nothing_lost(out, 6)
    killed = [r for r in records if r["status"] == "failed"]
    assert len(killed) == 1 and killed[0]["failure"] == "worker"
    retried = [r for r in records if r["key"] == killed[0]["key"]]
    assert [r["attempt"] for r in retried] == [1, 2] and retried[1]["status"] == "done"
    # Resume: nothing finished runs again.
    again = subprocess.run(command + ["--resume"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert len(Manifest(out).records()) == len(records) and "6 resumed" in again.stdout


@pytest.mark.slow
def test_separately_started_scheduler_and_two_workers(tmp_path):
    """`dask scheduler` and two `dask worker --nthreads 1` on localhost; `trajopt batch --scheduler` runs on them."""
    if not DASK.exists():
        pytest.skip("the dask command line is not installed")
    port = 8786 + os.getpid() % 1000
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                   "MKL_NUM_THREADS": "1"}
    processes = [subprocess.Popen([str(DASK), "scheduler", "--port", str(port), "--no-dashboard"], cwd=tmp_path,
                                  env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        time.sleep(3)
        for name in ("w1", "w2"):
            processes.append(subprocess.Popen(
                [str(DASK), "worker", f"tcp://127.0.0.1:{port}", "--nworkers", "1", "--nthreads", "1",
                 "--name", name, "--no-dashboard"], cwd=tmp_path, env=environment,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        spec = tmp_path / "tiny.toml"
        spec.write_text('task = "sleep"\n[inputs]\nseconds = 0.5\n[sweep]\nvalue = [1, 2, 3, 4]\n'
                        '[warm_start]\nalong = "value"\nchains = 2\n')
        time.sleep(5)
        completed = subprocess.run([sys.executable, "-m", "trajopt", "batch", str(spec), "--scheduler",
                                    f"tcp://127.0.0.1:{port}", "--out", str(tmp_path / "out")], cwd=ROOT,
                                   capture_output=True, text=True, timeout=300)
        assert completed.returncode == 0, completed.stderr
        assert "on 2 scheduler worker(s)" in completed.stdout
        records = check_nothing_lost(tmp_path / "out", 4)
        assert len({r["summary"]["worker"] for r in records}) == 2  # both workers took tasks
        assert {r["inputs"]["value"]: r["summary"]["guess_value"] for r in records} == {1: None, 2: 1.0, 3: None,
                                                                                        4: 3.0}
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            process.wait(timeout=30)
