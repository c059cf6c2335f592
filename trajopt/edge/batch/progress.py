"""The batch progress bar on stderr: done, failed, running and an ETA; one redrawn line on a terminal,
a new line whenever the counts change otherwise (logs, CI)."""

from __future__ import annotations

import sys
import time


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class ProgressBar:
    def __init__(self, name: str, total: int, skipped: int = 0, stream=None, width: int = 24, enabled: bool = True):
        self.name, self.total, self.skipped, self.width = name, total, skipped, width
        self.stream = sys.stderr if stream is None else stream
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.perf_counter()
        self._last = None

    def line(self, done: int, failed: int, running: int, retried: int = 0) -> str:
        finished = done + failed
        filled = int(self.width * finished / self.total) if self.total else self.width
        bar = "#" * filled + "-" * (self.width - filled)
        new = finished - self.skipped
        elapsed = time.perf_counter() - self.started
        if finished >= self.total:
            eta = f"took {_clock(elapsed)}"
        elif new > 0:
            eta = f"ETA {_clock(elapsed / new * (self.total - finished))}"
        else:
            eta = "ETA ?"
        extra = f", {self.skipped} resumed" if self.skipped else ""
        extra += f", {retried} retried" if retried else ""
        return (f"{self.name} [{bar}] {finished}/{self.total}: {done} done, {failed} failed, {running} running"
                f"{extra}, {eta}")

    def update(self, done: int, failed: int, running: int, retried: int = 0, force: bool = False) -> None:
        if not self.enabled:
            return
        counts = (done, failed, running, retried)
        if self.tty:
            self.stream.write("\r" + self.line(*counts).ljust(100))
            self.stream.flush()
        elif force or counts != self._last:
            self.stream.write(self.line(*counts) + "\n")
            self.stream.flush()
        self._last = counts

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()
