"""One batch at a time per output folder: an exclusive ``flock`` on ``DIR/batch.lock``, held for the whole run.

A second ``trajopt batch`` into the same folder fails at once with one line naming the folder and the holder's pid
(written into the lock file). The kernel drops the lock when its holder dies, so a lock file left by a killed run
never blocks the next one. The lock is re-entrant within a process (the command line holds it over the run and the
aggregate; ``run_batch`` takes it too).
"""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path

from trajopt.errors import TrajoptInputError

LOCK = "batch.lock"

_held: dict[Path, int] = {}  # resolved folder -> nesting depth in this process


class OutputFolderBusy(TrajoptInputError):
    """Another live process runs a batch into this output folder."""


def prepare_output_folder(out: Path) -> None:
    """Create ``out`` (and its parents); a file in its place or on its path is one line naming it."""
    if out.exists() and not out.is_dir():
        raise TrajoptInputError(f"--out {out}: is a file, not a folder; give a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise TrajoptInputError(f"--out {out}: a file is in the way of the folder; give a folder") from None
    except NotADirectoryError:
        parent = next((p for p in out.parents if p.exists() and not p.is_dir()), out.parent)
        raise TrajoptInputError(f"--out {out}: {parent} is a file, not a folder") from None
    except OSError as error:
        raise TrajoptInputError(f"--out {out}: cannot create the folder ({error.strerror})") from None


@contextmanager
def hold_output_folder(out):
    """Hold the folder's lock for the ``with`` block (create the folder first); ``OutputFolderBusy`` if taken."""
    out = Path(out)
    key = out.resolve()
    if key in _held:
        _held[key] += 1
        try:
            yield
        finally:
            _held[key] -= 1
        return
    prepare_output_folder(out)
    descriptor = os.open(out / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(descriptor, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(descriptor)
        raise OutputFolderBusy(f"{out}: another trajopt batch (pid {holder}) is writing this folder; wait for it "
                               f"to end or give another --out") from None
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, f"{os.getpid()}\n".encode(), 0)
    _held[key] = 1
    try:
        yield
    finally:
        del _held[key]
        os.close(descriptor)  # releases the lock; the file stays (removing it would race a newcomer's open)
