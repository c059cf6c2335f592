import subprocess
import sys

from trajopt.cli import main


def test_help_lists_commands(capsys):
    assert main([]) == 2
    out = capsys.readouterr().out
    assert "run" in out and "bench" in out


def test_unknown_problem_is_one_line_exit_2(capsys):
    assert main(["run", "no-such-problem"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no-such-problem" in err[0]


def test_unknown_command_is_one_line_exit_2():
    completed = subprocess.run([sys.executable, "-m", "trajopt.cli", "frobnicate"], capture_output=True, text=True)
    assert completed.returncode == 2
    assert len(completed.stderr.strip().splitlines()) == 1
