"""Where a run writes: ``./trajopt_results/<name>`` by default (never the source tree or site-packages), a folder
the run owns and cleans of an earlier run's files, and a one-line error when the folder cannot be created.

A folder is owned by trajopt when it holds the marker file ``.trajopt-output``; the marker is only put into a
folder that is new or empty, so a run never deletes files it did not write (``--out .`` keeps the user's files).
"""

from __future__ import annotations

import json

import shutil
from pathlib import Path
from typing import Callable

from trajopt.errors import TrajoptInputError

MARKER = ".trajopt-output"
DEFAULT_PARENT = "trajopt_results"


def default_output(name: str) -> Path:
    """``./trajopt_results/<name>`` in the current directory."""
    return Path.cwd() / DEFAULT_PARENT / name


# Suffixes of the files runs write: a folder named like one of them is a file name given where a folder is meant.
FILE_SUFFIXES = (".json", ".sto", ".mot", ".csv", ".md", ".xml", ".png", ".gif")


def folder_name(path, option: str = "--out") -> Path:
    """``path`` if it can name a folder: not an existing file, not a new name ending in a file suffix
    (``paths.json``: the runs write fixed file names inside their folder); one line otherwise."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise TrajoptInputError(f"{option} {path}: is a file; give a folder")
    if not path.exists() and path.suffix.lower() in FILE_SUFFIXES:
        raise TrajoptInputError(f"{option} {path}: give a folder (the files are written inside it), not a "
                                f"'{path.suffix}' file name")
    return path


def create_folder(path, option: str = "--out") -> Path:
    """``path`` as an existing folder, or one line saying why it cannot be (a :class:`TrajoptInputError`)."""
    folder = folder_name(path, option)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise TrajoptInputError(f"{option} {folder}: cannot create the folder ({error.strerror})") from None
    return folder


def writable_file(path, option: str = "--out") -> Path:
    """``path`` as a file this run can write (its folder created; probed by opening it for appending, removed again
    if new), checked before any work, or one line saying why it cannot be (a :class:`TrajoptInputError`)."""
    path = Path(path)
    if path.is_dir():
        raise TrajoptInputError(f"{option} {path}: is a folder; give a file name")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise TrajoptInputError(f"{option} {path}: cannot create its folder {path.parent} ({error.strerror})") from None
    existed = path.exists()
    try:
        with open(path, "a"):
            pass
    except OSError as error:
        raise TrajoptInputError(f"{option} {path}: cannot write ({error.strerror})") from None
    if not existed:
        path.unlink()
    return path


def fresh_output(path, owns: Callable[[str], bool] | None = None, option: str = "--out") -> Path:
    """Create ``path`` and remove what an earlier trajopt run left in it, so no stale file sits beside new ones.

    Only a folder trajopt owns (new, empty, or holding the marker) is cleaned. ``owns(name)`` says which entries
    this run owns when runs share a folder (e.g. the gait2d variants); default: all of them."""
    folder = create_folder(path, option)
    marker = folder / MARKER
    if not marker.exists():
        if any(folder.iterdir()):
            return folder  # not ours: write beside the user's files, delete nothing
        marker.write_text("written by trajopt; a new run into this folder removes the files of the previous one\n")
        return folder
    for entry in folder.iterdir():
        if entry.name == MARKER or (owns is not None and not owns(entry.name)):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    return folder


def write_report(path, report: dict) -> Path:
    """A benchmark's JSON report at ``path`` (its folder created, or one line saying why it cannot be)."""
    path = Path(path)
    create_folder(path.parent)
    path.write_text(json.dumps(report, indent=1) + "\n")
    return path
