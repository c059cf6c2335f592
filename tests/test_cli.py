import subprocess
import sys

from trajopt.edge.cli import main


def test_help_lists_commands(capsys):
    assert main([]) == 2
    out = capsys.readouterr().out
    assert "run" in out and "bench" in out


def test_unknown_problem_is_one_line_exit_2(capsys):
    assert main(["run", "no-such-problem"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no-such-problem" in err[0]


def test_unknown_command_is_one_line_exit_2():
    completed = subprocess.run([sys.executable, "-m", "trajopt.edge.cli", "frobnicate"], capture_output=True, text=True)
    assert completed.returncode == 2
    assert len(completed.stderr.strip().splitlines()) == 1


def test_bad_motion_file_is_one_line_exit_2(tmp_path):
    motion = tmp_path / "broken.mot"
    motion.write_text("version=1\nnRows=1\nnColumns=3\ninDegrees=yes\ntime\tr_shoulder_elev\tr_elbow_flex\n0\t0\t0\n")
    completed = subprocess.run(
        [sys.executable, "-m", "trajopt.edge.cli", "run", "arm26-static-optimization", "--motion", str(motion),
         "--out", str(tmp_path / "out"), "--no-opensim"],
        capture_output=True, text=True,
    )
    assert completed.returncode == 2
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and "broken.mot" in lines[0] and "endheader" in lines[0]
