"""trajopt.studies.prediction: muscle-driven problems from a MusculoskeletalModel (arm26, tiny grids)."""


import casadi as ca
import numpy as np
import pytest

from trajopt.errors import TrajoptInputError
from trajopt.model.io import read_table, write_sto
from trajopt.core.multibody import body_torque, forward_dynamics, frame_jacobian
from trajopt.model.musculoskeletal import MusculoskeletalModel
from trajopt.core.ocp import Effort, Endpoint, Guess, HermiteSimpson, Ipopt, Radau, Residuals
from trajopt.model.paths.polynomial import PolynomialPaths
from trajopt.studies.prediction import (
    OPENSIM_ACTIVATION_SMOOTHING,
    ExplicitDynamics,
    ImplicitDynamics,
    StateBounds,
    VariableLabels,
    VariableScales,
    muscle_driven_problem,
)



def _flexion(model, dynamics, intervals=10, scales=VariableScales()):
    """Moco's reaching problem (rest at q = 0 to rest at elbow 90°, ∫ Σ e²) on a small grid."""
    built = muscle_driven_problem(
        model, 0.5, coordinates=StateBounds(initial=[0.0, 0.0], final=[0.0, np.pi / 2]),
        speeds=StateBounds((-20.0, 20.0), initial=0.0, final=0.0), activations=StateBounds((0.0, 1.0), initial=0.0),
        activation_smoothing=OPENSIM_ACTIVATION_SMOOTHING, dynamics=dynamics, scales=scales)
    built.problem.minimize(Effort(built.excitations))
    guess = Guess([0.0, 0.5]).set(built.q, [[0.0, 0.0], [0.0, np.pi / 2]])
    return built, built.problem.solve(HermiteSimpson(intervals), Ipopt(tol=1e-8), guess=guess)


def test_variables_are_labelled_by_the_model(arm26_model):
    built = muscle_driven_problem(arm26_model, 0.5, residuals=Residuals(max_control=1.0))
    built.problem.minimize(Effort(built.excitations))
    compiled = built.problem.compile()
    names = {v.name: v.labels for v in compiled.states + compiled.controls}
    # arm26.osim's joints: r_shoulder owns r_shoulder_elev, r_elbow owns r_elbow_flex (OpenSim's state paths).
    assert names["q"] == ("/jointset/r_shoulder/r_shoulder_elev/value", "/jointset/r_elbow/r_elbow_flex/value")
    assert names["u"] == ("/jointset/r_shoulder/r_shoulder_elev/speed", "/jointset/r_elbow/r_elbow_flex/speed")
    assert names["activations"][3] == "BIClong_activation"
    assert names["excitations"][5] == "BRA_excitation"
    assert names["residuals"] == ("r_shoulder_elev_residual", "r_elbow_flex_residual")
    # Default coordinate bounds are the .osim ranges.
    q = [v for v in compiled.states if v.name == "q"][0]
    assert q.upper[1] == pytest.approx(2.26892803)


def test_generalized_forces_are_moment_arms_times_tendon_forces_plus_residuals(arm26_model):
    built = muscle_driven_problem(arm26_model, 0.5, residuals=Residuals(optimal_force=3.0, max_control=1.0))
    f = ca.Function("f", [built.q, built.u, built.activations, built.residuals],
                    [built.generalized_forces, built.tendon_forces])
    q, u, a, r = np.array([0.1, 1.0]), np.array([0.5, -1.0]), np.linspace(0.1, 0.6, 6), np.array([0.2, -0.4])
    tau, forces = (np.asarray(x).flatten() for x in f(q, u, a, r))
    _, _, arms = arm26_model.musculotendon_kinematics(q, u)
    np.testing.assert_allclose(tau, np.asarray(arms).T @ forces + 3.0 * r, rtol=1e-12, atol=1e-10)


def test_explicit_and_implicit_dynamics_give_the_same_optimum(arm26_model):
    explicit, first = _flexion(arm26_model, ExplicitDynamics())
    implicit, second = _flexion(arm26_model, ImplicitDynamics())
    assert first.success and second.success
    assert second.objective == pytest.approx(first.objective, rel=1e-6)
    np.testing.assert_allclose(second.value(implicit.q), first.value(explicit.q), atol=1e-5)


def test_implicit_accelerations_equal_forward_dynamics_along_the_solution(arm26_model):
    built, solution = _flexion(arm26_model, ImplicitDynamics())
    np.testing.assert_allclose(solution.value(built.accelerations), solution.value(built.explicit_accelerations),
                               atol=1e-5)


def test_resimulation_drift_shrinks_with_the_mesh(arm26_model):
    drifts = []
    for intervals in (10, 40):
        built, solution = _flexion(arm26_model, ImplicitDynamics(), intervals)
        drifts.append(built.resimulate(solution).max_drift)
    # Two mesh halvings: at least second-order convergence (Hermite-Simpson is 4th order for smooth
    # solutions; the fast activation onset at t = 0 lowers the observed order on coarse meshes).
    assert drifts[1] < drifts[0] / 16


def test_resimulation_matches_an_independent_integration(arm26_model):
    """``resimulate`` against scipy's solve_ivp of dynamics written out here: q' = u, u' = forward dynamics under
    the muscles' generalized forces, and De Groote et al. 2016's activation dynamics (eqs. 1-2, each muscle's
    time constants from arm26.osim, tanh smoothing b): a' = (f / (τa (0.5 + 1.5 a)) + (1 - f)(0.5 + 1.5 a) / τd)(e - a),
    f = 0.5 + 0.5 tanh(b (e - a)); excitations interpolated as the Hermite-Simpson transcription represents them."""
    from scipy.integrate import solve_ivp

    built, solution = _flexion(arm26_model, ExplicitDynamics())
    mb = arm26_model.multibody
    transcription = solution.discrete.transcription
    e_grid = solution.value(built.excitations)
    b = OPENSIM_ACTIVATION_SMOOTHING
    tau_a = np.array([m.parameters.activation_time_constant for m in arm26_model.muscles])  # 0.01 s in arm26.osim
    tau_d = np.array([m.parameters.deactivation_time_constant for m in arm26_model.muscles])  # 0.04 s

    def excitation(t):
        weights = transcription.interpolation(np.array([t / solution.duration]), controls=True,
                                              interval=min(int(t / solution.duration * transcription.intervals),
                                                           transcription.intervals - 1))[:, 0]
        return e_grid @ weights

    def rhs(t, x):
        q, u, a = x[:2], x[2:4], x[4:]
        e = excitation(t)
        tau = np.asarray(arm26_model.muscle_generalized_forces(a, q, u)).ravel()
        udot = np.asarray(forward_dynamics(mb, q, u, tau)).ravel()
        f = 0.5 + 0.5 * np.tanh(b * (e - a))
        z = 0.5 + 1.5 * a
        return np.concatenate([u, udot, (f / (tau_a * z) + (1 - f) * z / tau_d) * (e - a)])

    x0 = np.concatenate([solution.value(built.q)[:, 0], solution.value(built.u)[:, 0],
                         solution.value(built.activations)[:, 0]])
    mesh = np.linspace(0.0, solution.duration, transcription.intervals + 1)
    independent, state = [x0], x0
    for start, end in zip(mesh[:-1], mesh[1:]):  # piecewise: the controls' interpolation changes at mesh points
        points = solution.time[(solution.time > start + 1e-12) & (solution.time <= end + 1e-12)]
        run = solve_ivp(rhs, (start, end), state, rtol=1e-10, atol=1e-10, t_eval=np.clip(points, start, end))
        independent += list(run.y.T)
        state = run.y[:, -1]
    independent = np.array(independent).T
    ours = built.resimulate(solution, rtol=1e-10, atol=1e-10).simulated_states
    assert np.abs(ours - independent).max() <= 1e-12  # measured 4.5e-15: the same RK45 steps on the same physics
    # and the re-simulation is not trivially the optimized trajectory: the transcription's error is visible
    assert np.abs(ours - np.vstack([solution.value(built.q), solution.value(built.u),
                                    solution.value(built.activations)])).max() > 1e-5


def test_activation_controls_without_activation_dynamics(arm26_model):
    built = muscle_driven_problem(arm26_model, 0.3, coordinates=StateBounds(initial=[0.0, 1.0]),
                                  speeds=StateBounds(initial=0.0), activation_dynamics=False)
    assert built.excitations is None and built.activation_rates is None
    built.problem.minimize(Effort(built.activations))
    built.problem.require(built.problem.final(built.q[1]), lower=1.2)
    solution = built.problem.solve(Radau(2, 8), Ipopt(tol=1e-8))
    assert solution.success
    assert solution.value(built.problem.final(built.q[1])) >= 1.2 - 1e-6
    # Activations are controls: the state vector holds only q and u.
    assert solution.discrete.problem.symbols["x"].numel() == 4


def test_external_wrench_hook_equals_the_same_load_as_generalized_forces(arm26_model):
    """A torque on the forearm acts on the speeds as J^T w (virtual work)."""
    torque = np.array([0.3, -0.2, 1.5])
    forearm = "r_ulna_radius_hand"
    with_wrench = muscle_driven_problem(
        arm26_model, 0.5, external_wrenches=lambda problem, q, u: body_torque(arm26_model.multibody, forearm, torque))

    def projected(problem, q, u):
        jacobian = frame_jacobian(arm26_model.multibody, q, forearm)  # [angular; linear] x nv
        return ca.mtimes(jacobian[0:3, :].T, ca.DM(torque))

    with_forces = muscle_driven_problem(arm26_model, 0.5, extra_generalized_forces=projected)
    q, u, a = np.array([0.2, 0.8]), np.array([0.3, 0.4]), np.full(6, 0.2)
    first = ca.Function("a", [with_wrench.q, with_wrench.u, with_wrench.activations], [with_wrench.accelerations])
    second = ca.Function("a", [with_forces.q, with_forces.u, with_forces.activations], [with_forces.accelerations])
    np.testing.assert_allclose(np.asarray(first(q, u, a)), np.asarray(second(q, u, a)), rtol=1e-10)
    # And the hook changes the motion: without the torque the accelerations differ.
    plain = muscle_driven_problem(arm26_model, 0.5)
    third = ca.Function("a", [plain.q, plain.u, plain.activations], [plain.accelerations])
    assert np.max(np.abs(np.asarray(third(q, u, a)) - np.asarray(first(q, u, a)))) > 1e-3
    expected = forward_dynamics(arm26_model.multibody, q, u, np.asarray(
        arm26_model.muscle_generalized_forces(a, q, u)).flatten() + np.asarray(
        ca.Function("p", [with_forces.q], [projected(None, with_forces.q, None)])(q)).flatten())
    np.testing.assert_allclose(np.asarray(second(q, u, a)), np.asarray(expected), rtol=1e-10)


def test_bad_input_raises_trajopt_errors(arm26_model):
    with pytest.raises(TrajoptInputError, match=r"not a MuscleDrivenModel \(missing .*'muscles'"):
        muscle_driven_problem(arm26_model.multibody, 0.5)
    with pytest.raises(TrajoptInputError, match="extra_generalized_forces returned 3"):
        muscle_driven_problem(arm26_model, 0.5, extra_generalized_forces=lambda p, q, u: ca.SX.zeros(3))
    with pytest.raises(TrajoptInputError, match="external_wrenches returned shape"):
        muscle_driven_problem(arm26_model, 0.5, external_wrenches=lambda p, q, u: ca.SX.zeros(6, 1))
    with pytest.raises(TrajoptInputError, match="Residuals"):
        Residuals(optimal_force=0.0)
    with pytest.raises(TrajoptInputError, match="dynamics"):
        muscle_driven_problem(arm26_model, 0.5, dynamics="implicit")


def test_labels_scales_and_per_element_initial_bounds(arm26_model):
    """VariableLabels/VariableScales reach the declared variables; (lower, upper) arrays fix one coordinate at t0."""
    names = arm26_model.coordinate_names
    built = muscle_driven_problem(
        arm26_model, 0.5, coordinates=StateBounds((-1.0, 3.0), initial=(np.array([0.0, -1.0]), np.array([0.0, 3.0]))),
        dynamics=ImplicitDynamics(), scales=VariableScales(speeds=5.0, accelerations=50.0),
        labels=VariableLabels(coordinates=tuple(f"/{n}/value" for n in names),
                              accelerations=tuple(f"/{n}/accel" for n in names)), bound_by_path_domain=False)
    built.problem.minimize(Effort(built.excitations))
    compiled = built.problem.compile()
    q, u = compiled.states[0], compiled.states[1]
    assert q.labels == tuple(f"/{n}/value" for n in names) and u.labels == arm26_model.state_labels[1]
    assert compiled.algebraics[0].labels == tuple(f"/{n}/accel" for n in names)
    np.testing.assert_array_equal(u.scale, 5.0)
    np.testing.assert_array_equal(compiled.algebraics[0].scale, 50.0)
    assert q.scale is None
    np.testing.assert_array_equal(q.initial_lower, [0.0, -1.0])
    np.testing.assert_array_equal(q.initial_upper, [0.0, 3.0])


def test_solution_table_has_distinct_labels_and_its_speeds_read_back_from_sto(arm26_model, tmp_path):
    """No explicit labels: q and u get distinct OpenSim state paths, so a written .sto keeps every column."""
    built, solution = _flexion(arm26_model, ImplicitDynamics(), intervals=5)
    table = solution.table()
    assert len(set(table.labels)) == len(table.labels)
    written = read_table(write_sto(tmp_path / "solution.sto", table))
    assert written.labels == table.labels
    speeds = np.column_stack([written.column(f"/jointset/{joint}/{name}/speed")
                              for joint, name in (("r_shoulder", "r_shoulder_elev"), ("r_elbow", "r_elbow_flex"))])
    np.testing.assert_allclose(speeds, solution.value(built.u).T, rtol=1e-12, atol=1e-12)
    # Rest at both ends (the problem's bounds) and the elbow flexing in between: speed columns, not angles.
    np.testing.assert_allclose(speeds[[0, -1]], 0.0, atol=1e-12)
    assert speeds[:, 1].max() > 1.0


def test_scaling_does_not_change_the_optimum(arm26_model):
    _, plain = _flexion(arm26_model, ImplicitDynamics())
    _, scaled = _flexion(arm26_model, ImplicitDynamics(), scales=VariableScales(speeds=5.0, accelerations=50.0))
    assert plain.success and scaled.success
    assert scaled.objective == pytest.approx(plain.objective, rel=1e-6)


def test_hand_built_model_goes_through_the_builder():
    """A model that is no .osim (trajopt/examples/shoulder_reaching's quaternion arm) satisfies the MuscleDrivenModel
    protocol: the builder's generalized forces are the arm's own, and the quaternion rates get k (1 - |Q|^2) Q only
    off unit norm."""
    from trajopt.core.multibody import coordinate_rates
    from trajopt.model.musculoskeletal import MuscleDrivenModel
    from trajopt.examples.shoulder_reaching.model import shoulder_arm

    arm = shoulder_arm()
    assert isinstance(arm, MuscleDrivenModel)
    built = muscle_driven_problem(arm, 0.5, quaternion_norm_stabilization=50.0)
    rng = np.random.default_rng(3)
    quaternion = rng.normal(size=4)
    q = np.append(quaternion / np.linalg.norm(quaternion), 0.7)
    u, a = rng.normal(size=arm.multibody.nv), rng.uniform(0.0, 1.0, len(arm.muscles))
    tau = ca.Function("tau", [built.q, built.u, built.activations], [built.generalized_forces])
    np.testing.assert_allclose(np.asarray(tau(q, u, a)).ravel(),
                               np.asarray(arm.muscle_forces(a, q, u)[1]).ravel(), rtol=1e-12, atol=1e-12)
    built.problem.minimize(Effort(built.excitations))
    compiled = built.problem.compile()
    x = np.concatenate([q, u, a])
    controls = np.full(len(arm.muscles), 0.1)
    exact = np.asarray(coordinate_rates(arm.multibody, q, u)).ravel()
    np.testing.assert_allclose(np.asarray(compiled.dynamics(0.0, x, controls, [], [])).ravel()[:5], exact, atol=1e-12)
    scaled = q.copy()
    scaled[:4] *= 1.1
    x[:5] = scaled
    expected = np.asarray(coordinate_rates(arm.multibody, scaled, u)).ravel()
    expected[:4] += 50.0 * (1.0 - 1.21) * scaled[:4]
    np.testing.assert_allclose(np.asarray(compiled.dynamics(0.0, x, controls, [], [])).ravel()[:5], expected,
                               atol=1e-12)


def _narrowed(arm26_model, elbow_limit):
    """arm26 with its paths said to hold only up to ``elbow_limit`` rad of elbow flexion."""
    from trajopt.model.paths.domain import PathDomain

    paths = arm26_model.paths
    narrow = PathDomain.box(paths.domain.coordinates,
                            [[low, min(high, elbow_limit)] if name == "r_elbow_flex" else [low, high]
                             for name, (low, high) in zip(paths.domain.coordinates, paths.domain.ranges)])
    return MusculoskeletalModel(arm26_model.osim, PolynomialPaths(list(paths), paths.model, narrow))


def _reach_towards(model, elbow_target, bound_by_path_domain=True, intervals=8):
    """From rest at q = 0 to rest anywhere, pulled hard to ``elbow_target``: ∫ Σ e² + 100 (q_end - target)²."""
    built = muscle_driven_problem(
        model, 0.5, coordinates=StateBounds(initial=[0.0, 0.0]),
        speeds=StateBounds((-20.0, 20.0), initial=0.0, final=0.0), activations=StateBounds((0.0, 1.0), initial=0.0),
        activation_smoothing=OPENSIM_ACTIVATION_SMOOTHING, dynamics=ImplicitDynamics(),
        bound_by_path_domain=bound_by_path_domain)
    final = built.problem.final(built.q)
    built.problem.minimize(Effort(built.excitations) + 100.0 * Endpoint((final[1] - elbow_target) ** 2 + final[0] ** 2))
    guess = Guess([0.0, 0.5]).set(built.q, [[0.0, 0.0], [0.0, elbow_target]])
    return built, built.problem.solve(HermiteSimpson(intervals), Ipopt(tol=1e-8), guess=guess)


def test_a_reach_past_the_fitted_path_domain_stops_at_its_edge_by_default(arm26_model):
    """Pulled towards 90 deg of elbow flexion with paths said to hold up to 80 deg, the optimum is the domain's edge:
    the bound is active, the elbow ends at 80 deg and no frame is extrapolated. Unbounded (opt-out), it ends near 90
    deg and the report counts the frames past 80 deg, names the elbow and gives the largest excess and its time."""
    limit, target = np.radians(80.0), np.radians(90.0)
    narrowed = _narrowed(arm26_model, limit)
    built, solution = _reach_towards(narrowed, target)
    elbow = solution.value(built.q)[1]
    assert solution.success
    assert elbow[-1] == pytest.approx(limit, abs=1e-7) and elbow.max() <= limit + 1e-7
    report = built.path_domain_report(solution)
    assert report.declared and report.frames_outside == 0 and report.frames == len(solution.time)

    built, solution = _reach_towards(narrowed, target, bound_by_path_domain=False)
    elbow = solution.value(built.q)[1]
    assert solution.success and elbow[-1] > np.radians(88.0)
    report = built.path_domain_report(solution)
    assert report.frames_outside == int(np.sum(elbow > limit + 1e-6)) > 0  # beyond IPOPT's bound relaxation
    assert report.worst_coordinate == "r_elbow_flex"
    assert report.worst_excess == pytest.approx(elbow.max() - limit, abs=1e-12)
    assert report.worst_time == pytest.approx(solution.time[int(np.argmax(elbow))])
    assert built.path_domain_violation(solution) is not None


def test_a_fixed_end_outside_the_fitted_path_domain_is_refused(arm26_model):
    """Moco's reach ends at elbow 90 deg: with paths said to hold up to 80 deg it is refused before any solve
    (infeasible against the domain's bounds); the opt-out builds it."""
    narrowed = _narrowed(arm26_model, np.radians(80.0))
    with pytest.raises(TrajoptInputError):
        _flexion(narrowed, ImplicitDynamics(), intervals=6)
    muscle_driven_problem(narrowed, 0.5, coordinates=StateBounds(final=[0.0, np.pi / 2]), bound_by_path_domain=False)


def test_coordinate_bounds_are_the_model_ranges_within_the_path_domain(arm26_model):
    """The default bounds: each .osim range intersected with the fitted domain (arm26's paths were fitted on a
    narrower shoulder range than the .osim's); the opt-out keeps the .osim ranges."""
    lower, upper = (np.asarray(b) for b in arm26_model.coordinate_bounds)
    domain = arm26_model.paths.domain
    for bound, expected in ((True, (np.maximum(lower, domain.ranges[:, 0]), np.minimum(upper, domain.ranges[:, 1]))),
                            (False, (lower, upper))):
        built = muscle_driven_problem(arm26_model, 0.5, bound_by_path_domain=bound)
        built.problem.minimize(Effort(built.excitations))
        q = [v for v in built.problem.compile().states if v.name == "q"][0]
        np.testing.assert_array_equal(q.lower, expected[0])
        np.testing.assert_array_equal(q.upper, expected[1])
