"""Bad input to the command-line tools gives one line naming the file, column and value and a non-zero exit (or a
stated caveat), never a silent wrong number or a traceback. Every case runs through ``trajopt.edge.cli.main``."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from trajopt.studies.analysis.muscle_inverse import mesh_intervals
from trajopt.edge.cli import main
from trajopt.model.io import read_table, write_sto
from trajopt.table import Table
from terminal import sigint_as_in_a_terminal

ROOT = Path(__file__).resolve().parents[1]
ARM26 = ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim"
ARM26_PATHS = ROOT / "trajopt" / "examples" / "arm26" / "paths.json"
ELBOW_DEGREES = ROOT / "trajopt" / "examples" / "arm26_static_optimization" / "elbow_flex_0_90_minjerk.mot"


def write_motion(path: Path, time, columns: dict, header=("version=1", "inDegrees=yes")) -> Path:
    """A .mot/.sto file with ``header`` lines, a time column and ``columns`` (label -> values)."""
    rows = np.column_stack([time] + [np.broadcast_to(v, np.shape(time)) for v in columns.values()])
    lines = [path.stem, *header, f"nRows={len(rows)}", f"nColumns={rows.shape[1]}", "endheader",
             "\t".join(["time", *columns])]
    lines += ["\t".join(f"{v:.10g}" for v in row) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def minimum_jerk(time, final):
    s = (time - time[0]) / (time[-1] - time[0])
    return final * (10 * s**3 - 15 * s**4 + 6 * s**5)


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# --- 1. angles in the wrong unit ---------------------------------------------------------------------------------

MOTION_TOOLS = [
    ("inverse-dynamics", "{out}"),
    ("static-optimization", "{out}"),
    ("muscle-analysis", "{out}"),
    ("muscle-inverse", "{out}"),
]


@pytest.mark.parametrize("command,out", MOTION_TOOLS)
def test_degrees_labelled_radians_refused_by_every_motion_tool(tmp_path, capsys, command, out):
    motion = tmp_path / "elbow.mot"
    motion.write_text(ELBOW_DEGREES.read_text().replace("inDegrees=yes", "inDegrees=no"))
    code, _, err = run(capsys, command, ARM26, motion, "--out", out.format(out=tmp_path / "out"))
    line = one_error_line(err)
    assert code == 2
    # the elbow ends at 90 (degrees) read as 90 rad at t = 1 s
    assert "'r_elbow_flex' is 90 rad at time 1 s" in line
    assert str(motion) in line and "looks like degrees: header says inDegrees=no" in line


def test_degrees_labelled_radians_refused_by_the_arm26_problem(tmp_path, capsys):
    motion = tmp_path / "elbow.mot"
    motion.write_text(ELBOW_DEGREES.read_text().replace("inDegrees=yes", "inDegrees=no"))
    code, _, err = run(capsys, "run", "arm26-static-optimization", "--motion", motion, "--out", tmp_path / "out")
    assert code == 2 and "'r_elbow_flex' is 90 rad at time 1 s" in one_error_line(err)


def test_degrees_labelled_radians_refused_by_muscle_track(tmp_path, capsys):
    """gait2d's reference coordinates with the angles written in degrees under inDegrees=no: the pelvis tilt's
    largest |value| (-0.2639 rad, 15.1 deg) read as radians is beyond a turn; refused before any path is built."""
    gait2d = ROOT / "trajopt" / "examples" / "gait2d"
    table = read_table(gait2d / "referenceCoordinates.sto")
    translations = ("pelvis_tx", "pelvis_ty")
    angular = [not any(f"/{name}/" in label for name in translations) for label in table.labels]
    degrees = np.where(angular, np.degrees(table.data), table.data)
    motion = write_sto(tmp_path / "coordinates.sto", Table(table.time, table.labels, degrees))
    code, _, err = run(capsys, "muscle-track", gait2d / "2D_gait.osim", motion, "--paths", gait2d / "paths.json",
                       "--out", tmp_path / "out")
    line = one_error_line(err)
    assert code == 2
    tilt = np.degrees(table.column("/jointset/groundPelvis/pelvis_tilt/value"))
    i = int(np.argmax(np.abs(tilt)))
    assert f"'pelvis_tilt' is {tilt[i]:.6g} rad at time {table.time[i]:g} s" in line
    assert str(motion) in line and "header says inDegrees=no" in line
    assert not (tmp_path / "out").exists()


def test_degrees_without_indegrees_line_refused_by_fit_paths(tmp_path, capsys):
    t = np.linspace(0.0, 1.0, 101)
    motion = write_motion(tmp_path / "elbow.sto", t, {"r_shoulder_elev": 0.0, "r_elbow_flex": minimum_jerk(t, 90.0)},
                          header=("version=1",))
    code, _, err = run(capsys, "fit-paths", ARM26, "--geometric", "--motion", motion, "--out", tmp_path / "p")
    line = one_error_line(err)
    assert code == 2
    assert "'r_elbow_flex' is 90 rad at time 1 s" in line and "no inDegrees line" in line


def test_small_degrees_refused_by_their_speed(tmp_path, capsys):
    """6 deg in 0.1 s stays below a turn read as radians, but moves at up to 1.875 * 6 / 0.1 = 112.5 rad/s."""
    t = np.linspace(0.0, 0.1, 11)
    motion = write_motion(tmp_path / "flick.mot", t, {"r_shoulder_elev": 0.0, "r_elbow_flex": minimum_jerk(t, 6.0)},
                          header=("version=1", "inDegrees=no"))
    code, _, err = run(capsys, "inverse-dynamics", ARM26, motion, "--out", tmp_path / "id")
    line = one_error_line(err)
    assert code == 2
    speed = float(line.split("moves at ")[1].split(" rad/s")[0])
    assert speed == pytest.approx(np.max(np.diff(minimum_jerk(t, 6.0)) / 0.01), rel=1e-3)
    when = float(line.split("into time ")[1].split(" s,")[0])
    value = float(line.split(" s, value ")[1].split(" rad")[0])
    assert value == pytest.approx(float(np.interp(when, t, minimum_jerk(t, 6.0))), rel=1e-5)
    assert "'r_elbow_flex'" in line and "inDegrees=no" in line


def test_small_slow_degrees_outside_the_model_range_are_a_warning(tmp_path, capsys):
    """5 deg in 2 s read as radians: below a turn and at most 1.875 * 5 / 2 = 4.7 rad/s, but 5 rad is 2.73 rad past
    the elbow's range [0, 2.27] rad."""
    t = np.linspace(0.0, 2.0, 21)
    motion = write_motion(tmp_path / "slow.mot", t, {"r_shoulder_elev": 0.0, "r_elbow_flex": minimum_jerk(t, 5.0)},
                          header=("version=1", "inDegrees=no"))
    code, out, _ = run(capsys, "inverse-dynamics", ARM26, motion, "--out", tmp_path / "id")
    assert code == 0
    assert ("warning: " + str(motion) + ": column 'r_elbow_flex' is 5 rad at time 2 s, 2.73 rad outside its model "
            "range [0, 2.27] rad (header says inDegrees=no; degrees would need inDegrees=yes)") in out


def test_radians_labelled_degrees_is_a_warning_with_the_unit_read(tmp_path, capsys):
    t = np.linspace(0.0, 1.0, 11)
    motion = write_motion(tmp_path / "elbow.mot", t,
                          {"r_shoulder_elev": 0.0, "r_elbow_flex": minimum_jerk(t, np.pi / 2)})
    code, out, _ = run(capsys, "inverse-dynamics", ARM26, motion, "--out", tmp_path / "id")
    assert code == 0
    # pi/2 read as degrees: 0.0274 rad at most, against arm26's shoulder range of 4.71 rad
    assert "warning: " in out and "within ±0.0274 rad" in out and "span up to 4.71 rad" in out
    assert "angles read in degrees (header says inDegrees=yes)" in out


# --- 2. ground reactions that do not cover the motion ------------------------------------------------------------

GAIT2D = ROOT / "trajopt" / "examples" / "gait2d"


def short_loads(tmp_path: Path, rows: int = 10) -> tuple[Path, float]:
    """gait2d's ExternalLoads with only the first ``rows`` samples of its data (0..0.0863 s for 10)."""
    lines = (GAIT2D / "referenceGRF.sto").read_text().splitlines()
    end = next(i for i, line in enumerate(lines) if line.strip() == "endheader")
    header = [f"nRows={rows}" if line.startswith("nRows") else line for line in lines[:end + 2]]
    data = lines[end + 2:end + 2 + rows]
    (tmp_path / "short_grf.sto").write_text("\n".join(header + data) + "\n")
    xml = tmp_path / "short_grf.xml"
    xml.write_text((GAIT2D / "referenceGRF.xml").read_text().replace("referenceGRF.sto", "short_grf.sto"))
    return xml, float(data[-1].split()[0])


@pytest.mark.parametrize("command,out", [("inverse-dynamics", "{out}"), ("muscle-inverse", "{out}")])
def test_loads_shorter_than_the_motion_refused(tmp_path, capsys, command, out):
    xml, last = short_loads(tmp_path)
    code, _, err = run(capsys, command, GAIT2D / "2D_gait.osim", GAIT2D / "referenceCoordinates.sto",
                       "--external-loads", xml, "--out", out.format(out=tmp_path / "out"))
    line = one_error_line(err)
    assert code == 2
    assert last == pytest.approx(0.0863, abs=1e-4)
    assert f"data for t = 0..{last:g} s but the motion needs t = 0..0.470089 s" in line
    assert str(xml) in line and "short_grf.sto" in line and "ExternalForce 'Right_GRF'" in line


# --- 3. NaN in a motion ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [np.nan, np.inf])
@pytest.mark.parametrize("command", [("fit-paths", ARM26, "--geometric", "--motion", "{motion}", "--out", "{out}"),
                                     ("muscle-analysis", ARM26, "{motion}", "--out", "{out}")])
def test_non_finite_motion_value_refused(tmp_path, capsys, command, value):
    t = np.linspace(0.0, 1.0, 11)
    elbow = minimum_jerk(t, 90.0)
    elbow[5] = value
    motion = write_motion(tmp_path / "elbow.mot", t, {"r_shoulder_elev": 0.0, "r_elbow_flex": elbow})
    argv = [str(a).format(motion=motion, out=tmp_path / "out") for a in command]
    code, out, err = run(capsys, *argv)
    line = one_error_line(err)
    assert code == 2
    assert f"column 'r_elbow_flex' is {value} at time 0.5 s" in line and str(motion) in line
    assert not (tmp_path / "out" / "paths.json").exists()


# --- 4. a mesh coarser than the motion ---------------------------------------------------------------------------

@pytest.mark.parametrize("interval,count", [(10.0, 1), (0.4, 3)])
def test_mesh_interval_coarser_than_the_window_refused(tmp_path, capsys, interval, count):
    code, _, err = run(capsys, "muscle-inverse", ARM26, ELBOW_DEGREES, "--paths", ARM26_PATHS,
                       "--mesh-interval", interval, "--out", tmp_path / "out")
    line = one_error_line(err)
    assert code == 2
    # the elbow motion spans 1 s: ceil(1 / interval) intervals
    assert f"mesh interval {interval:g} s over the 1 s window gives {count} mesh interval(s), fewer than 4" in line
    assert "at most 0.25 s" in line and not (tmp_path / "out").exists()


def test_motion_outside_the_fitted_paths_domain_refused_by_muscle_inverse(tmp_path, capsys):
    """arm26's paths were fitted for shoulder elevation up to 25 deg (0.436 rad); the minimum-jerk motion lifts it to
    60 deg: 55 of its 101 frames lie above, the first at t = 0.46 s. Refused before any work, not extrapolated."""
    motion = ARM26.parent.parent / "arm26_static_optimization" / "shoulder60_elbow90_minjerk.mot"
    code, _, err = run(capsys, "muscle-inverse", ARM26, motion, "--paths", ARM26_PATHS, "--out", tmp_path / "out")
    line = one_error_line(err)
    assert code == 2 and "55 of 101 frames" in line and "t = 0.46 s" in line
    assert not (tmp_path / "out").exists()


def test_four_mesh_intervals_accepted():
    assert mesh_intervals(1.0, 0.25) == 4 and mesh_intervals(1.0, 0.3) == 4


# --- 5. tracebacks in fit-paths -----------------------------------------------------------------------------------

NO_MUSCLES = ROOT / "tests" / "data" / "osim" / "all_joints.osim"


@pytest.mark.parametrize("sampler", [(), ("--geometric",)])
def test_fit_paths_on_a_model_without_muscles(tmp_path, capsys, sampler):
    code, _, err = run(capsys, "fit-paths", NO_MUSCLES, *sampler, "--out", tmp_path / "p")
    line = one_error_line(err)
    assert code == 2 and "all_joints.osim: the model has no muscles" in line


@pytest.mark.parametrize("option,value,least", [("--samples", 0, 1), ("--samples-per-frame", 0, 1),
                                                ("--heldout", -1, 0), ("--max-degree", 0, 1)])
def test_fit_paths_counts_below_their_least(tmp_path, capsys, option, value, least):
    code, _, err = run(capsys, "fit-paths", ARM26, "--geometric", option, value, "--out", tmp_path / "p")
    assert code == 2 and one_error_line(err).endswith(f"{option} {value}: must be at least {least}")


def test_fit_paths_unwritable_out_refused_before_sampling(tmp_path, capsys):
    (tmp_path / "a_file").write_text("")
    out = tmp_path / "a_file" / "p"
    code, stdout, err = run(capsys, "fit-paths", ARM26, "--geometric", "--out", out)
    line = one_error_line(err)
    assert code == 2 and f"cannot create its folder {out}" in line
    assert "sampling" not in stdout  # nothing was sampled or fitted
    code, _, err = run(capsys, "fit-paths", ARM26, "--geometric", "--out", tmp_path / "a_file")
    assert code == 2 and f"--out {tmp_path / 'a_file'}: is a file" in one_error_line(err)


# --- 6. Ctrl-C during a solve -------------------------------------------------------------------------------------

FIRST_ITERATION = re.compile(r"^\s*1\s+[-+0-9.]+e[-+]\d\d\s+([0-9.]+e[-+]\d\d)")


def interrupt_at_first_iteration(argv, cwd) -> tuple[int, str, float]:
    """Run ``python -m trajopt argv``, send SIGINT when IPOPT prints iteration 1; (exit code, output after the
    signal, inf_pr printed on iteration 1)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen([sys.executable, "-u", "-m", "trajopt", *map(str, argv)], cwd=cwd, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               preexec_fn=sigint_as_in_a_terminal)
    violation = None
    for line in process.stdout:
        match = FIRST_ITERATION.match(line)
        if match:
            violation = float(match.group(1))
            process.send_signal(signal.SIGINT)
            break
    rest, _ = process.communicate(timeout=60)
    assert violation is not None, rest
    return process.returncode, rest, violation


def interrupted_line(output: str) -> str:
    lines = [line for line in output.splitlines() if ": interrupted" in line]
    assert len(lines) == 1 and "Traceback" not in output, output
    return lines[0]


def test_ctrl_c_stops_muscle_inverse_with_status_and_exit_130(tmp_path):
    out = tmp_path / "out"
    code, output, violation = interrupt_at_first_iteration(
        ["muscle-inverse", ARM26, ELBOW_DEGREES, "--paths", ARM26_PATHS, "--mesh-interval", "0.01",
         "--elastic-tendons", "--out", out], tmp_path)
    line = interrupted_line(output)
    assert code == 130
    assert line.startswith("trajopt muscle-inverse: interrupted: IPOPT stopped (")
    iteration = int(line.split("at iteration ")[1].split(";")[0])
    assert iteration >= 1  # the signal came after iteration 1 was printed
    if iteration == 1:  # IPOPT's own primal infeasibility at the iteration it stopped
        assert f"worst constraint violation {violation:.3g}" in line
    assert not out.exists() or not any(out.iterdir())  # no solution, summary or figure


def test_ctrl_c_stops_gait2d_prediction_before_figures(tmp_path):
    out = tmp_path / "gait2d"
    code, output, _ = interrupt_at_first_iteration(["run", "gait2d-prediction", "--intervals", "10", "--out", out],
                                                   tmp_path)
    assert code == 130
    assert interrupted_line(output).startswith("trajopt run gait2d-prediction: interrupted: IPOPT stopped (")
    assert not list(out.rglob("*.png")) and not list(out.rglob("*.gif")) and not list(out.rglob("*.sto"))


# --- 7. misleading summaries ----------------------------------------------------------------------------------------

@pytest.mark.slow
def test_arm26_main_job_without_opensim_says_so_and_counts_the_motions_frames(tmp_path, capsys, monkeypatch):
    """Without OpenSim the title names the stored references; the 6 Hz inverse-dynamics row compares the
    motion's 121 frames (0..1 s), not OpenSim's 181 that run on into its filter padding to 1.5 s."""
    import trajopt.examples.arm26_static_optimization.main as job

    monkeypatch.setattr(job, "opensim_available", lambda: False)
    code, _, _ = run(capsys, "run", "arm26-static-optimization", "--out", tmp_path / "a26")
    summary = (tmp_path / "a26" / "summary.md").read_text()
    assert code == 0
    assert summary.splitlines()[0] == ("# arm26 static optimization vs OpenSim's stored reference outputs "
                                       "(OpenSim not installed)")
    assert "| arm26_InverseKinematics.mot (6 Hz filter) | 121 |" in summary
    assert "continues 60 frames past the motion's end (1 s) to 1.5 s" in summary


def test_static_optimization_reports_pelvis_residuals_apart_from_muscles(tmp_path, capsys):
    """gait2d's reference motion with its ground reactions (first 11 frames): the pelvis residuals are large (the
    motion and the loads disagree), which is not the muscles' shortfall."""
    table = read_table(GAIT2D / "referenceCoordinates.sto")
    rows = slice(0, 11)
    motion = write_sto(tmp_path / "gait.sto", Table(table.time[rows], table.labels, table.data[rows],
                                                    table.in_degrees, table.name, table.metadata))
    code, _, err = run(capsys, "static-optimization", GAIT2D / "2D_gait.osim", motion, "--external-loads",
                       GAIT2D / "referenceGRF.xml", "--paths", GAIT2D / "paths.json", "--no-figures",
                       "--out", tmp_path / "so")
    summary = (tmp_path / "so" / "summary.md").read_text()
    assert code == 0
    residual = next(line for line in summary.splitlines() if "residual loads on the ground joint's" in line)
    assert "at 11 of 11 frames" in residual and "reserve_pelvis_tilt up to" in residual
    shortfall = [line for line in summary.splitlines() if "muscles cannot produce" in line]
    assert all("pelvis" not in line and "lumbar" not in line for line in shortfall)
    reserves = read_table(tmp_path / "so" / "reserves.sto")
    tilt = np.abs(reserves.column("reserve_pelvis_tilt")).max()
    assert f"| reserve_pelvis_tilt | the ground joint's coordinates | {tilt:.4g} |" in summary
    assert "| reserve_lumbar | coordinates no muscle crosses |" in summary
    assert "| reserve_knee_angle_r | coordinates muscles cross |" in summary


# --- 8. which force-per-activation convention static optimization used ------------------------------------------------

def test_static_optimization_help_names_opensims_convention(capsys):
    with pytest.raises(SystemExit) as exit_code:
        main(["static-optimization", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert exit_code.value.code == 0
    assert "by default the tendon force (the active fiber force × cos(pennation))" in text
    assert "--capacity-along-fiber uses OpenSim's convention" in text


def test_static_optimization_summary_names_opensims_convention_when_used(tmp_path, capsys):
    """(The default convention's line: test_static_optimization_summary_unit_convention_phases_and_wall_time.)"""
    t = np.linspace(0.0, 1.0, 6)
    motion = write_motion(tmp_path / "elbow.mot", t, {"r_shoulder_elev": 0.0, "r_elbow_flex": minimum_jerk(t, 90.0)})
    code, _, _ = run(capsys, "static-optimization", ARM26, motion, "--paths", ARM26_PATHS, "--capacity-along-fiber",
                     "--no-figures", "--out", tmp_path / "so")
    summary = (tmp_path / "so" / "summary.md").read_text()
    assert code == 0
    assert "force per activation: the active fiber force along the fiber, no cos(pennation) (OpenSim's " \
           "StaticOptimization convention for DeGroote muscles, --capacity-along-fiber)" in summary



# --- 9. progress lines, the whole run's wall time, --no-figures ------------------------------------------------

SO_PHASES = ("read model and motion", "build muscle paths", "inverse dynamics", "muscle loads and IPOPT",
             "joint reactions", "write files")


def test_static_optimization_summary_unit_convention_phases_and_wall_time(tmp_path, capsys):
    """Radians labelled as degrees (a warning in the output and summary.md), the default convention stated, every
    phase announced in order, the whole run's wall time with its phases, no figures with --no-figures."""
    t = np.linspace(0.0, 1.0, 6)
    motion = write_motion(tmp_path / "elbow.mot", t,
                          {"r_shoulder_elev": 0.0, "r_elbow_flex": minimum_jerk(t, np.pi / 2)})
    code, out, err = run(capsys, "static-optimization", ARM26, motion, "--paths", ARM26_PATHS, "--no-figures",
                         "--out", tmp_path / "so")
    summary = (tmp_path / "so" / "summary.md").read_text()
    assert code == 0
    assert "angles read in degrees (header says inDegrees=yes)" in summary
    assert "within ±0.0274 rad" in summary and "warning: " in err and "within ±0.0274 rad" in err
    assert "force per activation: the tendon force, the fiber's × cos(pennation) (trajopt's default" in summary
    assert "--capacity-along-fiber reproduces OpenSim's convention" in summary
    announced = [line.split("] ")[1].split(":")[0].removesuffix(" ...") for line in out.splitlines()
                 if line.startswith("trajopt static-optimization [")]
    assert tuple(announced) == SO_PHASES
    total = float(summary.split("Wall time: ")[1].split(" s for the whole run")[0])
    phases = summary.split(" s for the whole run (")[1].split(").")[0]
    seconds = [float(part.rsplit(" ", 2)[1]) for part in phases.split(", ")]
    assert [part.rsplit(" ", 2)[0] for part in phases.split(", ")] == list(SO_PHASES)
    assert sum(seconds) <= total + 0.2 and total > 0
    assert not (tmp_path / "so" / "details" / "figures").exists()
    assert "equality error)." in summary  # the file list names no figures


def test_ctrl_c_in_static_optimization_is_one_line_and_exit_130(tmp_path):
    """SIGINT while the geometric paths are built (the longest silent phase before): no traceback, no summary."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = tmp_path / "so"
    process = subprocess.Popen([sys.executable, "-u", "-m", "trajopt", "static-optimization", str(ARM26),
                                str(ELBOW_DEGREES), "--out", str(out)], cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               preexec_fn=sigint_as_in_a_terminal)
    for line in process.stdout:
        if "build muscle paths" in line:
            process.send_signal(signal.SIGINT)
            break
    rest, _ = process.communicate(timeout=60)
    assert process.returncode == 130
    assert interrupted_line(rest).startswith("trajopt static-optimization: interrupted")
    assert not (out / "summary.md").exists()
