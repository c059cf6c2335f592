"""trajopt.studies.prediction.tendon_dynamics in muscle-driven predictions: rigid default, elastic tendons (arm26, tiny
grids)."""


import casadi as ca
import numpy as np
import pytest

from trajopt.errors import TrajoptInputError
from trajopt.studies.gait.guess import guess_from_coordinates
from trajopt.core.muscles import DEGROOTE2016_PUBLISHED, ElasticTendonMuscle, tendon_force_length_degroote2016
from trajopt.core.ocp import Effort, Guess, HermiteSimpson, Ipopt, Residuals
from trajopt.studies.prediction import (
    OPENSIM_ACTIVATION_SMOOTHING,
    ImplicitDynamics,
    StateBounds,
    muscle_driven_problem,
    resimulate,
)
from trajopt.studies.prediction.tendon_dynamics import (
    PREDSIM_TENDON_STIFFNESS,
    ElasticTendons,
    RigidTendons,
    tendon_strain_at_stiffness,
)

MIN_ACTIVATION = 0.01  # arm26's muscles have no fiber damping: the explicit tendon dynamics need a > 0


def _flexion(model, tendons=None, intervals=10):
    """Moco's reaching problem (rest at q = 0 to rest at elbow 90°, ∫ Σ e²), activations >= 0.01, starting at rest
    (elastic tendons: df̃T/dt = 0 at t = 0)."""
    options = {} if tendons is None else {"tendons": tendons}
    built = muscle_driven_problem(
        model, 0.5, coordinates=StateBounds(initial=[0.0, 0.0], final=[0.0, np.pi / 2]),
        speeds=StateBounds((-20.0, 20.0), initial=0.0, final=0.0),
        activations=StateBounds((MIN_ACTIVATION, 1.0), initial=MIN_ACTIVATION),
        excitation_bounds=(MIN_ACTIVATION, 1.0), activation_smoothing=OPENSIM_ACTIVATION_SMOOTHING,
        dynamics=ImplicitDynamics(), **options)
    built.problem.minimize(Effort(built.excitations))
    if built.normalized_tendon_force_derivatives is not None:
        built.problem.require(built.problem.initial(built.normalized_tendon_force_derivatives), equals=0.0,
                              name="initial tendon equilibrium")
    guess = Guess([0.0, 0.5]).set(built.q, [[0.0, 0.0], [0.0, np.pi / 2]])
    return built, built.problem.solve(HermiteSimpson(intervals), Ipopt(tol=1e-8), guess=guess)


@pytest.fixture(scope="module")
def elastic_flexion(arm26_model):
    return _flexion(arm26_model, ElasticTendons())


def test_rigid_tendons_are_the_default_and_add_nothing(arm26_model):
    default, solution = _flexion(arm26_model)
    explicit, same = _flexion(arm26_model, RigidTendons())
    assert default.normalized_tendon_forces is None and default.normalized_tendon_force_derivatives is None
    assert [v.name for v in default.problem.compile().states] == ["q", "u", "activations"]
    # measured: 0.04324064961619979 on main before elastic tendons existed and here (bit for bit, 0x1.623a36feb32f2p-5)
    assert same.objective == pytest.approx(solution.objective, abs=1e-10)
    assert solution.objective == pytest.approx(0.04324064961619979, abs=1e-10)
    # fiber length along the tendon + slack length = musculotendon length (rigid tendon; constant fiber width)
    lengths = solution.value(default.tendons.musculotendon_lengths)
    slack = np.array([m.parameters.tendon_slack_length for m in arm26_model.muscles])[:, None]
    width = np.array([m.parameters.fiber_width for m in arm26_model.muscles])[:, None]
    along = np.sqrt(solution.value(default.fiber_lengths) ** 2 - width**2)
    assert np.max(np.abs(along + slack - lengths)) <= 1e-12


def test_elastic_equilibrium_holds_at_every_grid_point(arm26_model, elastic_flexion):
    built, solution = elastic_flexion
    assert solution.success
    a, f, rate = (solution.value(x) for x in (built.activations, built.normalized_tendon_forces,
                                             built.normalized_tendon_force_derivatives))
    lengths, speeds = (solution.value(x) for x in (built.tendons.musculotendon_lengths,
                                                   built.tendons.lengthening_speeds))
    tendon = solution.value(built.tendon_forces)
    for k, muscle in enumerate(arm26_model.muscles):
        unit = ElasticTendonMuscle(muscle.parameters, muscle.constants)  # arm26's strain: no override
        along = np.asarray(unit.quantities.map(a.shape[1])(a[k], lengths[k], speeds[k], f[k], rate[k])[4]).ravel()
        # fiber force along the tendon = the tendon force the multibody gets, at mesh points and midpoints
        assert np.max(np.abs(along - tendon[k])) <= 1e-9 * muscle.parameters.max_isometric_force  # measured 1.8e-12
    fiber_speed = solution.value(built.fiber_velocities)
    # the compliant tendon takes part of the stretch: fiber velocity != rigid tendon's v_MT cos(alpha) = v_MT
    assert np.max(np.abs(fiber_speed - speeds)) > 1e-2  # measured 0.023 m/s


def test_stiff_tendons_approach_the_rigid_optimum(arm26_model):
    stiff = ElasticTendons(derivative_weight=0.0, tendon_strain={m: 0.00049 for m in arm26_model.muscle_names})
    built, solution = _flexion(arm26_model, stiff)
    rigid_built, rigid = _flexion(arm26_model)
    assert solution.success
    # measured: 0.04324013 vs rigid 0.04324065 (1.2e-5 relative), q within 4.4e-4 rad, activations within 4.0e-4;
    # tendon strain 0.00049, 67x below arm26's 0.033
    assert solution.objective == pytest.approx(rigid.objective, rel=1e-4)
    assert np.max(np.abs(solution.value(built.q) - rigid.value(rigid_built.q))) < 1e-3
    assert np.max(np.abs(solution.value(built.activations) - rigid.value(rigid_built.activations))) < 1e-3


@pytest.mark.slow
def test_resimulation_integrates_the_equilibrium(arm26_model, elastic_flexion):
    built, solution = elastic_flexion
    local = resimulate(built, solution, restart_each_interval=True)
    rows = slice(2 * arm26_model.multibody.nv + len(arm26_model.muscles), None)  # q, u, activations, then f̃T
    assert local.labels[rows][0] == "/forceset/TRIlong/normalized_tendon_force"
    # local error of 10 Hermite-Simpson intervals: measured 2.2e-3 in f̃T, 4.1e-4 rad in q (rigid tendons: 2.3e-3 rad)
    assert local.max_drift_in(rows) < 5e-3
    assert local.max_drift_in(slice(0, 2)) < 1e-3
    finer, fine_solution = _flexion(arm26_model, ElasticTendons(), intervals=40)
    fine = resimulate(finer, fine_solution, restart_each_interval=True)
    assert fine.max_drift_in(rows) < local.max_drift_in(rows) / 6  # 40 intervals: measured 2.2e-4, ratio 10


def test_isometric_tendon_force_is_the_muscle_equilibrium(arm26_model, opensim_task):
    """Held posture and activation 0.3: the solved f̃T is ElasticTendonMuscle's equilibrium (bisection) and
    OpenSim's (DeGrooteFregly2016Muscle on a slider, equilibrateMuscles) at the same musculotendon length."""
    pose = np.array([0.3, 1.2])
    built = muscle_driven_problem(
        arm26_model, 0.1, coordinates=StateBounds((pose, pose)), speeds=StateBounds((0.0, 0.0)),
        activations=StateBounds((0.3, 0.3)), excitation_bounds=(0.3, 0.3), dynamics=ImplicitDynamics(),
        residuals=Residuals(optimal_force=100.0, max_control=10.0), tendons=ElasticTendons())
    # at rest from t = 0 (df̃T/dt(0) = 0): the equilibrium then pins f̃T for all t whatever the residual effort wants
    built.problem.require(built.problem.initial(built.normalized_tendon_force_derivatives), equals=0.0)
    built.problem.minimize(Effort(built.residuals))
    solution = built.problem.solve(HermiteSimpson(4), Ipopt(tol=1e-10))
    assert solution.success
    forces = solution.value(built.normalized_tendon_forces)
    lengths = np.asarray(arm26_model.musculotendon_kinematics(pose, np.zeros(2))[0]).ravel()
    ours = np.array([unit.equilibrium_normalized_tendon_force(0.3, length, 0.0)
                     for unit, length in zip(built.tendons.units, lengths)])
    assert np.max(np.abs(forces - ours[:, None])) <= 1e-8  # measured 1.4e-9 (IPOPT tol 1e-10)
    for muscle, length, force in zip(arm26_model.muscles, lengths, ours):
        p = muscle.parameters
        reference = opensim_task("degroote_muscle", dict(
            max_isometric_force=p.max_isometric_force, optimal_fiber_length=p.optimal_fiber_length,
            tendon_slack_length=p.tendon_slack_length, pennation_angle_at_optimal=p.optimal_pennation_angle,
            max_contraction_velocity=p.max_contraction_velocity,
            tendon_strain_at_one_norm_force=p.tendon_strain_at_one_norm_force,
            passive_fiber_strain_at_one_norm_force=p.passive_fiber_strain_at_one_norm_force,
            active_force_width_scale=p.active_force_width_scale, fiber_damping=p.fiber_damping,
            tendon_compliance="elastic", lengths=[length], speeds=[0.0], activations=[0.3]))
        # measured within 2.3e-10 relative (f̃T 0.25 to 0.30)
        assert reference["state_normalized_tendon_force"][0] == pytest.approx(force, rel=1e-8)


def test_guess_puts_tendon_forces_in_equilibrium(arm26_model):
    built = muscle_driven_problem(arm26_model, 0.5, tendons=ElasticTendons())
    time = np.linspace(0.0, 0.5, 11)
    q = np.column_stack([0.2 * np.ones(11), np.linspace(0.2, 1.5, 11)])
    guess = guess_from_coordinates(built, time, q, muscle_level=0.2)
    built.problem.minimize(Effort(built.excitations))
    states = {v.name: v for v in built.problem.compile().states}
    forces = guess.values_of(states["normalized_tendon_forces"])
    u = np.gradient(q, time, axis=0)
    lengths, speeds, _ = (np.asarray(x) for x in arm26_model.musculotendon_kinematics.map(11)(q.T, u.T))
    for k, unit in enumerate(built.tendons.units):
        residual = np.asarray(unit.equilibrium_residual.map(11)(0.2, lengths[k], speeds[k], forces[:, k], 0.0))
        assert np.max(np.abs(residual)) <= 1e-12


def test_tendon_stiffness_override_is_predsims_curve(arm26_model):
    """kT = 35 with the published constants is PredSim's tendon curve 0.2 exp(35 (l̃T - 0.995)) - 0.25
    (PredSim CasadiFunctions/ForceEquilibrium_FtildeState_all_tendon.m, shift 0 at kT = 35)."""
    strain = tendon_strain_at_stiffness(PREDSIM_TENDON_STIFFNESS, DEGROOTE2016_PUBLISHED)
    lengths = np.linspace(1.0, 1.05, 11)
    np.testing.assert_allclose(
        tendon_force_length_degroote2016(lengths, strain, DEGROOTE2016_PUBLISHED),
        0.2 * np.exp(35.0 * (lengths - 0.995)) - 0.25, rtol=0, atol=1e-13)
    units = ElasticTendons(tendon_stiffness={"BIClong": 17.5}, tendon_strain={"TRIlong": 0.06}).units(arm26_model)
    by_name = {u.name: u for u in units}
    # OpenSim's constants: kT = ln(6) / strain
    assert by_name["BIClong"].parameters.tendon_strain_at_one_norm_force == pytest.approx(np.log(6.0) / 17.5)
    assert by_name["TRIlong"].parameters.tendon_strain_at_one_norm_force == 0.06
    assert by_name["BRA"].parameters.tendon_strain_at_one_norm_force == 0.033  # arm26's own (Thelen FmaxTendonStrain)


def test_bad_tendon_input_raises(arm26_model):
    with pytest.raises(TrajoptInputError, match="'soleus_r', not a muscle"):
        muscle_driven_problem(arm26_model, 0.5, tendons=ElasticTendons(tendon_stiffness={"soleus_r": 17.5}))
    with pytest.raises(TrajoptInputError, match="both"):
        ElasticTendons(tendon_strain={"BRA": 0.05}, tendon_stiffness={"BRA": 30.0})
    with pytest.raises(TrajoptInputError, match="finite number > 0"):
        ElasticTendons(tendon_stiffness={"BRA": -1.0})
    with pytest.raises(TrajoptInputError, match="derivative_bounds"):
        ElasticTendons(derivative_bounds=(1.0, 2.0))
    with pytest.raises(TrajoptInputError, match="no quantity 'fibre_length'"):
        muscle_driven_problem(arm26_model, 0.5).muscle_quantity("fibre_length")
    assert isinstance(muscle_driven_problem(arm26_model, 0.5).muscle_quantity("active_fiber_force"), ca.SX)
