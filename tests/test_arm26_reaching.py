"""trajopt/examples/arm26_reaching: reaching, Moco's problem and bioptim's static_arm set-up (tiny grids by default)."""

import json
from pathlib import Path

import numpy as np
import pytest

from trajopt.examples.arm26_reaching import outputs, reaching, static_arm
from trajopt.model.io.tables import read_table
from trajopt.core.ocp import HermiteSimpson, Ipopt

DATA = Path(__file__).resolve().parent / "data" / "arm26_reaching"
MOCO_INFO = json.loads((DATA / "arm26_p2p_T0.5_info.json").read_text())


def test_moco_reference_settings_are_the_problem_built():
    """The .omoco's bounds and goal are what moco_problem declares."""
    text = (DATA / "arm26_p2p_T0.5.omoco").read_text()
    assert "<bounds>0.5</bounds>" in text and "<num_mesh_intervals>50</num_mesh_intervals>" in text
    assert "<final_bounds>1.5707963267948966</final_bounds>" in text and "MocoControlGoal" in text
    compiled = reaching.moco_problem().problem.compile()
    q = [v for v in compiled.states if v.name == "q"][0]
    np.testing.assert_allclose(q.lower, [-1.5707963267948966, 0.0])
    np.testing.assert_allclose(q.upper, [3.1415926535897931, 2.2689280275926285])
    np.testing.assert_allclose(q.final_upper, [0.0, 1.5707963267948966])
    assert [v.name for v in compiled.controls] == ["excitations"]  # no reserves


def test_reaching_puts_the_hand_on_target_at_rest():
    built, naive, warm, coarse = reaching.solve_pair(
        reaching.build_problem, lambda b: reaching.naive_guess(b, 0.5, reaching.START, reaching.hand_posture(
            reaching.DEFAULT_TARGET)), intervals=12, coarse_intervals=6)
    for solution in (naive, warm, coarse):
        assert solution.success, solution.status
    hand = warm.value(built.problem.final(built.marker_position(reaching.HAND)))
    np.testing.assert_allclose(hand[:2], reaching.DEFAULT_TARGET[:2], atol=1e-6)
    np.testing.assert_allclose(warm.value(built.problem.final(built.u)), 0.0, atol=1e-8)
    assert warm.objective == pytest.approx(naive.objective, rel=1e-3)
    assert warm.iterations <= naive.iterations


def test_moco_problem_costs_less_over_a_longer_duration():
    """Physics: the same flexion spread over more time needs less excitation (Moco: 0.03386 at 0.5 s, 0.0085 at 1 s)."""
    objectives = []
    for duration in (0.5, 1.0):
        built = reaching.moco_problem(duration=duration)
        solution = built.problem.solve(HermiteSimpson(10), Ipopt(tol=1e-6),
                                       guess=reaching.naive_guess(built, duration, (0, 0), (0, np.pi / 2)))
        assert solution.success
        objectives.append(solution.objective)
    assert objectives[1] < 0.5 * objectives[0]


def test_static_arm_setup_reaches_as_far_as_opensims_kinematics_say(opensim_task):
    """bioptim's static_arm set-up: the hand's final distance from the target, recomputed by OpenSim from the
    solution's final pose (body transforms of arm26.osim, the bioMod's COM_hand point and target marker), equals
    trajopt's; the hand ends much closer than it started (the target lies outside the reachable set)."""
    built = static_arm.static_arm_problem()
    assert built.excitations is None  # bioptim's muscle-driven dynamics: activations are controls
    solution = built.problem.solve(HermiteSimpson(10), Ipopt(tol=1e-6), guess=static_arm.naive_guess(built))
    assert solution.success
    q = solution.value(built.q)
    end = np.asarray(solution.value(built.problem.final(built.point_position(*static_arm_hand())))).ravel()
    reference = opensim_task("osim_inverse_dynamics", {"model": str(static_arm.MODEL_FILE), "q": q[:, [0, -1]].T,
                                                       "u": np.zeros((2, 2)), "udot": np.zeros((2, 2))})
    bodies = list(reference["body_names"])

    def in_ground(k, body, point):
        j = bodies.index(body)
        return reference["body_positions"][k, j] + reference["body_rotations"][k, j] @ np.asarray(point)

    hand_start, hand_end = (in_ground(k, static_arm.HAND_BODY, static_arm.HAND_POINT) for k in (0, 1))
    target = in_ground(1, "base", static_arm.TARGET_ON_BASE)
    np.testing.assert_allclose(target, static_arm.TARGET, atol=1e-12)  # base welded 0.8 m above ground
    np.testing.assert_allclose(end, hand_end, atol=1e-12)
    distance = np.linalg.norm(hand_end - target)
    assert np.linalg.norm(end - np.array(static_arm.TARGET)) == pytest.approx(distance, abs=1e-12)
    assert distance < 0.5 * np.linalg.norm(hand_start - target)


def static_arm_hand():
    return static_arm.HAND_BODY, static_arm.HAND_POINT


def test_straight_line_paths_moment_arms_are_minus_length_gradients():
    model = static_arm.load_model()
    q = np.array([0.3, 1.1])
    lengths, _, arms = model.musculotendon_kinematics(q, np.zeros(2))
    step = 1e-6
    for k in range(2):
        dq = np.zeros(2)
        dq[k] = step
        plus = np.asarray(model.musculotendon_kinematics(q + dq, np.zeros(2))[0]).flatten()
        minus = np.asarray(model.musculotendon_kinematics(q - dq, np.zeros(2))[0]).flatten()
        np.testing.assert_allclose(np.asarray(arms)[:, k], -(plus - minus) / (2 * step), atol=1e-8)


def test_outputs_are_opensim_state_files(tmp_path):
    built = reaching.moco_problem()
    solution = built.problem.solve(HermiteSimpson(8), Ipopt(tol=1e-6), guess=reaching.moco_naive_guess(built))
    outputs.write_results(built, solution, tmp_path, animate=True,
                          moco=read_table(DATA / "arm26_p2p_T0.5_solution.sto"), animation_frames=3)
    states = read_table(tmp_path / "states.sto")
    assert states.labels[:2] == ("/jointset/r_shoulder/r_shoulder_elev/value", "/jointset/r_elbow/r_elbow_flex/value")
    assert "/forceset/BIClong/activation" in states.labels
    np.testing.assert_allclose(states.column("/jointset/r_elbow/r_elbow_flex/value")[-1], np.pi / 2, atol=1e-8)
    forces = read_table(tmp_path / "muscle_forces.sto")
    np.testing.assert_allclose(forces.data, np.asarray(solution.value(built.tendon_forces)).T, rtol=1e-12)
    assert (tmp_path / "arm.gif").stat().st_size < 2_000_000
    assert (tmp_path / "muscles.png").exists() and (tmp_path / "controls.sto").exists()


@pytest.mark.opensim
def test_opensim_muscle_forces_at_the_solution_states(opensim_task, tmp_path):
    """OpenSim (Moco's muscle replacement) at the solution's states from states.sto: same tendon forces.

    OpenSim's lengths differ from the polynomial surrogate by the path fit (held-out RMSE <= 0.22 mm);
    at OpenSim's own lengths and speeds trajopt's muscle model gives OpenSim's force to round-off.
    """
    built = reaching.moco_problem()
    solution = built.problem.solve(HermiteSimpson(10), Ipopt(tol=1e-6), guess=reaching.moco_naive_guess(built))
    outputs.write_results(built, solution, tmp_path, animate=False)
    result = opensim_task("arm26_muscle_states", {"model": str(reaching.MODEL_FILE),
                                                  "states": str(tmp_path / "states.sto"),
                                                  "muscles": np.array(built.model.muscle_names, dtype=str)})
    data = outputs.trajectories(built, solution)
    lengths = np.asarray(built.model.musculotendon_kinematics.map(data["q"].shape[0])(data["q"].T, data["u"].T)[0]).T
    assert np.max(np.abs(result["lengths"] - lengths)) < 1e-3  # ~4x the worst held-out length RMSE
    a = data["activations"]
    for k, muscle in enumerate(built.model.muscles):
        at_opensim_lengths = np.array([float(muscle.tendon_force(a[i, k], result["lengths"][i, k],
                                                                 result["lengthening_speeds"][i, k]))
                                       for i in range(a.shape[0])])
        np.testing.assert_allclose(at_opensim_lengths, result["tendon_forces"][:, k], rtol=1e-6, atol=1e-6)


@pytest.mark.slow
def test_moco_comparison_50_intervals():
    """Moco's problem on Moco's mesh: objective within 1 % of Moco's, from a naive guess and a warm start."""
    built, naive, warm, coarse = reaching.solve_pair(reaching.moco_problem, reaching.moco_naive_guess, intervals=50)
    assert naive.success and warm.success
    for solution in (naive, warm):
        assert abs(solution.objective / MOCO_INFO["objective"] - 1.0) < 0.01
    assert built.resimulate(naive).max_drift < 0.01


def test_cli_writes_results(tmp_path):
    assert reaching.main(["--skip-comparisons", "--intervals", "8", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["reaching"]["naive"]["success"] and summary["reaching"]["warm"]["success"]
    np.testing.assert_allclose(summary["reaching"]["final_hand"][:2], reaching.DEFAULT_TARGET[:2], atol=1e-6)
    assert (tmp_path / "reaching" / "states.sto").exists()
    assert not (tmp_path / "reaching" / "arm.gif").exists()  # GIFs are written with --animate only
    with pytest.raises(SystemExit) as exit_info:
        reaching.main(["--duration", "-1", "--out", str(tmp_path)])
    assert exit_info.value.code == 2


def test_unreachable_target_exits_nonzero_with_status_and_worst_constraint(tmp_path, capsys):
    """A target 7 m away: IPOPT reports infeasibility; the run says so in one line (status, worst constraint:
    the hand's final x), exits 1, and still writes the partial result."""
    code = reaching.main(["--target", "5", "5", "5", "--skip-comparisons", "--intervals", "8",
                          "--out", str(tmp_path)])
    assert code == 1
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "did not converge" in error[0] and "worst constraint" in error[0]
    assert "hand x" in error[0] or "hand y" in error[0]
    assert (tmp_path / "reaching" / "solution.sto").exists()
    summary = json.loads((tmp_path / "summary.json").read_text())["reaching"]["naive"]
    assert not summary["success"] and summary["worst_constraint"] != "none"


@pytest.mark.slow
def test_moco_problem_with_smooth_geometric_paths_follows_mocos_solution():
    """Moco's problem with arm26's own geometric paths in smooth mode (default band 0.1 mm), Moco's mesh: converges
    and follows Moco's solution (Moco used OpenSim's exact wrapped paths) within 0.025 activation and 0.08 rad
    (measured 0.018 and 0.059; the polynomial surrogates give 0.030 and 0.19); objective 2.4 % above Moco's."""
    from trajopt.model.paths.wrapping.smooth import SmoothWrapping

    model = reaching.load_model(True, SmoothWrapping())
    built = reaching.moco_problem(model=model)
    solution = built.problem.solve(HermiteSimpson(50), Ipopt(tol=1e-6), guess=reaching.moco_naive_guess(built))
    assert solution.success
    moco = outputs.read_moco_solution(reaching.MOCO_REFERENCE / "arm26_p2p_T0.5_solution.sto")
    difference = outputs.compare_with_moco(built, solution, moco)
    assert difference["max_activation_difference"] < 0.025
    assert difference["max_coordinate_difference_rad"] < 0.08
    assert 0.02 < solution.objective / MOCO_INFO["objective"] - 1.0 < 0.03


def test_geometric_paths_option_rejects_a_bad_band(tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        reaching.main(["--paths", "geometric", "--smoothing-band", "0", "--out", str(tmp_path)])
    assert exit_info.value.code == 2
