"""Tables and motions: .mot/.sto/CSV round trips, OpenSim reads what we write, the arm26 files, bad files."""

import math

import numpy as np
import pytest

from trajopt.errors import MotionFileError
from trajopt.model.io import Table, coordinate_name, read_motion, read_table, write_csv, write_sto
from conftest import DATA, ROOT

IK_MOTION = DATA / "arm26" / "arm26_InverseKinematics.mot"
ELBOW_MOTION = DATA / "arm26" / "elbow_flex_0_90_minjerk.mot"
ARM26_ROTATIONAL = ("r_shoulder_elev", "r_elbow_flex")


def _random_table(in_degrees=False):
    generator = np.random.default_rng(7)
    time = np.cumsum(generator.uniform(0.001, 0.02, 40))
    data = generator.normal(size=(40, 3)) * np.array([1e-7, 1.0, 1e5])
    return Table(time, ("hip_flexion_r", "knee_angle_r", "pelvis_tx"), data, in_degrees, name="random")


@pytest.mark.parametrize("suffix", [".sto", ".mot"])
def test_storage_round_trip_is_exact(tmp_path, suffix):
    table = _random_table(in_degrees=True)
    again = read_table(write_sto(tmp_path / f"random{suffix}", table))
    assert again.labels == table.labels
    assert again.in_degrees is True
    assert again.name == "random"
    np.testing.assert_array_equal(again.time, table.time)
    np.testing.assert_array_equal(again.data, table.data)


def test_csv_round_trip_is_exact(tmp_path):
    table = _random_table()
    again = read_table(write_csv(tmp_path / "random.csv", table))
    assert again.labels == table.labels
    np.testing.assert_array_equal(again.time, table.time)
    np.testing.assert_array_equal(again.data, table.data)


def test_opensim_reads_our_sto(tmp_path, opensim_task):
    table = _random_table(in_degrees=True)
    path = write_sto(tmp_path / "random.sto", table)
    result = opensim_task("read_table", {"path": path})
    assert tuple(result["storage_labels"]) == table.labels
    assert tuple(result["table_labels"]) == table.labels
    assert result["storage_in_degrees"] is True
    assert result["table_in_degrees"] == "yes"
    np.testing.assert_array_equal(result["storage_time"], table.time)
    np.testing.assert_array_equal(result["storage_data"], table.data)
    np.testing.assert_array_equal(result["table_time"], table.time)
    np.testing.assert_array_equal(result["table_data"], table.data)


def test_arm26_ik_motion_simm_header_is_degrees():
    table = read_table(IK_MOTION)
    assert table.in_degrees  # SIMM header (no version), .mot: OpenSim reads degrees
    assert table.num_frames == 121 and len(table.labels) == 11
    assert table.labels[:3] == ("r_shoulder_elev", "r_elbow_flex", "r_acromion_tx")
    assert table.time[-1] == 1.0
    assert table.column("r_elbow_flex")[0] == 0.89932091
    motion = read_motion(IK_MOTION, rotational=ARM26_ROTATIONAL)
    assert not motion.in_degrees and motion.metadata["inDegrees"] == "no"
    np.testing.assert_allclose(motion.column("r_elbow_flex"), table.column("r_elbow_flex") * math.pi / 180, rtol=1e-15)
    np.testing.assert_allclose(motion.column("r_shoulder_elev"), table.column("r_shoulder_elev") * math.pi / 180,
                               rtol=1e-15)
    # translational (marker-position) columns are not scaled
    np.testing.assert_array_equal(motion.column("r_acromion_tx"), table.column("r_acromion_tx"))


def test_arm26_ik_motion_equals_opensim_storage(opensim_task):
    result = opensim_task("read_table", {"path": IK_MOTION})
    table = read_table(IK_MOTION)
    assert result["storage_in_degrees"] is True
    assert tuple(result["storage_labels"]) == table.labels
    np.testing.assert_array_equal(result["storage_time"], table.time)
    np.testing.assert_array_equal(result["storage_data"], table.data)


def test_elbow_minimum_jerk_motion_reads_as_degrees():
    table = read_table(ELBOW_MOTION)
    assert table.in_degrees and table.metadata["version"] == "1" and table.num_frames == 101
    motion = read_motion(ELBOW_MOTION, rotational=ARM26_ROTATIONAL, coordinates=["r_elbow_flex"])
    assert motion.labels == ("r_elbow_flex",)
    s = motion.time / motion.time[-1]
    minimum_jerk = math.pi / 2 * (10 * s**3 - 15 * s**4 + 6 * s**5)  # 0 -> 90 deg in 1 s
    np.testing.assert_allclose(motion.column("r_elbow_flex"), minimum_jerk, rtol=0, atol=1e-11)
    assert motion.column("r_elbow_flex")[-1] == pytest.approx(math.pi / 2, abs=1e-15)


def _write(path, text):
    path.write_text(text)
    return path


def test_full_path_labels_map_to_coordinates(tmp_path):
    path = _write(
        tmp_path / "states.sto",
        "states\nversion=1\nnRows=2\nnColumns=4\ninDegrees=yes\nendheader\n"
        "time\t/jointset/hip_r/hip_flexion_r/value\t/jointset/hip_r/hip_flexion_r/speed\t/jointset/ground_pelvis/pelvis_tx/value\n"
        "0.0\t90\t180\t0.5\n0.1\t45\t-90\t0.7\n",
    )
    motion = read_motion(path, rotational=["hip_flexion_r"])
    assert motion.labels == ("hip_flexion_r", "/jointset/hip_r/hip_flexion_r/speed", "pelvis_tx")
    np.testing.assert_allclose(motion.data, [[math.pi / 2, math.pi, 0.5], [math.pi / 4, -math.pi / 2, 0.7]], rtol=1e-15)
    assert coordinate_name("/jointset/hip_r/hip_flexion_r/speed") == "hip_flexion_r"
    assert coordinate_name("knee_angle_r") == "knee_angle_r"


def test_unit_conventions_of_headers(tmp_path):
    body = "endheader\ntime\tq\n0\t10\n1\t20\n"
    assert not read_table(_write(tmp_path / "a.sto", "a\nnRows=2\nnColumns=2\n" + body)).in_degrees  # old .sto
    assert not read_table(_write(tmp_path / "b.mot", "b\nversion=1\nnRows=2\nnColumns=2\n" + body)).in_degrees
    assert read_table(_write(tmp_path / "c.sto", "c\nversion=1\ninDegrees=Y\n" + body)).in_degrees
    assert not read_table(_write(tmp_path / "d.mot", "d\ninDegrees=no\n" + body)).in_degrees  # explicit key wins
    motion = read_motion(tmp_path / "a.sto", rotational=["q"])
    np.testing.assert_array_equal(motion.column("q"), [10.0, 20.0])  # radians already: untouched


_GOOD_HEADER = "bad\nversion=1\nnRows=3\nnColumns=3\ninDegrees=no\n"


@pytest.mark.parametrize(
    "name, text, expected",
    [
        ("no_end.sto", "bad\nversion=1\ntime\tq\tr\n0\t1\t2\n", ["line 4", "no 'endheader'"]),
        ("columns.sto", _GOOD_HEADER + "endheader\ntime\tq\tr\n0\t1\t2\n0.1\t1\n0.2\t1\t2\n",
         ["line 9", "2 values but 3 columns"]),
        ("nan.sto", _GOOD_HEADER + "endheader\ntime\tq\tr\n0\t1\t2\n0.1\tnan\t2\n0.2\t1\t2\n",
         ["line 9", "column 'q' is nan"]),
        ("time.sto", _GOOD_HEADER + "endheader\ntime\tq\tr\n0\t1\t2\n0.2\t1\t2\n0.1\t1\t2\n",
         ["line 10", "time 0.1 does not increase", "line 9"]),
        ("empty.sto", _GOOD_HEADER + "endheader\ntime\tq\tr\n", ["line 7", "no data rows"]),
        ("text.sto", _GOOD_HEADER + "endheader\ntime\tq\tr\n0\t1\t2\n0.1\tabc\t2\n0.2\t1\t2\n",
         ["line 9", "'abc' is not a number"]),
        ("labels.sto", "bad\nversion=1\nnColumns=4\nendheader\ntime\tq\tr\n0\t1\t2\n",
         ["line 5", "header says 4 columns but 3 labels"]),
        ("rows.sto", _GOOD_HEADER + "endheader\ntime\tq\tr\n0\t1\t2\n", ["header says 3 rows but 1 data rows"]),
        ("notime.sto", _GOOD_HEADER + "endheader\nq\tr\ts\n0\t1\t2\n", ["line 7", "first column must be 'time'"]),
        ("columns.csv", "time,q\n0,1\n1,2,3\n", ["line 3", "3 values but 2 columns"]),
    ],
)
def test_bad_files_name_file_line_and_problem(tmp_path, name, text, expected):
    path = _write(tmp_path / name, text)
    with pytest.raises(MotionFileError) as error:
        read_table(path)
    message = str(error.value)
    assert str(path) in message
    for fragment in expected:
        assert fragment in message


def test_unknown_column_requested(tmp_path):
    with pytest.raises(MotionFileError, match=r"arm26_InverseKinematics\.mot: no column 'r_wrist_flex'"):
        read_motion(IK_MOTION, rotational=ARM26_ROTATIONAL, coordinates=["r_elbow_flex", "r_wrist_flex"])
    with pytest.raises(MotionFileError, match="no column 'hip'"):
        read_table(IK_MOTION).column("hip")


def test_missing_file(tmp_path):
    with pytest.raises(MotionFileError, match="missing.mot: cannot read file"):
        read_table(tmp_path / "missing.mot")


def test_version3_header_column_count_is_informational():
    """Moco's example3DWalking coordinates.sto says nColumns=40 for 32 labels; OpenSim 4.6 reads it (31 + time)."""
    table = read_table(ROOT / "trajopt" / "examples" / "walk3d" / "coordinates.sto")
    assert len(table.labels) == 31 and table.num_frames == 1350
