"""Inverse dynamics of motion files (trajopt.studies.analysis.inverse_dynamics) against OpenSim 4.6's
InverseDynamicsTool results stored in tests/data/arm26 (no OpenSim needed), a physical identity
for the joint reactions, file output and bad input."""


import numpy as np
import pytest

from conftest import DATA
from trajopt.studies.analysis.inverse_dynamics import motion_inverse_dynamics
from trajopt.errors import MotionFileError
from trajopt.model.io import MotionProcessor, Table, read_motion, read_table
from trajopt.core.multibody import ReactionAxes

ELBOW = DATA / "arm26" / "elbow_flex_0_90_minjerk.mot"
IK = DATA / "arm26" / "arm26_InverseKinematics.mot"


@pytest.mark.parametrize("motion, stored, cutoff", [
    (ELBOW, "ID_joint_torques.csv", None),
    (IK, "arm26_ID_nofilter.sto", None),
    (IK, "arm26_ID_filter6Hz.sto", 6.0),
])
def test_generalized_forces_equal_opensim_inverse_dynamics_tool(arm26, motion, stored, cutoff):
    reference = read_table(DATA / "arm26" / stored)
    # OpenSim's filtered run reported frames into the padded range, up to 1.5 s
    result = motion_inverse_dynamics(arm26, MotionProcessor(motion, cutoff, window=(reference.time[0],
                                                                                     reference.time[-1])))
    np.testing.assert_allclose(result.times, reference.time, rtol=0, atol=1e-8)  # printed with 8 decimals
    error = np.abs(result.generalized_forces - reference.select(result.generalized_force_labels).data).max()
    # .sto files print 8 decimals, the CSV ~10 significant digits
    assert error <= 1e-8, f"{stored}: max |tau - OpenSim| = {error:.3e} N·m"


def test_reaction_moment_about_the_joint_axis_is_the_generalized_force(arm26):
    result = motion_inverse_dynamics(arm26, IK, expressed_in=ReactionAxes.CHILD)
    joints = {joint.name: joint for joint in arm26.spec.joints}
    for name, coordinate in (("r_shoulder", "r_shoulder_elev"), ("r_elbow", "r_elbow_flex")):
        k = result.joint_names.index(name)
        j = result.speed_names.index(coordinate)
        # arm26's CustomJoints rotate about one axis (the same in parent and child joint frames)
        axis = np.array(joints[name].spatial_transform[0].axis)
        about_axis = result.reaction_moments[:, k, :] @ (axis / np.linalg.norm(axis))
        np.testing.assert_allclose(about_axis, result.generalized_forces[:, j], rtol=1e-10, atol=1e-10)


def test_written_tables_read_back(arm26, tmp_path):
    result = motion_inverse_dynamics(arm26, ELBOW)
    written = result.write(tmp_path, "elbow")
    assert {p.name for p in written} >= {"elbow_generalized_forces.sto", "elbow_joint_reactions.sto"}
    table = read_table(tmp_path / "elbow_generalized_forces.sto")
    np.testing.assert_array_equal(table.data, result.generalized_forces)
    reactions = read_table(tmp_path / "elbow_joint_reactions.sto")
    np.testing.assert_array_equal(reactions.column("r_elbow_on_r_ulna_radius_hand_in_ground_fy"),
                                  result.reaction_forces[:, result.joint_names.index("r_elbow"), 1])


def test_missing_columns_are_named(arm26):
    motion = read_motion(ELBOW, rotational=("r_shoulder_elev", "r_elbow_flex"))
    shoulder_only = Table(motion.time, ("r_shoulder_elev", "hip_flexion"), motion.data, source="shoulder.mot")
    with pytest.raises(MotionFileError, match=r"shoulder.mot.*missing coordinate columns \['r_elbow_flex'\]"):
        motion_inverse_dynamics(arm26, shoulder_only)


def test_nan_in_motion_is_reported_with_column_and_time(arm26):
    motion = read_motion(ELBOW, rotational=("r_shoulder_elev", "r_elbow_flex"))
    data = motion.data.copy()
    data[17, 1] = np.nan
    bad = Table(motion.time, motion.labels, data, source="bad.mot")
    with pytest.raises(MotionFileError, match=r"bad.mot: column 'r_elbow_flex' is nan at row 17 \(time 0.17\)"):
        motion_inverse_dynamics(arm26, bad)
