"""trajopt.studies.gait: symmetry derived from the model, labels from the .osim, ground reactions, guesses,
expansion."""

import warnings

import numpy as np
import pytest

from trajopt.errors import TrajoptInputError
from trajopt.studies.gait.ground_reactions import center_of_pressure, mirror_ground_reactions
from trajopt.studies.gait.symmetry import coordinate_mirror, partner_name, speed_mirror
from trajopt.model.io import read_table
from trajopt.core.multibody import mass_matrix



@pytest.fixture(scope="module")
def gait2d():
    from trajopt.examples.gait2d.model import GaitModel

    return GaitModel.load()


@pytest.fixture(scope="module")
def walk3d():
    from trajopt.model.musculoskeletal.operators import WeldJoints, load_processed

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        osim, _ = load_processed("trajopt/examples/walk3d/subject_walk_scaled.osim", (WeldJoints(("mtp_r", "mtp_l")),))
    return osim


def test_partner_names():
    assert partner_name("hip_flexion_r") == "hip_flexion_l"
    assert partner_name("knee_angle_l_beta") == "knee_angle_r_beta"
    assert partner_name("contactHeel_r") == "contactHeel_l"
    assert partner_name("pelvis_tilt") == "pelvis_tilt" and partner_name("lumbarAct") == "lumbarAct"


def test_3d_signs_follow_from_the_kinematics(walk3d):
    """subject_walk_scaled.osim: pelvis list/rotation, lumbar bending/rotation and z translation change sign, the
    rest keep it and sided coordinates swap; the mass matrix obeys M(P q) = P M(q) Pᵀ for random q (a symmetric
    body: the scaled model is, to 1.9e-4 of the largest entry, measured)."""
    rng = np.random.default_rng(11)
    mb = walk3d.multibody
    p = coordinate_mirror(mb)
    names = mb.coordinate_names
    flips = {n for i, n in enumerate(names) if p[i].sum() < 0}
    assert flips == {"pelvis_list", "pelvis_rotation", "pelvis_tz", "lumbar_bending", "lumbar_rotation"}
    i, j = names.index("hip_adduction_r"), names.index("hip_adduction_l")
    assert p[i, j] == 1.0 and p[j, i] == 1.0
    speeds = speed_mirror(mb, p)
    np.testing.assert_array_equal(speeds, p)  # nq == nv: speeds mirror like coordinates
    for _ in range(3):
        q = rng.uniform(-0.3, 0.3, mb.nq)
        mass = np.asarray(mass_matrix(mb, q))
        mirrored = np.asarray(mass_matrix(mb, p @ q))
        np.testing.assert_allclose(mirrored, speeds @ mass @ speeds.T, atol=5e-4 * np.abs(mass).max())


def test_symmetry_of_an_asymmetric_name_is_an_error():
    from trajopt.studies.gait.symmetry import swap_permutation

    with pytest.raises(TrajoptInputError, match="muscle 'soleus_r' has no partner 'soleus_l'"):
        swap_permutation(("soleus_r", "tib_ant_r", "tib_ant_l"), what="muscle")


def test_opensim_labels_are_mocos(gait2d):
    """The labels derived from 2D_gait.osim are the column labels of Moco's solution of the same model."""
    from trajopt.studies.gait.labels import opensim_labels

    labels = opensim_labels(gait2d.musculoskeletal)
    moco = read_table("trajopt/examples/gait2d/moco/gaitPrediction_solution.sto").labels
    ours = labels.coordinates + labels.speeds + labels.activations + labels.excitations + labels.actuator_controls
    assert set(ours) <= set(moco)
    assert len(ours) == 10 + 10 + 18 + 18 + 1


def test_walk3d_muscle_labels_are_mocos(walk3d):
    """Muscles in a ForceSet: /forceset/<name> as in Moco's walk3d solution."""
    muscles = tuple(m.component_path for m in walk3d.muscles)
    moco = read_table("trajopt/examples/walk3d/moco_inverse_reference/MocoInverse_solution.sto").labels
    assert {f"{m}/activation" for m in muscles} <= set(moco) and len(muscles) == 80


def test_center_of_pressure_and_free_moment_recover_the_load():
    """torque = p x F + T e_y with p on the ground: the decomposition gives p and T back; a foot in the air gives 0."""
    force = np.array([[40.0, 700.0, -25.0], [3.0, 0.5, 1.0]])
    point = np.array([0.31, 0.0, -0.12])
    free = 4.5
    torque = np.cross(point, force[0]) + free * np.array([0.0, 1.0, 0.0])
    points, moments = center_of_pressure(force, np.vstack([torque, [1.0, 2.0, 3.0]]), threshold=1.0)
    np.testing.assert_allclose(points[0], point, atol=1e-14)
    assert moments[0] == pytest.approx(free, abs=1e-12)
    assert np.all(points[1] == 0.0) and moments[1] == 0.0


def test_mirrored_ground_reactions_equal_those_of_the_mirrored_state(gait2d):
    """The reactions of the mirrored (and shifted) state are the mirror image of the reactions, torques included."""
    rng = np.random.default_rng(11)
    s = gait2d.symmetry
    names = gait2d.coordinate_names
    from trajopt.model.io import read_motion

    q = read_motion("trajopt/examples/gait2d/referenceCoordinates.sto", coordinates=names).data[5].copy()
    u = rng.normal(0.0, 0.05, 10)  # slow: a fast foot leaving the ground carries no load (dissipation)
    reactions = [np.asarray(v).reshape(1, 3) for v in gait2d.ground_reactions(q, u)]
    assert reactions[0][0, 1] + reactions[1][0, 1] > 10.0
    shift = 0.6
    q_image = s.coordinates @ q
    q_image[names.index("pelvis_tx")] += shift
    expected = mirror_ground_reactions(*reactions, [shift, 0.0, 0.0])
    actual = [np.asarray(v).reshape(1, 3) for v in gait2d.ground_reactions(q_image, s.speeds @ u)]
    for a, b in zip(actual, expected):
        np.testing.assert_allclose(a, b, atol=1e-9 * max(1.0, np.abs(b).max()))


def test_guess_speeds_of_a_quaternion_joint_are_its_angular_velocity():
    """q(t) = rotation about a fixed axis at 2 rad/s: u = N(q)⁺ q̇ is the constant angular velocity (body axes)."""
    from trajopt.studies.gait.guess import speeds_from_coordinates
    from trajopt.core.multibody import BallJoint, Body, Model, OffsetFrame
    from trajopt.core.multibody.rotations import quaternion_exp

    model = Model("ball")
    model.add_body(Body("b", 1.0, (0, 0, 0), (1, 1, 1, 0, 0, 0)))
    model.add_joint(BallJoint("j", OffsetFrame("ground"), OffsetFrame("b")))
    model.finalize()
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    time = np.linspace(0.0, 0.5, 2001)
    q = np.vstack([np.asarray(quaternion_exp(2.0 * t * axis)).ravel() for t in time])
    u = speeds_from_coordinates(model, time, q)
    np.testing.assert_allclose(u[1:-1], np.tile(2.0 * axis, (time.size - 2, 1)), atol=1e-5)


def test_tracking_objective_terms(gait2d):
    """The tracking integrand at a grid time: 10 Σ (q - q_ref)² + Σ ((F - F_ref)/mg)² + 10 Σ e² + 1e-4 c²,
    with F the feet's reactions at (q, u); a coordinate offset δ adds exactly 10 δ²."""
    rng = np.random.default_rng(11)
    from trajopt.examples.gait2d.prediction import REFERENCE_COORDINATES, REFERENCE_GRF, build_tracking_problem
    from trajopt.model.io import read_motion

    gait = build_tracking_problem(model=gait2d)
    compiled = gait.problem.compile()
    motion = read_motion(REFERENCE_COORDINATES, coordinates=gait2d.coordinate_names)
    grf = read_table(REFERENCE_GRF)
    k = 7
    t, q = motion.time[k], motion.data[k].copy()
    u = rng.normal(0.0, 0.05, 10)
    a, e, c = rng.uniform(0.01, 1, 18), rng.uniform(0.01, 1, 18), 3.0
    x = np.concatenate([q, u, a])
    right, left = (np.asarray(v).ravel() for v in gait2d.ground_reactions(q, u)[0:2])
    reference = [np.interp(t, grf.time, grf.column(f"ground_force_{s}_v{ax}")) for s in "rl" for ax in "xy"]
    forces = [right[0], right[1], left[0], left[1]]
    weight = gait2d.multibody_weight
    expected = sum(((f - r) / weight) ** 2 for f, r in zip(forces, reference)) + 10 * np.sum(e ** 2) + 1e-4 * c ** 2

    def total(x):
        """The cost with each integral replaced by its integrand at (t, x): the weighted integrand."""
        integrands = compiled.integrands(t, x, np.append(e, c), [], np.zeros(10))
        return float(compiled.endpoint(0.0, x, np.append(e, c), np.zeros(10), 1.0, x, np.append(e, c),
                                       np.zeros(10), [], integrands)[0])

    assert total(x) == pytest.approx(expected, rel=1e-10)
    shifted = x.copy()
    shifted[gait2d.coordinate_index("lumbar")] += 0.01
    right, left = (np.asarray(v).ravel() for v in gait2d.ground_reactions(shifted[:10], u)[0:2])
    forces = [right[0], right[1], left[0], left[1]]
    expected = sum(((f - r) / weight) ** 2 for f, r in zip(forces, reference)) + 10 * np.sum(e ** 2) + 1e-4 * c ** 2
    assert total(shifted) == pytest.approx(expected + 10 * 0.01 ** 2, rel=1e-10)


@pytest.mark.slow
def test_tracking_follows_the_reference(gait2d):
    """MocoTrack's example2DWalking step through trajopt.studies.gait.track: converges, and the motion stays within a
    few degrees of referenceCoordinates.sto and the vertical reactions within 13 % of body weight (RMS) of
    referenceGRF.sto (measured: 73 N, 12 %, right foot)."""
    from trajopt.examples.gait2d.main import solve_tracking
    from trajopt.examples.gait2d.outputs import half_stride, tracking_errors

    gait, solution, _ = solve_tracking(24, model=gait2d)
    assert solution.status == "Solve_Succeeded"
    errors = tracking_errors(gait, half_stride(gait, solution))
    assert max(v for k, v in errors.items() if k.endswith("(deg)")) < 5.0
    assert max(errors["ground_force_r_vy (N)"], errors["ground_force_l_vy (N)"]) < 0.13 * gait2d.multibody_weight


def test_free_joint_pelvis_round_trip_and_same_kinematics():
    """walk3d with a quaternion pelvis: coordinates.sto converted to the quaternion gives the same body poses as the
    original model's angles, and converts back to the same angles."""
    from trajopt.examples.walk3d.prediction import COORDINATES, PELVIS, load_model
    from trajopt.studies.gait.guess import free_joint_angles, free_joint_motion
    from trajopt.model.io import read_motion
    from trajopt.core.multibody import body_poses

    model = load_model()
    original, mb = model.original, model.musculoskeletal.multibody
    motion = read_motion(COORDINATES)
    names = tuple(n for n in original.coordinate_names if n in motion.labels)
    data = motion.select(names).data[::200]
    q = free_joint_motion(original, mb, PELVIS, names, data, fill_missing=True)
    assert np.allclose(np.linalg.norm(q[:, mb.q_slice(PELVIS)][:, :4], axis=1), 1.0)
    back = free_joint_angles(original, mb, PELVIS, q)
    full = np.column_stack([data[:, names.index(n)] if n in names else np.zeros(len(data))
                            for n in original.coordinate_names])
    np.testing.assert_allclose(back, full, atol=1e-10)
    for k in range(len(data)):
        r0, p0 = (np.asarray(x) for x in body_poses(original, full[k]))
        r1, p1 = (np.asarray(x) for x in body_poses(mb, q[k]))
        np.testing.assert_allclose(r1, r0, atol=1e-12)
        np.testing.assert_allclose(p1, p0, atol=1e-12)


def test_walk3d_quaternion_symmetry(walk3d):
    """A free-joint pelvis mirrors as (w, x, y, z) -> (w, -x, -y, z), its translations as (x, y, -z), its angular
    velocity as (-, -, +); the mass matrix of the quaternion model obeys M(P_q q) = P_u M(q) P_uᵀ."""
    rng = np.random.default_rng(11)
    from trajopt.examples.walk3d.prediction import load_model

    model = load_model()
    mb = model.musculoskeletal.multibody
    s = model.symmetry
    pelvis = mb.q_slice("ground_pelvis")
    np.testing.assert_array_equal(np.diag(s.coordinates)[pelvis], [1, -1, -1, 1, 1, 1, -1])
    np.testing.assert_array_equal(np.diag(s.speeds)[mb.v_slice("ground_pelvis")], [-1, -1, 1, 1, 1, -1])
    for _ in range(3):
        q = rng.uniform(-0.3, 0.3, mb.nq)
        q[pelvis.start:pelvis.start + 4] /= np.linalg.norm(q[pelvis.start:pelvis.start + 4])
        mass = np.asarray(mass_matrix(mb, q))
        np.testing.assert_allclose(np.asarray(mass_matrix(mb, s.coordinates @ q)), s.speeds @ mass @ s.speeds.T,
                                   atol=5e-4 * np.abs(mass).max())


@pytest.mark.slow
def test_walk3d_prediction_command_writes_its_files_also_unconverged(tmp_path):
    """`trajopt run walk3d-prediction` on a coarse mesh, 1 iteration: not converged (exit 1), every file written,
    the summary says so; the full cycle's coordinates are OpenSim's labels with pelvis angles."""
    from trajopt.examples.walk3d.prediction_main import main

    assert main(["--intervals", "3", "--max-iterations", "1", "--print-level", "0", "--recipe", "moco-example",
                 "--out", str(tmp_path)]) == 1
    for name in ("half_cycle_solution.sto", "full_cycle_coordinates.sto", "full_cycle_ground_reactions.sto",
                 "grfs.png", "joint_angles.png", "activations.png", "summary.md"):
        assert (tmp_path / name).stat().st_size > 0, name
    assert not (tmp_path / "stick_figure.gif").exists()  # GIFs are written with --animate only
    summary = (tmp_path / "summary.md").read_text()
    assert "did not converge" in summary
    # OpenSim's cross-check is written exactly when opensim is installed (trajopt/examples/walk3d/opensim_check.py).
    from trajopt.model.io.opensim_reference import opensim_available

    assert ("## OpenSim 4.6 cross-check" in summary) == opensim_available()
    coordinates = read_table(tmp_path / "full_cycle_coordinates.sto")
    assert "/jointset/ground_pelvis/pelvis_list/value" in coordinates.labels
    assert coordinates.time.size == 2 * (2 * 3 + 1) - 1


def test_walk3d_prediction_compiled_option_reaches_the_solver(monkeypatch, tmp_path):
    """--compiled asks for the compiled, cached NLP functions; off by default."""
    import trajopt.examples.walk3d.prediction_main as walk3d_main
    from trajopt.examples.walk3d.prediction import solver_settings

    calls = []
    monkeypatch.setattr(walk3d_main, "run", lambda *args, **options: calls.append(options) or {"success": True})
    assert walk3d_main.main(["--compiled", "--out", str(tmp_path)]) == 0
    assert walk3d_main.main(["--out", str(tmp_path)]) == 0
    assert [call["compiled"] for call in calls] == [True, False]
    assert solver_settings(compiled=True).compiled and not solver_settings().compiled


def test_walk3d_prediction_solver_option_reaches_the_run(monkeypatch, tmp_path):
    """--solver picks the route (IPOPT on the mesh by default, or mesh continuation)."""
    import trajopt.examples.walk3d.prediction_main as walk3d_main
    from trajopt.core.ocp import SolverRoute

    routes = []
    monkeypatch.setattr(walk3d_main, "run", lambda *args, route, **options: routes.append(route) or {"success": True})
    assert walk3d_main.main(["--out", str(tmp_path)]) == 0
    assert walk3d_main.main(["--solver", "mesh-continuation", "--out", str(tmp_path)]) == 0
    assert routes == [SolverRoute.IPOPT, SolverRoute.MESH_CONTINUATION]


def test_walk3d_operators():
    """Contact geometry from Moco's .xml sets (12 spheres on calcn/toes, raised 2 cm), welded patellae drop their
    couplers, and a pelvis whose translation is not the identity refuses to become a FreeJoint (one-line error)."""
    import dataclasses

    from trajopt.errors import ModelFileError
    from trajopt.model.osim import spec as osim_spec
    from trajopt.model.musculoskeletal.operators import AddContactGeometry, FreeJointInQuaternions, WeldJoints
    from trajopt.model.osim.parser import parse_osim
    from trajopt.examples.walk3d.prediction import CONTACT_FORCES, CONTACT_GEOMETRY, MODEL

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model_spec = parse_osim(MODEL)
    assert len(model_spec.constraints) == 2
    welded = WeldJoints(("patellofemoral_r", "patellofemoral_l")).apply(model_spec)
    assert welded.constraints == ()
    raised = AddContactGeometry(str(CONTACT_GEOMETRY), str(CONTACT_FORCES), (0.0, 0.02, 0.0)).apply(model_spec)
    spheres = [g for g in raised.contact_geometry if isinstance(g, osim_spec.ContactSphere)]
    assert len(spheres) == 12 and len(raised.contact_forces) == 12
    heel = next(g for g in spheres if g.name == "heel_r")
    assert heel.location == pytest.approx((0.0146421, 0.02, -0.0122799)) and heel.frame == "/bodyset/calcn_r"
    pelvis = next(j for j in model_spec.joints if j.name == "ground_pelvis")
    axes = list(pelvis.spatial_transform)
    axes[3] = dataclasses.replace(axes[3], function=osim_spec.LinearFunction(2.0, 0.0))
    bent = dataclasses.replace(model_spec, joints=tuple(
        dataclasses.replace(j, spatial_transform=tuple(axes)) if j.name == "ground_pelvis" else j
        for j in model_spec.joints))
    with pytest.raises(ModelFileError, match="ground_pelvis' translation1 is not the identity"):
        FreeJointInQuaternions("ground_pelvis").apply(bent)


def test_walk3d_predsim_foot_spheres():
    """Falisse et al. 2022's spheres on this foot: PredSim's s1 (heel) at (0.0019012, -0.01, -0.0038263) in its
    calcaneus scaled by the mtp joints' positions (0.1788 / 0.16341 m), every calcaneus sphere behind this
    model's mtp joint, and each foot's lowest sphere point where Moco's raised spheres' is."""
    import warnings

    from trajopt.model.osim import spec as osim_spec
    from trajopt.model.musculoskeletal.operators import AddContactGeometry
    from trajopt.model.osim.parser import parse_osim
    from trajopt.examples.walk3d.prediction import CONTACT_FORCES, MODEL, FootSpheres

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model_spec = parse_osim(MODEL)

    def spheres(layout):
        raised = AddContactGeometry(str(layout.value), str(CONTACT_FORCES), (0.0, 0.02, 0.0)).apply(model_spec)
        assert len(raised.contact_forces) == 12
        return {g.name: g for g in raised.contact_geometry if isinstance(g, osim_spec.ContactSphere)}

    moco, predsim = spheres(FootSpheres.MOCO), spheres(FootSpheres.PREDSIM)
    assert sorted(moco) == sorted(predsim)
    scale = 0.1788 / 0.1634096787741991
    heel = predsim["heel_r"]
    assert (heel.location[0], heel.location[2]) == pytest.approx((0.0019011578840796601 * scale,
                                                                   -0.00382630379623308 * scale), abs=1e-6)
    assert all(g.location[0] < 0.1788 for g in predsim.values() if g.frame.startswith("/bodyset/calcn"))
    assert any(g.location[0] > 0.1788 for g in moco.values() if g.frame.startswith("/bodyset/calcn"))
    for side in "rl":
        lowest = [min(g.location[1] - g.radius for name, g in layout.items() if name.endswith("_" + side))
                  for layout in (moco, predsim)]
        assert lowest[1] == pytest.approx(lowest[0], abs=1e-12)


def test_walk3d_symmetric_ends_vanish_on_mirrored_states():
    """The quaternion pelvis: unit start, vector part mirrored at the end (scalar part left to the dynamics);
    every symmetry row vanishes on a mirrored end state and the unmirrored one violates it."""
    rng = np.random.default_rng(11)
    from trajopt.examples.walk3d.prediction import build_problem

    walk = build_problem(3)
    compiled = walk.problem.compile()
    mb = walk.model.musculoskeletal.multibody
    s = walk.model.symmetry
    labels = [label for group in compiled.endpoint_groups for label in group.labels]
    rows = [i for i, label in enumerate(labels) if label.startswith("symmetry") or label.startswith("unit quaternion")]
    assert "symmetry ground_pelvis_qw" not in labels and "symmetry ground_pelvis_qx" in labels
    q0 = rng.uniform(-0.2, 0.2, mb.nq)
    pelvis = mb.q_slice("ground_pelvis")
    q0[pelvis.start:pelvis.start + 4] = [0.98, 0.1, -0.12, 0.1]
    q0[pelvis.start:pelvis.start + 4] /= np.linalg.norm(q0[pelvis.start:pelvis.start + 4])
    u0 = rng.normal(0.0, 0.5, mb.nv)
    a0 = rng.uniform(0.0, 1.0, 80)
    c = rng.uniform(-1, 1, 15)
    controls = np.concatenate([rng.uniform(0, 1, 80), c])
    x0 = np.concatenate([q0, u0, a0])
    xf = np.concatenate([s.coordinates @ q0, s.speeds @ u0, s.muscles @ a0])
    tx = mb.coordinate_index("pelvis_tx")
    xf[tx] = q0[tx] + 0.7
    end_controls = np.concatenate([controls[:80], s.actuators @ c])

    def residual(xf, uf):
        _, g = compiled.endpoint(0.0, x0, controls, np.zeros(mb.nv), 0.55, xf, uf, np.zeros(mb.nv), [], [0.0])
        return np.asarray(g).ravel()[rows]

    expected = np.array([1.0 if labels[i].startswith("unit quaternion") else 0.0 for i in rows])  # ‖Q(0)‖² = 1
    assert expected.sum() == 1.0
    np.testing.assert_allclose(residual(xf, end_controls), expected, atol=1e-14)
    assert np.abs(residual(x0, controls) - expected).max() > 0.01


def test_free_joint_speeds_are_the_pelvis_angular_velocity_and_its_rate():
    """A smooth motion of the .osim's pelvis angles (and translations): ``free_joint_speeds`` gives the FreeJoint's
    speeds and accelerations whose angular part is the pelvis's angular velocity in its own frame, 2 vec(Q* Q̇), and
    its rate (central differences of the quaternion over time); ``free_joint_angle_motion`` turns them back."""
    rng = np.random.default_rng(11)
    from trajopt.examples.walk3d.prediction import PELVIS, load_model
    from trajopt.studies.gait.guess import free_joint_angle_motion, free_joint_motion, free_joint_speeds

    model = load_model()
    original, mb = model.original, model.musculoskeletal.multibody
    names = original.coordinate_names
    pelvis = [original.coordinate_index(n) for n in original.joint(PELVIS).coordinate_names]
    amplitude, omega, phase = rng.uniform(0.2, 0.6, 6), rng.uniform(2, 8, 6), rng.uniform(0, 2 * np.pi, 6)

    def motion(t):
        q, u, udot = (np.zeros((np.size(t), original.nq)) for _ in range(3))
        t = np.atleast_1d(t)[:, None]
        q[:, pelvis] = amplitude * np.sin(omega * t + phase)
        u[:, pelvis] = amplitude * omega * np.cos(omega * t + phase)
        udot[:, pelvis] = -amplitude * omega ** 2 * np.sin(omega * t + phase)
        return q, u, udot

    def quaternion(t):
        return free_joint_motion(original, mb, PELVIS, names, motion(t)[0])[:, :4]

    def multiply(a, b):
        w1, v1, w2, v2 = a[0], a[1:], b[0], b[1:]
        return np.concatenate([[w1 * w2 - v1 @ v2], w1 * v2 + w2 * v1 + np.cross(v1, v2)])

    def angular_velocity(t, h=1e-6):
        center, rate = quaternion(t)[0], (quaternion(t + h)[0] - quaternion(t - h)[0]) / (2 * h)
        return 2 * multiply(center * [1, -1, -1, -1], rate)[1:]

    times = np.array([0.1, 0.45, 0.8])
    q_angles, u_angles, udot_angles = motion(times)
    q = free_joint_motion(original, mb, PELVIS, names, q_angles)
    u, udot = free_joint_speeds(original, mb, PELVIS, q_angles, u_angles, q, udot_angles)
    h = 1e-4
    for k, t in enumerate(times):
        np.testing.assert_allclose(u[k, :3], angular_velocity(t), atol=1e-9)
        rate = (angular_velocity(t + h) - angular_velocity(t - h)) / (2 * h)
        np.testing.assert_allclose(udot[k, :3], rate, atol=2e-6)  # the central differences are good to ~1e-6
    np.testing.assert_allclose(u[:, 3:6], u_angles[:, pelvis[3:]], atol=1e-15)  # translation rates in ground
    back = free_joint_angle_motion(original, mb, PELVIS, q, u, udot)
    for mine, theirs in zip(back, (q_angles, u_angles, udot_angles)):
        np.testing.assert_allclose(mine, theirs, atol=1e-12)
