"""The committed results/ holds what `trajopt regenerate-results` writes and nothing else: every file sits where one of
its commands writes (a folder given as --out, or a benchmark's report and its Markdown table), each table once (no
.csv beside a .sto of the same name), no GIF (animations are written on demand with --animate), and only the formats
the commands write. Read from the file names, without running a command."""

from pathlib import Path

from trajopt.cli.regenerate import commands

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"
# The two indexes that explain the folders to a reader (which command wrote what); no command writes them.
INDEXES = {RESULTS / "README.md", RESULTS / "benchmarks" / "README.md"}
# .trajopt-output: the marker by which a command owns its output folder.
FORMATS = {".sto", ".png", ".json", ".md", ".jsonl", ".csv", ".trajopt-output"}


def _committed() -> list[Path]:
    return sorted(p for p in RESULTS.rglob("*") if p.is_file())


def _written_places() -> tuple[set[Path], set[Path]]:
    """(folders a command writes into, single files a command writes), from regenerate-results' command lines."""
    folders, files = set(), set()
    for _, argv in commands(RESULTS):
        out = Path(argv[argv.index("--out") + 1])
        if out.suffix == ".json":  # a benchmark's report, with its Markdown table beside it for some
            files |= {out, out.with_suffix(".md")}
        else:
            folders.add(out)
    return folders, files


def test_every_committed_file_is_written_by_a_regenerate_results_command():
    folders, files = _written_places()
    stray = [str(p.relative_to(ROOT)) for p in _committed()
             if p not in INDEXES and p not in files and not any(p.is_relative_to(f) for f in folders)]
    assert stray == []


def test_results_hold_no_gifs_no_twin_csv_tables_and_only_the_commands_formats():
    committed = _committed()
    assert [str(p.relative_to(ROOT)) for p in committed if p.suffix.lower() == ".gif"] == []
    assert [str(p.relative_to(ROOT)) for p in committed
            if p.suffix == ".csv" and p.with_suffix(".sto").exists()] == []
    assert sorted({p.suffix or p.name for p in committed} - FORMATS) == []
