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
from trajopt.multibody import (
    body_poses,
    forward_dynamics,
    inverse_dynamics,
    joint_reaction_loads,
    mass_matrix,
    point_position,
)
from trajopt.osim import OsimIgnoredWarning, load_osim

ARM26 = ROOT / "problems" / "arm26" / "arm26.osim"
GAIT2D = ROOT / "problems" / "gait2d" / "2D_gait.osim"
STATES = 50

pytestmark = pytest.mark.opensim


def _load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OsimIgnoredWarning)
        return load_osim(path)


def _read_table(path):
    """(column names, data) of an OpenSim .sto/.mot table (header up to 'endheader')."""
    lines = path.read_text().splitlines()
    end = next(k for k, line in enumerate(lines) if line.strip() == "endheader")
    return lines[end + 1].split(), np.array([[float(v) for v in line.split()] for line in lines[end + 2:] if line.strip()])


def _to_trajopt(model, opensim_names):
    """Column indices taking OpenSim's CoordinateSet order to trajopt's q order."""
    return [list(opensim_names).index(name) for name in model.multibody.coordinate_names]


def _random_states(model, seed):
    rng = np.random.default_rng(seed)
    coordinates = model.spec.coordinates
    low = np.maximum([c.range[0] for c in coordinates], -np.pi)
    high = np.minimum([c.range[1] for c in coordinates], np.pi)
    n = len(coordinates)
    return (rng.uniform(low, high, (STATES, n)), rng.uniform(-5, 5, (STATES, n)),
            rng.uniform(-50, 50, (STATES, n)))


@pytest.mark.parametrize("path", [ARM26, GAIT2D], ids=["arm26", "gait2d"])
def test_dynamics_equal_opensim_at_random_states(path, opensim_task):
    model = _load(path)
    multibody = model.multibody
    q, u, udot = _random_states(model, seed=3)
    reference = opensim_task("osim_inverse_dynamics", {"model": str(path), "q": q, "u": u, "udot": udot})
    order = _to_trajopt(model, reference["coordinate_names"])
    q, u, udot = q[:, order], u[:, order], udot[:, order]

    tau = np.array([np.asarray(inverse_dynamics(multibody, q[k], u[k], udot[k])).ravel() for k in range(STATES)])
    tau_error = np.abs(tau - reference["tau"][:, order]).max()
    assert tau_error <= 1e-8, f"max |tau - tau_OpenSim| = {tau_error:.3e} N·m"

    mass = np.array([np.asarray(mass_matrix(multibody, q[k])) for k in range(STATES)])
    np.testing.assert_allclose(mass, reference["mass_matrix"][:, order][:, :, order], rtol=0, atol=1e-12)

    free = np.array([np.asarray(forward_dynamics(multibody, q[k], u[k], np.zeros(multibody.nv))).ravel()
                     for k in range(STATES)])
    np.testing.assert_allclose(free, reference["free_udot"][:, order], rtol=1e-9, atol=1e-9)

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
    order = _to_trajopt(model, states["coordinate_names"])
    stored_tau = table[:, [names.index(f"{c}_moment") for c in model.multibody.coordinate_names]]
    tau = np.array([np.asarray(inverse_dynamics(model.multibody, states["q"][k, order], states["u"][k, order],
                                                states["udot"][k, order])).ravel() for k in range(len(table))])
    error = np.abs(tau - stored_tau).max()
    assert error <= 1e-8, f"{stored}: max |tau - stored| = {error:.3e} N·m over {len(table)} rows"


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
    order = _to_trajopt(model, ["r_shoulder_elev", "r_elbow_flex"])
    joints = list(reference["joint_names"])
    forces = np.zeros_like(reference["forces"])
    moments = np.zeros_like(reference["moments"])
    for k in range(len(q)):
        f, m = (np.asarray(x) for x in joint_reaction_loads(multibody, q[k, order], u[k, order], udot[k, order],
                                                            expressed_in="child"))
        for j, name in enumerate(joints):
            forces[k, j], moments[k, j] = f[:, multibody.joint_index(name)], m[:, multibody.joint_index(name)]
    for name, ours, theirs in (("force", forces, reference["forces"]), ("moment", moments, reference["moments"])):
        for j, joint in enumerate(joints):
            scale = np.abs(theirs[:, j]).max()
            relative = np.abs(ours[:, j] - theirs[:, j]).max() / scale
            assert relative <= 1e-6, f"{joint} {name}: max error {relative:.2e} of max |load| {scale:.3g}"
