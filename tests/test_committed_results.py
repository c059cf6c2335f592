"""The committed results/ holds what `trajopt regenerate-results` writes and nothing else, and only the kinds
results/README.md says are committed: every file git holds there sits where one of its commands writes (a folder
given as --out, a benchmark's report and its Markdown table, or the index regenerate-results writes), is a summary,
report or figure (no .sto table, no animation: the commands write those there and git ignores them) under the size
limit, and each table is written once (no .csv beside a .sto of the same name); every link in a committed Markdown
file reaches a committed file. Read from git's file list, without running a command."""

import os
import re
import subprocess
from pathlib import Path

import pytest

from trajopt.edge.cli.regenerate import INDEX, commands

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"
# The two hand-written pages that explain the folders to a reader; no command writes them.
HAND_WRITTEN = {RESULTS / "README.md", RESULTS / "benchmarks" / "README.md"}
# What results/ commits (.trajopt-output: the marker by which a command owns its output folder) ...
COMMITTED_FORMATS = {".png", ".json", ".md", ".jsonl", ".csv", ".trajopt-output"}
# ... and what the commands write there that stays out of git (.gitignore): tables and animations.
LOCAL_FORMATS = (".sto", ".gif", ".mp4")
SIZE_LIMIT_BYTES = 500_000
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _git(*args: str) -> subprocess.CompletedProcess | None:
    """git run in the checkout; None when git is missing or this is no git checkout."""
    try:
        done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        return None
    return None if done.returncode > 1 else done


def _committed() -> list[Path]:
    """The files git holds under results/ (present in the work tree); outside a git checkout, the files there."""
    listed = _git("ls-files", "-z", "--", "results")
    if listed is None or listed.returncode != 0:
        return sorted(p for p in RESULTS.rglob("*") if p.is_file())
    return sorted(p for p in (ROOT / name for name in listed.stdout.split("\0") if name) if p.is_file())


def _written_places() -> tuple[set[Path], set[Path]]:
    """(folders a command writes into, single files a command writes), from regenerate-results' command lines."""
    folders, files = set(), {RESULTS / INDEX}
    for _, argv in commands(RESULTS):
        out = Path(argv[argv.index("--out") + 1])
        if out.suffix == ".json":  # a benchmark's report, with its Markdown table beside it for some
            files |= {out, out.with_suffix(".md")}
        else:
            folders.add(out)
    return folders, files


def _relative(paths) -> list[str]:
    return sorted(p.relative_to(ROOT).as_posix() for p in paths)


def test_every_committed_file_is_written_by_a_regenerate_results_command():
    folders, files = _written_places()
    stray = [p for p in _committed()
             if p not in HAND_WRITTEN and p not in files and not any(p.is_relative_to(f) for f in folders)]
    assert _relative(stray) == []


def test_committed_files_are_summaries_reports_and_figures_under_the_size_limit():
    committed = _committed()
    assert _relative(p for p in committed if (p.suffix or p.name) not in COMMITTED_FORMATS) == []
    assert _relative(p for p in committed if p.stat().st_size > SIZE_LIMIT_BYTES) == []


def test_each_table_is_written_once():
    assert _relative(p for p in _committed() if p.suffix == ".csv" and p.with_suffix(".sto").exists()) == []


def test_git_ignores_the_tables_and_animations_the_commands_write_into_results():
    # Where every command writes, a table or an animation is ignored and a summary, report or figure is not.
    folders, files = _written_places()
    places = sorted(folders | {f.parent for f in files})
    local = [(place / f"solution{suffix}").relative_to(ROOT).as_posix() for place in places for suffix in LOCAL_FORMATS]
    kept = [(place / name).relative_to(ROOT).as_posix() for place in places
            for name in ("summary.md", "report.json", "figure.png", "table.csv")]
    done = _git("check-ignore", "--no-index", "--", *local, *kept)
    if done is None:
        pytest.skip("not a git checkout")
    ignored = set(done.stdout.split())
    assert sorted(set(local) - ignored) == [] and sorted(set(kept) & ignored) == []


def test_links_in_committed_markdown_reach_committed_files():
    committed = {p.relative_to(ROOT).as_posix() for p in _committed()}
    folders = {parent.as_posix() for name in committed for parent in Path(name).parents}
    broken = []
    for page in (p for p in _committed() if p.suffix == ".md"):
        for target in LINK.findall(page.read_text()):
            if target.startswith(("http://", "https://", "mailto:", "#")):
                continue
            path = os.path.relpath(os.path.normpath(page.parent / target.split("#")[0]), ROOT).replace(os.sep, "/")
            inside = path == "results" or path.startswith("results/")
            if not (path in committed or path in folders if inside else (ROOT / path).exists()):
                broken.append(f"{page.relative_to(ROOT).as_posix()}: {target}")
    assert broken == []
