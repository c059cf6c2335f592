"""Where a batch keeps what it finished: one folder per task written atomically, and a JSONL manifest.

A task's key is a hash of its task name and inputs (files by their content), so ``--resume`` recognises a task
whatever order the batch runs in. The result folder ``tasks/<label>-<key>/`` is written to a temporary folder and
renamed into place; only then is its manifest line appended (and flushed to disk). A line exists for every
attempt, finished or failed; a task is finished when its last line says ``done`` and its folder says so too.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from pathlib import Path

MANIFEST = "manifest.jsonl"
RESULT = "result.json"


def file_digest(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def input_key(task: str, inputs: dict, file_inputs=()) -> str:
    """16 hex digits of SHA-256 over the task and its inputs, file inputs by their content (not their path)."""
    identity = {name: ({"sha256": file_digest(value)} if name in file_inputs and value else value)
                for name, value in inputs.items()}
    text = json.dumps({"task": task, "inputs": identity}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def task_label(inputs: dict, swept) -> str:
    """A readable label from the swept inputs: 'speed=1.3', 'motion=trial01.mot' ('task' when nothing varies)."""
    parts = []
    for name in swept:
        value = inputs[name]
        if isinstance(value, str) and os.sep in value:
            value = Path(value).name
        parts.append(f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}")
    return ",".join(parts) or "task"


def _folder_name(label: str, key: str) -> str:
    return f"{re.sub(r'[^A-Za-z0-9._=-]+', '_', label)[:80]}-{key[:8]}"


def write_result(out: Path, key: str, label: str, files: dict, record: dict) -> Path:
    """Write ``files`` and ``result.json`` to ``out/tasks/<label>-<key>/`` atomically (temporary folder, rename)."""
    tasks = out / "tasks"
    tasks.mkdir(parents=True, exist_ok=True)
    final = tasks / _folder_name(label, key)
    temporary = tasks / f".{final.name}.{os.getpid()}.{time.monotonic_ns()}"
    temporary.mkdir()
    for name, content in files.items():
        target = temporary / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else str(content).encode())
    (temporary / RESULT).write_text(json.dumps(record, indent=1, default=str))
    if final.exists():  # a failed earlier attempt: replaced by this one
        old = tasks / f".old.{final.name}.{time.monotonic_ns()}"
        os.replace(final, old)
        os.replace(temporary, final)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(temporary, final)
    return final


class Manifest:
    """The JSONL manifest of a batch folder: append a line per attempt; read back what is finished."""

    def __init__(self, out):
        self.out = Path(out)
        self.path = self.out / MANIFEST

    def exists(self) -> bool:
        return self.path.exists()

    def append(self, record: dict) -> None:
        line = json.dumps({**record, "time": time.strftime("%Y-%m-%dT%H:%M:%S")}, default=str)
        self.out.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a") as stream:
            stream.write(line + "\n")
            stream.flush()
            os.fsync(stream.fileno())

    def records(self) -> list[dict]:
        """Every line; a torn last line (the process was killed while writing it) is ignored."""
        if not self.path.exists():
            return []
        records = []
        for line in self.path.read_text().splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return records

    def latest(self) -> dict[str, dict]:
        """key -> the last line written for it."""
        return {record["key"]: record for record in self.records()}

    def finished(self) -> dict[str, dict]:
        """key -> last record, for tasks whose last line is 'done' and whose result folder says so."""
        done = {}
        for key, record in self.latest().items():
            if record.get("status") != "done":
                continue
            result = self.out / record["result"] / RESULT
            try:
                if json.loads(result.read_text()).get("status") == "done":
                    done[key] = record
            except (OSError, json.JSONDecodeError):
                continue
        return done
