"""Where a batch keeps what it finished: one folder per task written atomically, and a JSONL manifest.

A task's key is a hash of its task name and inputs (files by their content), so ``--resume`` recognises a task
whatever order the batch runs in; its identity is a hash of the task name and its swept inputs only (files by path),
so a resumed run recognises the same task with changed inputs (an edited trial, another ``--set``). The result
folder ``tasks/<label>-<key>/`` is written to a temporary folder and renamed into place; only then is its manifest
line appended, in one write, flushed to disk. A line exists for every attempt, finished, failed or interrupted; it
holds the size and SHA-256 of each file the task wrote and of each input file. A task is finished when its last
line says ``done``, its folder says so too and every file is there with its size and checksum.
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


def input_digests(inputs: dict, file_inputs=()) -> dict:
    """name -> SHA-256 of each given file input (OSError when a file cannot be read)."""
    return {name: file_digest(inputs[name]) for name in file_inputs if inputs.get(name)}


def input_key(task: str, inputs: dict, file_inputs=(), digests: dict | None = None) -> str:
    """16 hex digits of SHA-256 over the task and its inputs, file inputs by their content (not their path)."""
    digests = input_digests(inputs, file_inputs) if digests is None else digests
    identity = {name: ({"sha256": digests[name]} if name in file_inputs and value else value)
                for name, value in inputs.items()}
    text = json.dumps({"task": task, "inputs": identity}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def task_identity(task: str, inputs: dict, swept) -> str | None:
    """16 hex digits of SHA-256 over the task and its swept inputs (files by path): the same task across changes
    of its other inputs or of its files' contents. None when an input of ``swept`` is not in ``inputs``."""
    if any(name not in inputs for name in swept):
        return None
    text = json.dumps({"task": task, "swept": {name: inputs[name] for name in swept}}, sort_keys=True,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def content_record(content: bytes) -> dict:
    """What the manifest keeps of a written file: its size and SHA-256."""
    return {"bytes": len(content), "sha256": hashlib.sha256(content).hexdigest()}


def file_problem(folder: Path, files: dict) -> str | None:
    """None when every file of ``files`` (name -> content_record) is in ``folder`` as written; else what is wrong."""
    for name, expected in files.items():
        path = folder / name
        if not path.is_file():
            return f"{name} is missing"
        size = path.stat().st_size
        if size < expected["bytes"]:
            return f"{name} is truncated ({size} of {expected['bytes']} bytes)"
        if size != expected["bytes"] or file_digest(path) != expected["sha256"]:
            return f"{name} is corrupted (its SHA-256 differs from the manifest's)"
    return None


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


def as_bytes(content) -> bytes:
    return content if isinstance(content, bytes) else str(content).encode()


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
        target.write_bytes(as_bytes(content))
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
        """One line in one ``write`` of an append-only descriptor, then fsync: a crash leaves at most a torn tail."""
        line = json.dumps({**record, "time": time.strftime("%Y-%m-%dT%H:%M:%S")}, default=str) + "\n"
        self.out.mkdir(parents=True, exist_ok=True)
        data = line.encode()
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            written = os.write(descriptor, data)
            while written < len(data):  # a regular file takes it whole; a short write is finished, never dropped
                written += os.write(descriptor, data[written:])
            os.fsync(descriptor)
        finally:
            os.close(descriptor)

    def repair(self) -> list[str]:
        """Drop what is not a whole JSON line (a line torn by a killed run); one note per fragment dropped.

        The file is rewritten through a temporary file and a rename, so it is valid JSONL afterwards whatever
        happens meanwhile.
        """
        if not self.path.exists():
            return []
        data = self.path.read_bytes()
        pieces = data.split(b"\n")
        kept, notes = [], []
        for number, piece in enumerate(pieces, 1):
            if not piece.strip():
                continue
            torn = number == len(pieces)  # no newline after it: its write did not finish
            try:
                record = json.loads(piece)
            except (json.JSONDecodeError, UnicodeDecodeError):
                record = None
            if isinstance(record, dict) and "key" in record and not torn:
                kept.append(piece)
                continue
            where = "its last line" if torn else f"line {number}"
            notes.append(f"{self.path}: dropped {where}, {len(piece)} bytes that are not a whole record "
                         f"(a run killed while writing); that task is recomputed")
        if notes:
            temporary = self.path.with_name(f".{MANIFEST}.{os.getpid()}")
            with open(temporary, "wb") as stream:
                stream.write(b"".join(piece + b"\n" for piece in kept))
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temporary, self.path)
        return notes

    def records(self) -> list[dict]:
        """Every line; a torn last line (the process was killed while writing it) is ignored."""
        if not self.path.exists():
            return []
        records = []
        for line in self.path.read_text(errors="replace").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and "key" in record:
                records.append(record)
        return records

    def latest(self) -> dict[str, dict]:
        """key -> the last line written for it."""
        return {record["key"]: record for record in self.records()}

    def problem(self, record: dict) -> str | None:
        """None when a 'done' record's folder holds it (result.json says done, every file as checksummed)."""
        if not record.get("result"):
            return "its result folder is not named in the manifest"
        folder = self.out / record["result"]
        try:
            if json.loads((folder / RESULT).read_text()).get("status") != "done":
                return f"{RESULT} does not say done"
        except FileNotFoundError:
            return f"{RESULT} is missing" if folder.is_dir() else f"its folder {record['result']} is missing"
        except (OSError, json.JSONDecodeError, UnicodeDecodeError):
            return f"{RESULT} is corrupted"
        return file_problem(folder, record.get("files", {}))

    def assess(self) -> tuple[dict[str, dict], dict[str, tuple[dict, str]]]:
        """(finished, broken): key -> last record of tasks whose last line is 'done' and whose folder holds it;
        key -> (record, what is wrong) for those whose last line says 'done' but whose folder does not."""
        done, broken = {}, {}
        for key, record in self.latest().items():
            if record.get("status") != "done":
                continue
            problem = self.problem(record)
            if problem is None:
                done[key] = record
            else:
                broken[key] = (record, problem)
        return done, broken

    def finished(self) -> dict[str, dict]:
        """key -> last record, for tasks whose last line is 'done' and whose result folder holds it."""
        return self.assess()[0]
