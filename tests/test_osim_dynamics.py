"""Dynamics of imported OpenSim models against OpenSim 4.6 (run in a child process).

- generalized forces (InverseDynamicsSolver), mass matrix, forward accelerations, body poses and
  markers at 50 random states of arm26 and 2D_gait, muscles and contacts off;
- inverse dynamics of arm26 along its IK motion at the states OpenSim's InverseDynamicsTool used
  (GCV splines of degree 5, with and without the 6 Hz filter), against the tool's stored results;
- joint reaction loads of arm26 along the elbow-flexion motion against OpenSim's reactions.
"""

import warnings

import numpy as np
import pytest

from conftest import DATA, ROOT
from trajopt.core.multibody import (
    ReactionAxes,
    body_poses,
    forward_dynamics,
    inverse_dynamics,
    joint_reaction_loads,
    mass_matrix,
    point_position,
)
from trajopt.model.osim import (
    OsimIgnoredWarning,
    from_opensim_state,
    load_osim,
    opensim_coordinate_names,
    to_opensim_generalized_forces,
)

ARM26 = ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim"
GAIT2D = ROOT / "trajopt" / "examples" / "gait2d" / "2D_gait.osim"
# Hand-written: slider, universal, custom (spline/polynomial/multiplier axes), pin, planar joints and nested frames.
ALL_JOINTS = DATA / "osim" / "all_joints.osim"
# Hand-written: a free joint from ground and a ball joint (OpenSim: X-Y-Z angles; trajopt: quaternions).
BALL_FREE = DATA / "osim" / "ball_free.osim"
STATES = 50

def _load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OsimIgnoredWarning)
        return load_osim(path)


def _read_table(path):
    """(column names, data) of an OpenSim .sto/.mot table (header up to 'endheader')."""
    lines = path.read_text().splitlines()
    end = next(k for k, line in enumerate(lines) if line.strip() == "endheader")
    return lines[end + 1].split(), np.array([[float(v) for v in line.split()]
                                             for line in lines[end + 2:] if line.strip()])


def _random_states(model, seed):
    rng = np.random.default_rng(seed)
    coordinates = model.spec.coordinates
    low = np.maximum([c.range[0] for c in coordinates], -np.pi)
    high = np.minimum([c.range[1] for c in coordinates], np.pi)
    n = len(coordinates)
    return (rng.uniform(low, high, (STATES, n)), rng.uniform(-5, 5, (STATES, n)),
            rng.uniform(-50, 50, (STATES, n)))


@pytest.mark.opensim
@pytest.mark.parametrize("path", [ARM26, GAIT2D, ALL_JOINTS, BALL_FREE],
                         ids=["arm26", "gait2d", "all_joints", "ball_free"])
def test_dynamics_equal_opensim_at_random_states(path, opensim_task):
    model = _load(path)
    multibody = model.multibody
    q_os, u_os, udot_os = _random_states(model, seed=3)
    reference = opensim_task("osim_inverse_dynamics", {"model": str(path), "q": q_os, "u": u_os, "udot": udot_os})
    assert tuple(reference["coordinate_names"]) == opensim_coordinate_names(model)
    q, u, udot = from_opensim_state(model, q_os, u_os, udot_os)

    tau = np.array([np.asarray(inverse_dynamics(multibody, q[k], u[k], udot[k])).ravel() for k in range(STATES)])
    tau_error = np.abs(to_opensim_generalized_forces(model, q, tau) - reference["tau"]).max()
    # Rounding only: measured 2.3e-16 to 5.8e-16 of the largest |tau| (arm26 1.2e-14 N·m of 25 N·m, 2D_gait
    # 9.1e-13 of 3900, all_joints 1.1e-13 of 480, ball_free 2.3e-13 of 392).
    scale = np.abs(reference["tau"]).max()
    assert tau_error <= 2e-15 * scale, f"max |tau - tau_OpenSim| = {tau_error:.3e} N·m (largest |tau| {scale:.3g})"

    # Mass matrix and free accelerations compared through generalized forces, so that ball/free
    # joints' speeds (expressed in M in trajopt, in F in OpenSim) need no separate conversion.
    for k in range(STATES):
        mass = np.asarray(mass_matrix(multibody, q[k]))
        reference_mass = reference["mass_matrix"][k]
        for j in range(len(u_os[k])):
            _, unit_speed, _ = from_opensim_state(model, q_os[k], np.eye(len(u_os[k]))[j])
            ours = to_opensim_generalized_forces(model, q[k], mass @ unit_speed)
            np.testing.assert_allclose(ours, reference_mass[:, j], rtol=0, atol=1e-12)
    free = np.array([np.asarray(forward_dynamics(multibody, q[k], u[k], np.zeros(multibody.nv))).ravel()
                     for k in range(STATES)])
    _, _, free_reference = from_opensim_state(model, q_os, u_os, reference["free_udot"])
    np.testing.assert_allclose(free, free_reference, rtol=1e-9, atol=1e-9)

    body_names = list(reference["body_names"])
    for k in range(STATES):
        rotations, positions = (np.asarray(x) for x in body_poses(multibody, q[k]))
        for name in (b.name for b in multibody.bodies):
            b, j = multibody.body_index(name), body_names.index(name)
            np.testing.assert_allclose(positions[:, b], reference["body_positions"][k, j], atol=1e-13)
            np.testing.assert_allclose(rotations[:, 3 * b:3 * b + 3], reference["body_rotations"][k, j], atol=1e-13)
        for m, name in enumerate(reference["marker_names"]):
            marker = model.marker(name)
            position = np.asarray(point_position(multibody, q[k], marker.body, marker.location)).ravel()
            np.testing.assert_allclose(position, reference["marker_positions"][k, m], atol=1e-13)


@pytest.mark.opensim
@pytest.mark.parametrize("stored, cutoff", [("arm26_ID_nofilter.sto", -1.0), ("arm26_ID_filter6Hz.sto", 6.0),
                                            ("ID_joint_torques.csv", -1.0)])
def test_arm26_inverse_dynamics_tool_results(stored, cutoff, opensim_task):
    """Method: the states (q, u, udot) are those of OpenSim's ID tool, reproduced in OpenSim
    (degrees -> radians, optional pad + 6 Hz IIR low-pass, GCVSplineSet degree 5 and its
    derivatives at the tool's output times); trajopt's ID at those states must equal the tool's
    stored generalized forces to their print precision (8 decimals in .sto, ~10 digits in .csv)."""
    model = _load(ARM26)
    if stored.endswith(".csv"):  # ID of the elbow-flexion motion (OpenSim 4.6 tool, no filter)
        motion = DATA / "arm26" / "elbow_flex_0_90_minjerk.mot"
        table = np.loadtxt(DATA / "arm26" / stored, delimiter=",", skiprows=1)
        names = open(DATA / "arm26" / stored).readline().strip().split(",")
    else:
        motion = DATA / "arm26" / "arm26_InverseKinematics.mot"
        names, table = _read_table(DATA / "arm26" / stored)
    states = opensim_task("osim_motion_states", {"model": str(ARM26), "motion": str(motion),
                                                 "times": table[:, 0], "lowpass_cutoff": cutoff})
    assert tuple(states["coordinate_names"]) == opensim_coordinate_names(model)
    stored_tau = table[:, [names.index(f"{c}_moment") for c in opensim_coordinate_names(model)]]
    q, u, udot = from_opensim_state(model, states["q"], states["u"], states["udot"])
    tau = np.array([np.asarray(inverse_dynamics(model.multibody, q[k], u[k], udot[k])).ravel()
                    for k in range(len(table))])
    tau = to_opensim_generalized_forces(model, q, tau)
    error = np.abs(tau - stored_tau).max()
    assert error <= 1e-8, f"{stored}: max |tau - stored| = {error:.3e} N·m over {len(table)} rows"


@pytest.mark.parametrize("stored, cutoff, motion_file", [
    ("arm26_ID_nofilter.sto", None, "arm26_InverseKinematics.mot"),
    ("arm26_ID_filter6Hz.sto", 6.0, "arm26_InverseKinematics.mot"),
    ("ID_joint_torques.csv", None, "elbow_flex_0_90_minjerk.mot"),
])
def test_arm26_inverse_dynamics_tool_results_without_opensim(stored, cutoff, motion_file):
    """Method: OpenSim's preprocessing reproduced by trajopt (trajopt.model.io.read_motion degrees ->
    radians, trajopt.model.io.signals.coordinate_splines: pad + 3rd-order Butterworth forward-backward,
    natural quintic interpolating splines), evaluated at the frames the tool reports; then
    trajopt's inverse dynamics. Must equal the tool's stored forces to their print precision."""
    from trajopt.model.io.motion import read_motion
    from trajopt.model.io.signals import coordinate_splines

    model = _load(ARM26)
    if stored.endswith(".csv"):
        table = np.loadtxt(DATA / "arm26" / stored, delimiter=",", skiprows=1)
        names = open(DATA / "arm26" / stored).readline().strip().split(",")
    else:
        names, table = _read_table(DATA / "arm26" / stored)
    coordinates = opensim_coordinate_names(model)
    rotational = [c.name for c in model.spec.coordinates if c.motion_type == "rotational"]
    motion = read_motion(DATA / "arm26" / motion_file, rotational=rotational, coordinates=coordinates)
    splines = coordinate_splines(motion, cutoff)
    times = splines.output_times(table[0, 0], table[-1, 0])
    np.testing.assert_allclose(times, table[:, 0], atol=1e-7)  # the stored times are printed to 8 decimals
    q, u, udot = from_opensim_state(model, *(splines.evaluate(times, d) for d in (0, 1, 2)))
    tau = np.array([np.asarray(inverse_dynamics(model.multibody, q[k], u[k], udot[k])).ravel()
                    for k in range(len(times))])
    stored_tau = table[:, [names.index(f"{c}_moment") for c in coordinates]]
    error = np.abs(to_opensim_generalized_forces(model, q, tau) - stored_tau).max()
    assert error <= 1e-8, f"{stored}: max |tau - stored| = {error:.3e} N·m over {len(times)} rows"


def _minimum_jerk_elbow(times):
    """Elbow 0 -> 90 deg in 1 s (minimum jerk), shoulder fixed at 0: q, u, udot in CoordinateSet order."""
    s, amplitude = np.asarray(times), np.pi / 2
    q, u, udot = (np.zeros((len(s), 2)) for _ in range(3))
    q[:, 1] = amplitude * (10 * s**3 - 15 * s**4 + 6 * s**5)
    u[:, 1] = amplitude * (30 * s**2 - 60 * s**3 + 30 * s**4)
    udot[:, 1] = amplitude * (60 * s - 180 * s**2 + 120 * s**3)
    return q, u, udot


def test_elbow_motion_file_is_minimum_jerk():
    """The test below uses the motion's exact (analytic) accelerations: check the file is that motion."""
    names, table = _read_table(DATA / "arm26" / "elbow_flex_0_90_minjerk.mot")
    q, _, _ = _minimum_jerk_elbow(table[:, 0])
    np.testing.assert_allclose(np.radians(table[:, [names.index("r_shoulder_elev"), names.index("r_elbow_flex")]]),
                               q, rtol=0, atol=1e-10)


@pytest.mark.opensim
def test_arm26_joint_reactions_equal_opensim(opensim_task):
    """Method: muscles off, the motion's exact accelerations reproduced in OpenSim by actuators
    carrying the inverse-dynamics forces; OpenSim's loads are Joint::calcReactionOnChildExpressedInGround
    (what the JointReaction analysis records: on the child, at the child joint frame's origin),
    re-expressed in the child joint frame, as trajopt's joint_reaction_loads(expressed_in='child')."""
    model = _load(ARM26)
    multibody = model.multibody
    _, table = _read_table(DATA / "arm26" / "elbow_flex_0_90_minjerk.mot")
    q, u, udot = _minimum_jerk_elbow(table[:, 0])
    reference = opensim_task("osim_joint_reaction", {"model": str(ARM26), "q": q, "u": u, "udot": udot})
    assert reference["udot_error"] < 1e-10  # OpenSim moved with exactly the motion's accelerations
    assert opensim_coordinate_names(model) == ("r_shoulder_elev", "r_elbow_flex")
    q, u, udot = from_opensim_state(model, q, u, udot)
    joints = list(reference["joint_names"])
    forces = np.zeros_like(reference["forces"])
    moments = np.zeros_like(reference["moments"])
    for k in range(len(q)):
        f, m = (np.asarray(x) for x in joint_reaction_loads(multibody, q[k], u[k], udot[k],
                                                            expressed_in=ReactionAxes.CHILD))
        for j, name in enumerate(joints):
            forces[k, j], moments[k, j] = f[:, multibody.joint_index(name)], m[:, multibody.joint_index(name)]
    for name, ours, theirs in (("force", forces, reference["forces"]), ("moment", moments, reference["moments"])):
        for j, joint in enumerate(joints):
            scale = np.abs(theirs[:, j]).max()
            relative = np.abs(ours[:, j] - theirs[:, j]).max() / scale
            assert relative <= 1e-6, f"{joint} {name}: max error {relative:.2e} of max |load| {scale:.3g}"


@pytest.mark.opensim
def test_arm26_joint_reaction_analysis_equals_opensim(opensim_task):
    """OpenSim's JointReaction analysis itself (AnalyzeTool, forces_file of inverse-dynamics
    actuator forces, muscles at zero) on the elbow-flexion motion file, at the spline states
    AnalyzeTool builds; trajopt's loads on the child, in ground, about the child joint frame origin.
    The analysis writes 8 decimals, so agreement is limited to ~1e-9 relative."""
    model = _load(ARM26)
    multibody = model.multibody
    _, table = _read_table(DATA / "arm26" / "elbow_flex_0_90_minjerk.mot")
    result = opensim_task("osim_joint_reaction_analysis", {
        "model": str(ARM26), "motion": str(DATA / "arm26" / "elbow_flex_0_90_minjerk.mot"), "times": table[:, 0]})
    labels, loads = list(result["labels"]), result["loads"]
    np.testing.assert_allclose(loads[:, 0], table[:, 0], atol=1e-12)
    q, u, udot = from_opensim_state(model, result["q"], result["u"], result["udot"])
    for joint in multibody.joints:
        prefix = f"{joint.name}_on_{joint.child.body}_in_ground_"
        k = multibody.joint_index(joint.name)
        ours = {"f": [], "m": [], "p": []}
        for row in range(len(q)):
            forces, moments = (np.asarray(x) for x in joint_reaction_loads(multibody, q[row], u[row], udot[row]))
            ours["f"].append(forces[:, k])
            ours["m"].append(moments[:, k])
            ours["p"].append(np.asarray(point_position(multibody, q[row], joint.child.body,
                                                       joint.child.translation)).ravel())
        for kind, what in (("f", "force"), ("m", "moment"), ("p", "load point")):
            theirs = loads[:, [labels.index(f"{prefix}{kind}{axis}") for axis in "xyz"]]
            relative = np.abs(np.array(ours[kind]) - theirs).max() / np.abs(theirs).max()
            assert relative <= 1e-6, f"{joint.name} {what}: max error {relative:.2e} of max |value|"
