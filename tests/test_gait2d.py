"""trajopt/examples/gait2d: model assembly, left/right mirror, symmetry constraints, dynamics identities, solves."""

import casadi as ca
import numpy as np
import pytest

from trajopt.examples.gait2d.model import GaitModel, coordinate_path
from trajopt.examples.gait2d.prediction import MOCO_STATE_BOUNDS, build_problem

# The pairs of 2D_gait.osim (the symmetry is derived from the model's names and kinematics, checked against these).
COORDINATE_PAIRS = (("hip_flexion_l", "hip_flexion_r"), ("knee_angle_l", "knee_angle_r"),
                    ("ankle_angle_l", "ankle_angle_r"))
MUSCLE_PAIRS = tuple((f"{name}_l", f"{name}_r") for name in (
    "hamstrings", "bifemsh", "glut_max", "iliopsoas", "rect_fem", "vasti", "gastroc", "soleus", "tib_ant"))


@pytest.fixture(scope="module")
def model():
    return GaitModel.load()


def _random_state(model, rng):
    names = model.coordinate_names
    q = np.array([rng.uniform(*MOCO_STATE_BOUNDS[n]) for n in names])
    return q, rng.normal(0.0, 1.0, len(names))


def test_model_assembly(model):
    assert model.coordinate_names[:3] == ("pelvis_tilt", "pelvis_tx", "pelvis_ty")
    assert len(model.coordinate_names) == 10 and len(model.muscle_names) == 18
    assert sorted(c.name for c in model.contacts) == ["contactFront_l", "contactFront_r", "contactHeel_l",
                                                      "contactHeel_r"]
    assert model.lumbar_actuator.name == "lumbarAct" and model.lumbar_actuator.max_control == 150.0
    hamstrings = model.musculoskeletal.muscles[model.muscle_names.index("hamstrings_r")].parameters
    # 2D_gait.osim: rigid tendon, fiber damping 0.01, Fmax 2700 N, time constants 15/60 ms.
    assert hamstrings.ignore_tendon_compliance and hamstrings.fiber_damping == 0.01
    assert hamstrings.max_isometric_force == 2700.0
    assert (hamstrings.activation_time_constant, hamstrings.deactivation_time_constant) == (0.015, 0.060)
    assert model.multibody_weight == pytest.approx(62.0 * 9.80665, rel=0.02)


def test_activation_rates_use_opensim_smoothing(model):
    # OpenSim DeGrooteFregly2016Muscle::calcActivationDerivative with activation_dynamics_smoothing 0.1,
    # against the activation dynamics of the problem that build_problem assembles.
    rng = np.random.default_rng(7)
    built = build_problem(model=model).muscle_driven
    rates = ca.Function("activation_rates", [built.excitations, built.activations], [built.activation_rates])
    e, a = rng.uniform(0.01, 1, 18), rng.uniform(0.01, 1, 18)
    f = 0.5 * np.tanh(0.1 * (e - a))
    z = 0.5 + 1.5 * a
    expected = ((f + 0.5) / (0.015 * z) + z * (0.5 - f) / 0.060) * (e - a)
    np.testing.assert_allclose(np.asarray(rates(e, a)).ravel(), expected, rtol=1e-12)


def test_mirror_swaps_pairs_and_is_a_symmetry_of_the_body(model):
    rng = np.random.default_rng(7)
    p = model.symmetry.coordinates
    names = model.coordinate_names
    for left, right in COORDINATE_PAIRS:
        assert p[names.index(left), names.index(right)] == 1.0
    for name in ("pelvis_tilt", "pelvis_tx", "pelvis_ty", "lumbar"):
        assert p[names.index(name), names.index(name)] == 1.0
    muscles = model.muscle_names
    for left, right in MUSCLE_PAIRS:
        assert model.symmetry.muscles[muscles.index(left), muscles.index(right)] == 1.0
    # The model is left/right symmetric: M(P q) = P M(q) P^T, and the feet's contact forces swap
    # (z components change sign: the mirror image lies across the sagittal plane).
    q, u = _random_state(model, rng)
    q[names.index("pelvis_ty")] = 0.88
    mass = np.asarray(model.mass_matrix(q))
    np.testing.assert_allclose(np.asarray(model.mass_matrix(p @ q)), p @ mass @ p.T, atol=1e-12)
    right, left, _, _ = (np.asarray(v).ravel() for v in model.ground_reactions(q, u))
    right_m, left_m, _, _ = (np.asarray(v).ravel() for v in model.ground_reactions(p @ q, p @ u))
    assert max(abs(right[1]), abs(left[1])) > 1.0  # a foot is loaded in this configuration
    flip = np.array([1.0, 1.0, -1.0])
    np.testing.assert_allclose(right_m, left * flip, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(left_m, right * flip, rtol=1e-9, atol=1e-9)


def test_symmetry_constraints_vanish_exactly_on_mirrored_end_states(model):
    rng = np.random.default_rng(7)
    gait = build_problem(model=model)
    compiled = gait.problem.compile()
    q0, u0 = _random_state(model, rng)
    a0 = rng.uniform(0.01, 1.0, 18)
    x0 = np.concatenate([q0, u0, a0])
    qf = model.symmetry.coordinates @ q0
    tx = model.coordinate_index("pelvis_tx")
    qf[tx] = q0[tx] + 0.6  # pelvis_tx is excluded from the symmetry
    xf = np.concatenate([qf, model.symmetry.coordinates @ u0, model.symmetry.muscles @ a0])
    controls = np.concatenate([rng.uniform(0.01, 1, 18), [3.0]])
    _, g = compiled.endpoint(0.0, x0, controls, np.zeros(10), 0.5, xf, controls, np.zeros(10), [], [0.0])
    g = np.asarray(g).ravel()
    labels = [label for group in compiled.endpoint_groups for label in group.labels]
    symmetry = [i for i, label in enumerate(labels) if label.startswith("symmetry")]
    assert len(symmetry) == 9 + 10 + 18 + 1
    np.testing.assert_allclose(g[symmetry], 0.0, atol=1e-15)
    speed_row = labels.index("average speed")
    assert g[speed_row] == pytest.approx(0.6 - 1.2 * 0.5)
    # Unmirrored end states violate it: the mapping is not the identity.
    xf_wrong = np.concatenate([q0, u0, a0])
    xf_wrong[tx] += 0.6
    _, g_wrong = compiled.endpoint(0.0, x0, controls, np.zeros(10), 0.5, xf_wrong, controls, np.zeros(10), [], [0])
    assert np.abs(np.asarray(g_wrong).ravel()[symmetry]).max() > 0.01


def test_mirror_excitations_adds_excitation_symmetry(model):
    """--mirror-excitations: excitations at tf equal the mirrored excitations at t0 (18 more rows)."""
    rng = np.random.default_rng(7)
    default = build_problem(model=model).problem.compile()
    compiled = build_problem(model=model, mirror_excitations=True).problem.compile()
    rows = [label for group in compiled.endpoint_groups for label in group.labels]
    default_rows = [label for group in default.endpoint_groups for label in group.labels]
    assert len(rows) == len(default_rows) + 18
    q0, u0 = _random_state(model, rng)
    a0, e0 = rng.uniform(0.01, 1.0, 18), rng.uniform(0.01, 1.0, 18)
    tx = model.coordinate_index("pelvis_tx")
    qf = model.symmetry.coordinates @ q0
    qf[tx] = q0[tx] + 0.6
    x0 = np.concatenate([q0, u0, a0])
    xf = np.concatenate([qf, model.symmetry.coordinates @ u0, model.symmetry.muscles @ a0])
    excitation_rows = [i for i, label in enumerate(rows) if label.startswith("symmetry") and "excitation" in label]
    assert len(excitation_rows) == 18

    def residual(ef):
        _, g = compiled.endpoint(0.0, x0, np.append(e0, 3.0), np.zeros(10), 0.5, xf, np.append(ef, 3.0),
                                 np.zeros(10), [], [0.0])
        return np.asarray(g).ravel()[excitation_rows]

    np.testing.assert_allclose(residual(model.symmetry.muscles @ e0), 0.0, atol=1e-15)
    # Repeating (not mirroring) the excitations violates it.
    assert np.abs(residual(e0)).max() > 0.01


def test_forward_dynamics_satisfies_the_implicit_residual(model):
    """ID(FD(tau)) = tau: the explicit model of the re-simulation and the implicit path constraint agree."""
    rng = np.random.default_rng(7)
    from trajopt.examples.gait2d.simulate import explicit_dynamics_function

    gait = build_problem(model=model)
    explicit = explicit_dynamics_function(gait)
    q, u = _random_state(model, rng)
    q[model.coordinate_index("pelvis_ty")] = 0.9
    a, e = rng.uniform(0.01, 1.0, 18), rng.uniform(0.01, 1.0, 18)
    xdot = np.asarray(explicit(np.concatenate([q, u, a]), e, 12.0)[0]).ravel()
    np.testing.assert_allclose(xdot[:10], u)
    residual = np.asarray(model.implicit_dynamics(q, u, xdot[10:20], a, 12.0)).ravel()
    assert np.abs(residual).max() < 1e-8 * max(1.0, np.abs(xdot[10:20]).max())


def test_full_stride_continues_the_half_stride(model):
    """Mirrored second half: its first frame equals the half stride's last frame when the ends are symmetric."""
    rng = np.random.default_rng(7)
    from trajopt.examples.gait2d.outputs import Stride, full_stride
    from trajopt.model.io.tables import Table

    gait = build_problem(model=model)
    q0, u0 = _random_state(model, rng)
    a0 = rng.uniform(0.01, 1, 18)
    tx = model.coordinate_index("pelvis_tx")
    qf = model.symmetry.coordinates @ q0
    qf[tx] += 0.6
    start = np.concatenate([q0, u0, a0])
    end = np.concatenate([qf, model.symmetry.coordinates @ u0, model.symmetry.muscles @ a0])
    labels = [coordinate_path(n) for n in model.coordinate_names] + \
        [coordinate_path(n, "speed") for n in model.coordinate_names] + [f"/{m}/activation" for m in model.muscle_names]
    table = Table(np.array([0.0, 0.25, 0.5]), tuple(labels), np.vstack([start, 0.5 * (start + end), end]))
    forces = np.zeros((3, 3))
    full = full_stride(gait, Stride(table, forces, forces, forces, forces))
    assert full.time.size == 5 and full.time[-1] == pytest.approx(1.0)
    # Frame 4 is the mirror of frame 2 = mirror(mirror(start)) shifted twice: start with pelvis_tx + 1.2 m.
    expected = start.copy()
    expected[tx] += 1.2
    np.testing.assert_allclose(full.table.data[4], expected, atol=1e-12)


def test_capped_prediction_is_reported_as_failed_with_its_worst_constraint(model):
    """A solve stopped by max_iterations is a failure: status, success flag and a named worst constraint (what
    `trajopt run gait2d-prediction` prints and writes to summary.md when a solve does not converge)."""
    from trajopt.core.ocp import Ipopt

    gait = build_problem(6, model=model)
    solution = gait.problem.solve(gait.transcription, Ipopt(tol=1e-4, max_iterations=3), guess=gait.reference_guess())
    assert solution.status == "Maximum_Iterations_Exceeded" and not solution.success
    assert solution.constraint_violation > 1e-4  # the scaled NLP's violation is above its tolerance
    description, value = solution.worst_constraint.rsplit(": ", 1)
    assert description and float(value) > 0  # named, in physical units
    assert np.isfinite(solution.objective) and 0.4 <= solution.duration <= 0.6


def test_opensim_forces_on_reference_states_equal_trajopt(model, opensim_task, tmp_path):
    """Contact forces and tendon forces of OpenSim on states written by trajopt (reference motion)."""
    rng = np.random.default_rng(7)
    from trajopt.model.contact import contact_record_values
    from trajopt.model.io.motion import read_motion
    from trajopt.model.io.tables import Table, write_sto
    from trajopt.examples.gait2d.model import MODEL_FILE
    from trajopt.examples.gait2d.prediction import REFERENCE_COORDINATES

    motion = read_motion(REFERENCE_COORDINATES, coordinates=model.coordinate_names)
    q = motion.data[::5]
    u = np.gradient(motion.data, motion.time, axis=0)[::5]
    a = rng.uniform(0.01, 1.0, (q.shape[0], 18))
    lumbar = rng.uniform(-20.0, 20.0, (q.shape[0], 1))
    labels = [coordinate_path(n) for n in model.coordinate_names] + \
        [coordinate_path(n, "speed") for n in model.coordinate_names] + [f"/{m}/activation" for m in model.muscle_names]
    path = write_sto(tmp_path / "states.sto", Table(motion.time[::5], tuple(labels), np.hstack([q, u, a])))
    result = opensim_task("gait2d_solution_check", {
        "model_file": str(MODEL_FILE), "states_file": str(path),
        "contact_names": np.array([c.name for c in model.contacts]), "muscle_names": np.array(model.muscle_names),
        "coordinate_names": np.array(model.coordinate_names),
        "actuator_names": np.array(list(model.muscle_names) + ["lumbarAct"]), "controls": np.hstack([a, lumbar])})
    assert result["states_loaded"] == q.shape[0]
    records = np.stack([np.asarray(contact_record_values(model.multibody, q[k], u[k], model.contacts))
                        for k in range(q.shape[0])])
    scale = np.abs(result["contact_records"]).max()
    assert scale > 100.0  # the feet touch the ground in the reference motion
    np.testing.assert_allclose(records, result["contact_records"], rtol=0, atol=1e-6 * scale)
    tendon = np.asarray(model.musculoskeletal.tendon_forces.map(q.shape[0])(a.T, q.T, u.T)).T
    # Polynomial paths (held-out length RMSE <= 0.16 mm) vs OpenSim's geometry: 0.16 mm is 0.0033 of the
    # shortest optimal fiber length (0.048 m) and, at the force-length curve's steepest slope (~3), 1 % of
    # Fmax at full activation (measured with random activations: 0.16 %).
    fmax = model.musculoskeletal.max_isometric_forces
    assert np.all(np.abs(tendon - result["tendon_forces"]) <= 0.01 * fmax)
    # OpenSim's accelerations (controls applied) in trajopt's implicit dynamics: the unactuated pelvis rows
    # and the lumbar row (no muscle) vanish to round-off; joint rows carry only the path-surrogate torques.
    residual = np.asarray(model.implicit_dynamics.map(q.shape[0])(q.T, u.T, result["accelerations"].T, a.T, lumbar.T))
    exact = [model.coordinate_index(n) for n in ("pelvis_tilt", "pelvis_tx", "pelvis_ty", "lumbar")]
    assert np.abs(residual[exact]).max() < 1e-8 * scale
    # Per frame, bound the surrogate's torque error by 2 mm (over 3x the worst held-out moment-arm RMSE,
    # 0.59 mm) times the summed tendon forces, plus the tendon-force differences times a 6 cm moment arm.
    tendon_error = np.abs(tendon - result["tendon_forces"]).sum(axis=1)
    bound = 0.002 * np.abs(result["tendon_forces"]).sum(axis=1) + 0.06 * tendon_error
    assert np.all(np.abs(residual).max(axis=0) <= bound)


@pytest.mark.slow
def test_prediction_converges_from_reference_guess(model):
    from trajopt.examples.gait2d.main import solve_prediction

    gait, solution, _ = solve_prediction(50, 1.2, model=model)
    assert solution.status == "Solve_Succeeded"
    tx = gait.muscle_driven.q[model.coordinate_index("pelvis_tx")]
    displacement = solution.value(gait.problem.final(tx) - gait.problem.initial(tx))
    assert displacement / solution.duration == pytest.approx(1.2, abs=1e-4)
    # Moco (trajopt/examples/gait2d/moco/moco_walk2d_info.json) reached objective 0.13483 and final time 0.5016 s on
    # the same problem with OpenSim's geometric paths; trajopt's model differs only by the path surrogates.
    assert solution.objective == pytest.approx(0.13483, rel=0.03)
    assert solution.duration == pytest.approx(0.5016, abs=0.01)


def test_tolerance_reaches_ipopt_and_bad_values_are_refused(capsys):
    """--tolerance sets IPOPT's convergence and constraint tolerance (Moco's 1e-4 by default); bad values and
    --tracking with it are argparse's one-line errors."""
    from trajopt.examples.gait2d.main import main, solver_settings

    assert {k: solver_settings().nlpsol_options(False)["ipopt"][k] for k in ("tol", "constr_viol_tol")} == \
        {"tol": 1e-4, "constr_viol_tol": 1e-4}
    assert {k: solver_settings(tolerance=1e-8).nlpsol_options(False)["ipopt"][k] for k in ("tol", "constr_viol_tol")} \
        == {"tol": 1e-8, "constr_viol_tol": 1e-8}
    for argv, message in ((["--tolerance", "0"], "need 0 < --tolerance < 1, got 0.0"),
                          (["--tracking", "--tolerance", "1e-8"], "apply to the prediction, not to --tracking"),
                          (["--tracking", "--compiled"], "apply to the prediction, not to --tracking")):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2 and message in capsys.readouterr().err


def test_compiled_option_reaches_the_solver_settings(monkeypatch, tmp_path):
    """--compiled asks for the compiled, cached NLP functions (trajopt.core.ocp.compiled); off by default."""
    import trajopt.examples.gait2d.main as gait2d_main

    calls = []
    monkeypatch.setattr(gait2d_main, "run", lambda *args, **options: calls.append(args) or {"success": True})
    assert gait2d_main.main(["--compiled", "--out", str(tmp_path)]) == 0
    assert gait2d_main.main(["--out", str(tmp_path)]) == 0
    assert [call[-1] for call in calls] == [True, False]
    assert gait2d_main.solver_settings(compiled=True).compiled and not gait2d_main.solver_settings().compiled


def test_solver_option_reaches_the_run_and_is_refused_with_tracking(monkeypatch, tmp_path, capsys):
    """--solver picks the prediction's route (mesh continuation by default); with --tracking it is refused."""
    import trajopt.examples.gait2d.main as gait2d_main

    routes = []
    monkeypatch.setattr(gait2d_main, "run", lambda *args, route, **options: routes.append(route) or {"success": True})
    assert gait2d_main.main(["--out", str(tmp_path)]) == 0
    assert gait2d_main.main(["--solver", "ipopt", "--out", str(tmp_path)]) == 0
    assert routes == [gait2d_main.SolverRoute.MESH_CONTINUATION, gait2d_main.SolverRoute.IPOPT]
    with pytest.raises(SystemExit) as stop:
        gait2d_main.main(["--tracking", "--solver", "ipopt"])
    assert stop.value.code == 2 and "--solver" in capsys.readouterr().err


def test_elastic_tendons_option_reaches_the_run_and_is_refused_with_tracking(monkeypatch, tmp_path, capsys):
    """--elastic-tendons asks run() for compliant tendons; with --tracking or --mirror-excitations it is refused."""
    import trajopt.examples.gait2d.main as gait2d_main

    calls = []
    monkeypatch.setattr(gait2d_main, "run", lambda *args, **options: calls.append(args) or {"success": True})
    assert gait2d_main.main(["--elastic-tendons", "--out", str(tmp_path)]) == 0
    assert calls[0][-2] is True
    for argv in (["--tracking", "--elastic-tendons"], ["--mirror-excitations", "--elastic-tendons"]):
        with pytest.raises(SystemExit) as stop:
            gait2d_main.main(argv)
        assert stop.value.code == 2 and "--elastic-tendons" in capsys.readouterr().err


def test_elastic_tendon_prediction_mirrors_tendon_forces(model):
    """build_problem(tendons=ELASTIC_TENDONS): tendon-force states whose end values are mirrored like the activations,
    and a guess in fiber-tendon equilibrium with the reference motion."""
    from trajopt.examples.gait2d.prediction import ELASTIC_TENDONS, build_problem

    gait = build_problem(intervals=3, model=model, tendons=ELASTIC_TENDONS)
    built = gait.muscle_driven
    assert built.normalized_tendon_forces.numel() == len(model.muscle_names)
    compiled = gait.problem.compile()
    group = next(g for g in compiled.endpoint_groups if g.name == "symmetry tendon forces")
    # f̃T(tf) - mirrored f̃T(t0): hamstrings_r at the end against hamstrings_l at the start
    x0, xf = compiled.symbols["x0"], compiled.symbols["xf"]
    row = group.labels.index("symmetry hamstrings_r tendon force")
    start = model.muscle_names.index("hamstrings_l")
    tendon_rows = slice(x0.numel() - len(model.muscle_names), None)
    gradient = ca.Function("g", [x0, xf], [ca.jacobian(group.expression[row], ca.vertcat(x0, xf))])
    derivative = np.asarray(gradient(np.zeros(x0.numel()), np.zeros(xf.numel()))).ravel()
    n = x0.numel()
    assert derivative[tendon_rows][start] == -1.0
    assert derivative[n:][tendon_rows][model.muscle_names.index("hamstrings_r")] == 1.0
    assert np.count_nonzero(derivative) == 2
    guess = gait.reference_guess()
    states = {v.name: v for v in compiled.states}
    forces = guess.values_of(states["normalized_tendon_forces"])
    # activations 0.05 along the reference walk: light forces that follow the motion (measured 0.026 to 0.098),
    # not the problem's constant default guess 0.1
    assert np.all((forces > 0.01) & (forces < 0.2)) and np.ptp(forces, axis=0).max() > 0.02
