"""Static optimization of arm26 against OpenSim 4.6's Static Optimization.

- Stored references (Thelen2003 muscles, trajopt/examples/arm26_static_optimization/reference/): without
  force-length-velocity both codes use force = activation × Fmax, so only the muscle paths
  (polynomial surrogate vs OpenSim's wrapping geometry) and OpenSim's loose IPOPT tolerance (1e-4)
  separate them; with force-length-velocity the curves differ (DeGroote vs Thelen): the measured
  differences (activations 0.061, reserves 0.0185 N·m) are asserted, as the main job's summary.md reports them.
- With opensim installed: arm26 with its muscles replaced by DeGrooteFregly2016Muscle (rigid
  tendon) in OpenSim's AnalyzeTool + StaticOptimization, against trajopt with the polynomial
  paths (trajopt/examples/arm26/paths.json): activations within 0.0045-0.0055, residuals within 0.0013-0.0018 N·m
  (about 1.2 times the measured differences).
- Bad input and frames the muscles cannot carry.
"""

import warnings

import numpy as np
import pytest

from conftest import ROOT
from trajopt.examples.arm26_static_optimization.main import (ELBOW_MOTION, IK_MOTION, REFERENCE, build_problem,
                                                             load_model)
from trajopt.model.paths.domain import PathDomainError
from trajopt.studies.analysis.frame_optimization import FrameGuess, Frames
from trajopt.studies.analysis.static_optimization import StaticOptimization, StaticOptimizationWarning
from trajopt.core.ocp import Residuals
from trajopt.errors import MotionFileError, TrajoptInputError
from trajopt.model.io import Table, read_motion, read_table

ARM26 = ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim"
ROTATIONAL = ("r_shoulder_elev", "r_elbow_flex")


@pytest.fixture(scope="module")
def model():
    return load_model()


@pytest.fixture(scope="module")
def elbow_flv(model):
    return build_problem(ELBOW_MOTION, model=model).solve()


def test_without_force_length_velocity_matches_opensim(model):
    result = build_problem(ELBOW_MOTION, force_length_velocity=False, model=model).solve()
    reference = read_table(REFERENCE / "SO_free_noFLV_activation.csv")
    np.testing.assert_allclose(result.times, reference.time, atol=1e-9)
    difference = np.abs(result.activations - reference.select(result.muscle_names).data).max()
    reserves = np.abs(result.residual_forces - reference.select(result.reserve_names).data).max()
    assert difference <= 0.0065, f"max |Δ activation| = {difference:.4f}"  # measured 0.0055
    assert reserves <= 0.002, f"max |Δ reserve| = {reserves:.4f} N·m"  # measured 0.0015
    assert np.abs(result.equality_error).max() <= 1e-6
    # force = activation × Fmax exactly
    np.testing.assert_allclose(result.muscle_forces, result.activations * model.max_isometric_forces, rtol=1e-12)


def test_with_force_length_velocity_against_opensim_thelen(elbow_flv):
    """OpenSim's stored run uses Thelen2003 curves, trajopt DeGroote 2016: activations differ by the curves' gap
    (measured max 0.0607, RMS 0.0162), reserves by 0.0185 N·m, muscle forces by 10.1 N (of up to ~400 N)."""
    result = elbow_flv
    activation = read_table(REFERENCE / "SO_free_FLV_activation.csv")
    force = read_table(REFERENCE / "SO_free_FLV_force.csv")
    assert result.success
    assert np.abs(result.equality_error).max() <= 1e-12  # measured 1.3e-15
    # activations stay at or above arm26's min_control (0.01), as OpenSim's
    assert result.activations.min() >= 0.01 - 1e-8
    da = result.activations - activation.select(result.muscle_names).data
    dr = result.residual_forces - activation.select(result.reserve_names).data
    df = result.muscle_forces - force.select(result.muscle_names).data
    assert np.abs(da).max() <= 0.065, f"max |Δ activation| = {np.abs(da).max():.4f}"  # measured 0.0607
    assert np.sqrt(np.mean(da**2)) <= 0.018, f"RMS Δ activation = {np.sqrt(np.mean(da**2)):.4f}"  # measured 0.0162
    assert np.abs(dr).max() <= 0.02, f"max |Δ reserve| = {np.abs(dr).max():.4f} N·m"  # measured 0.0185
    assert np.abs(df).max() <= 11.0, f"max |Δ force| = {np.abs(df).max():.2f} N"  # measured 10.10


def test_passive_force_lowers_reserve_free_activations_where_it_helps(model, elbow_flv):
    """With passive fiber force the stretched muscles carry load for free: same equality, other split."""
    passive = build_problem(ELBOW_MOTION, passive_force=True, model=model).solve()
    assert np.abs(passive.equality_error).max() <= 1e-6
    quantities = model.muscle_quantities(passive.activations, passive.inverse_dynamics.kinematics.q,
                                         passive.inverse_dynamics.kinematics.u)
    # muscle force = active + passive along the tendon (rigid tendon, DeGroote curves)
    np.testing.assert_allclose(passive.muscle_forces, quantities["tendon_force"], rtol=1e-9, atol=1e-9)
    assert np.any(quantities["passive_fiber_force"] > 1.0)
    assert not np.allclose(passive.activations, elbow_flv.activations, atol=1e-3)


def test_batched_and_sequential_solves_agree(model, elbow_flv):
    sequential = build_problem(ELBOW_MOTION, model=model).solve(Frames(batched=False))
    np.testing.assert_allclose(sequential.activations, elbow_flv.activations, atol=1e-7)
    np.testing.assert_allclose(sequential.residual_forces, elbow_flv.residual_forces, atol=1e-7)


def _objective(result):
    """Σ a² + Σ e², the objective with the default exponent and unit reserve weights."""
    return float(np.sum(result.activations ** 2) + np.sum(result.residual_controls ** 2))


def test_a_solve_started_from_its_own_solution_stays_there(model, elbow_flv):
    """IPOPT started at the optimum (the guess) converges in a few iterations to the same optimum."""
    restarted = build_problem(ELBOW_MOTION, model=model).solve(guess=elbow_flv)
    assert restarted.success and elbow_flv.iterations >= 10
    assert restarted.iterations <= 5
    assert _objective(restarted) == pytest.approx(_objective(elbow_flv), rel=1e-9)
    np.testing.assert_allclose(restarted.activations, elbow_flv.activations, atol=1e-6)


def test_a_guess_of_another_problem_still_reaches_this_optimum(model, elbow_flv):
    """The guess is only where IPOPT starts: the activations of the problem without force-length-velocity, every
    frame's reserves 0, lead to the optimum of the problem with it."""
    rng = np.random.default_rng(3)
    other = build_problem(ELBOW_MOTION, force_length_velocity=False, model=model).solve()
    started = build_problem(ELBOW_MOTION, model=model).solve(
        guess=FrameGuess(other.activations + rng.uniform(0.0, 0.05, other.activations.shape)))
    assert started.success
    assert _objective(started) == pytest.approx(_objective(elbow_flv), rel=1e-9)
    np.testing.assert_allclose(started.activations, elbow_flv.activations, atol=1e-6)


def test_a_guess_of_the_wrong_shape_is_refused_in_one_line(model, elbow_flv):
    with pytest.raises(TrajoptInputError, match=r"^static optimization guess: activations have shape \(100, 6\)"):
        build_problem(ELBOW_MOTION, model=model).solve(guess=FrameGuess(elbow_flv.activations[1:]))


def test_write_produces_opensim_style_tables(elbow_flv, tmp_path):
    elbow_flv.write(tmp_path, "so")
    activation = read_table(tmp_path / "so_activation.sto")
    assert activation.labels == elbow_flv.muscle_names + ("reserve_r_shoulder_elev", "reserve_r_elbow_flex")
    np.testing.assert_array_equal(activation.data[:, :6], elbow_flv.activations)
    force = read_table(tmp_path / "so_force.sto")
    np.testing.assert_array_equal(force.data[:, :6], elbow_flv.muscle_forces)
    for name in ("so_residuals.sto", "so_equality_error.sto", "so_inverse_dynamics_joint_reactions.sto"):
        assert (tmp_path / name).exists()


def test_frames_the_muscles_cannot_carry_are_reported(model):
    """Elbow 0 -> 90 deg in 50 ms needs far more torque than arm26's muscles give: large residuals, warned."""
    time = np.linspace(0.0, 0.05, 51)
    s = time / 0.05
    elbow = np.pi / 2 * (10 * s**3 - 15 * s**4 + 6 * s**5)
    fast = Table(time, ROTATIONAL, np.column_stack([np.zeros_like(time), elbow]), source="fast.mot")
    problem = StaticOptimization(model, fast, residuals=Residuals(warn_above=1.0), passive_force=False)
    with pytest.warns(StaticOptimizationWarning,
                      match=r"cannot produce the load.*reserve_r_elbow_flex up to") as record:
        result = problem.solve()
    frames = np.array(result.frames_needing_residuals)
    assert frames.size > 10
    assert str(len(frames)) in str(record[0].message)
    worst = np.abs(result.residual_forces).max(axis=1)
    assert worst.max() > 20.0
    # every frame with a residual above the threshold is listed
    assert set(np.flatnonzero(worst > 1.0)) <= set(frames.tolist())
    assert np.abs(result.equality_error).max() <= 1e-6


def test_motion_missing_a_coordinate_names_it(model):
    motion = read_motion(ELBOW_MOTION, rotational=ROTATIONAL)
    renamed = Table(motion.time, ("r_shoulder_elev", "elbow"), motion.data, source="renamed.mot")
    with pytest.raises(MotionFileError, match=r"renamed.mot: missing coordinate columns \['r_elbow_flex'\]"):
        StaticOptimization(model, renamed)


def test_nan_in_motion_is_rejected(model):
    motion = read_motion(ELBOW_MOTION, rotational=ROTATIONAL)
    data = motion.data.copy()
    data[3, 0] = np.nan
    with pytest.raises(MotionFileError, match="column 'r_shoulder_elev' is nan at row 3"):
        StaticOptimization(model, Table(motion.time, motion.labels, data, source="nan.mot"))


@pytest.mark.opensim
@pytest.mark.parametrize("motion, cutoff, flv, activation_tolerance, reserve_tolerance", [
    (ELBOW_MOTION, None, True, 0.0045, 0.0013),  # measured 0.0038, 0.0011 N·m (README's headline)
    (ELBOW_MOTION, None, False, 0.0055, 0.0018),  # measured 0.0046, 0.0015
    (IK_MOTION, 6.0, True, 0.005, 0.0017)])  # measured 0.0043, 0.0014
def test_degroote_static_optimization_matches_opensim(opensim_task, model, motion, cutoff, flv, activation_tolerance,
                                                      reserve_tolerance):
    """OpenSim: arm26, muscles replaced by DeGrooteFregly2016Muscle (ignore_tendon_compliance),
    reserves 1 N·m, exponent 2, tolerance 1e-8; trajopt: polynomial paths, passive force off
    (OpenSim's SO never includes it)."""
    reference = opensim_task("osim_static_optimization", {
        "model": str(ARM26), "motion": str(motion), "lowpass_cutoff": -1.0 if cutoff is None else cutoff,
        "degroote": True, "use_muscle_physiology": flv, "reserve_optimal_force": 1.0,
        "convergence_criterion": 1e-8, "max_iterations": 1000})
    with warnings.catch_warnings():
        warnings.simplefilter("error", StaticOptimizationWarning)
        result = build_problem(motion, force_length_velocity=flv, cutoff_frequency=cutoff, model=model).solve()
    np.testing.assert_allclose(result.times, reference["times"], atol=1e-9)
    labels = list(reference["labels"])
    ours = result.activations_table()
    activations = reference["activations"][:, [labels.index(m) for m in result.muscle_names]]
    reserves = reference["forces"][:, [labels.index(r) for r in result.reserve_names]]
    da = np.abs(ours.select(result.muscle_names).data - activations).max()
    dr = np.abs(result.residual_forces - reserves).max()
    assert da <= activation_tolerance, f"max |Δ activation| = {da:.4f}"
    assert dr <= reserve_tolerance, f"max |Δ residual| = {dr:.4f} N·m"
    assert np.abs(result.equality_error).max() <= 1e-12


@pytest.mark.slow
def test_main_job_runs_another_motion(tmp_path):
    from trajopt.examples.arm26_static_optimization.main import main

    assert main(["--motion", str(IK_MOTION), "--cutoff", "6", "--out", str(tmp_path)]) == 0
    activation = read_table(tmp_path / "SO_FLV_activation.sto")
    assert activation.num_frames == 121
    assert (tmp_path / "figures" / "activations.png").exists()
    assert "FLV + passive" in (tmp_path / "summary.md").read_text()


def test_main_job_reference_run_writes_summary_against_opensim(tmp_path):
    from trajopt.examples.arm26_static_optimization.main import main

    assert main(["--no-opensim", "--out", str(tmp_path)]) == 0
    summary = (tmp_path / "summary.md").read_text()
    assert "| elbow, no FLV, no passive | 101 |" in summary
    for figure in ("fig13_inverse_dynamics", "fig14_activations_noFLV", "fig19_residuals", "fig20_joint_reactions"):
        assert (tmp_path / "figures" / f"{figure}.png").exists()


def test_minimum_activation_and_exponent_options(model):
    """Lower bound 0 instead of arm26's min_control 0.01 lets idle muscles switch off; p = 3 still balances."""
    free = StaticOptimization(model, ELBOW_MOTION, minimum_activation=0.0, passive_force=False).solve()
    assert free.activations.min() < 1e-6
    assert free.activations.min() >= -1e-9
    cubic = StaticOptimization(model, ELBOW_MOTION, activation_exponent=3, passive_force=False).solve()
    assert cubic.success and np.abs(cubic.equality_error).max() <= 1e-6
    square = StaticOptimization(model, ELBOW_MOTION, passive_force=False).solve()
    # a higher exponent spreads load: the largest activation drops
    assert cubic.activations.max() < square.activations.max()


def test_motion_outside_the_path_domain_is_refused(model):
    """trajopt/examples/arm26/paths.json was fitted for shoulder elevation up to 25 deg; 60 deg is refused, naming the
    coordinate, frame and value (never extrapolated with a warning)."""
    motion = read_motion(ELBOW_MOTION, rotational=ROTATIONAL)
    data = motion.data.copy()
    data[:, 0] = np.radians(60.0)
    raised = Table(motion.time, motion.labels, data, source="raised.mot")
    with pytest.raises(PathDomainError, match=r"raised.mot: coordinate 'r_shoulder_elev' = 1.0472 at frame 0 "
                                              r"\(t = 0 s\) is outside .*101 of 101 frames"):
        StaticOptimization(model, raised)
