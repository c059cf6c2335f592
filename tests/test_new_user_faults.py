"""Every command given a new user's bad or implausible input (tests/new_user_faults.py) ends without a traceback:
bad input in one line naming the file, element or value with a non-zero exit, implausible input with a stated
caveat, good input with exit 0. Each case runs ``python -m trajopt`` in a child process, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from new_user_faults import CASES, ROOT, Expect

SECONDS = 120  # each case is refused before any solve or solves a few frames


def run_case(case, tmp_path) -> subprocess.CompletedProcess:
    argv = [str(a) for a in case.argv(tmp_path)]
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONWARNINGS="default")
    try:
        return subprocess.run([sys.executable, "-m", "trajopt", *argv], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=SECONDS)
    except subprocess.TimeoutExpired:
        pytest.fail(f"trajopt {' '.join(argv)}: still running after {SECONDS} s (not refused before the work)")


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_new_user_fault(case, tmp_path):
    completed = run_case(case, tmp_path)
    output = completed.stdout + completed.stderr
    says = [fragment.format(tmp=tmp_path) for fragment in case.says]
    assert "Traceback" not in output, output
    if case.expect is Expect.ERROR:
        errors = [line for line in completed.stderr.splitlines() if "error:" in line]
        assert completed.returncode not in (0, 130) and len(errors) == 1, output
        assert all(fragment in errors[0] for fragment in says), errors[0]
    elif case.expect is Expect.CAVEAT:
        caveats = [line for line in output.splitlines() if line.startswith(("warning", "note"))]
        assert completed.returncode == 0, output
        assert any(all(fragment in line for fragment in says) for line in caveats), output
    else:
        assert completed.returncode == 0, output
