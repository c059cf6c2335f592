"""The OpenSim-style command-line tools: inverse-dynamics, static-optimization, muscle-analysis (and their bad
input: one line, exit code 2)."""

import warnings

import casadi as ca
import numpy as np
import pytest

from conftest import ROOT
from trajopt.edge.cli import main
from trajopt.model.io import read_table, write_sto

WALK3D = ROOT / "trajopt" / "examples" / "walk3d"
MODEL, COORDINATES, LOADS = WALK3D / "subject_walk_scaled.osim", WALK3D / "coordinates.sto", WALK3D / "grf_walk.xml"
FBP = WALK3D / "subject_walk_scaled_FunctionBasedPathSet.xml"


def _run(capsys, *argv):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_walk3d_rnea_satisfies_lagranges_equations():
    """The Rajagopal walker knee (three rotations and three translations, functions of one angle): inverse dynamics
    equals Lagrange's equations of the model's kinetic and potential energy at random states."""
    from trajopt.core.multibody import inverse_dynamics, kinetic_energy, potential_energy
    from trajopt.model.musculoskeletal.operators import load_processed

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        osim, _ = load_processed(MODEL)
    mb = osim.multibody
    q, qd, qdd = ca.SX.sym("q", mb.nq), ca.SX.sym("qd", mb.nv), ca.SX.sym("qdd", mb.nv)
    energy = kinetic_energy(mb, q, qd)
    momentum = ca.gradient(energy, qd)
    lagrange = ca.jtimes(momentum, q, qd) + ca.jtimes(momentum, qd, qdd) - ca.gradient(energy, q) \
        + ca.gradient(potential_energy(mb, q), q)
    difference = ca.Function("d", [q, qd, qdd], [lagrange - inverse_dynamics(mb, q, qd, qdd)])
    rng = np.random.default_rng(1)
    worst = 0.0
    for _ in range(10):
        values = rng.uniform(-0.3, 0.3, mb.nq)
        for knee in ("knee_angle_r", "knee_angle_l"):
            values[mb.coordinate_index(knee)] = rng.uniform(0.1, 1.2)
        worst = max(worst, float(np.max(np.abs(difference(values, rng.uniform(-1, 1, mb.nv),
                                                           rng.uniform(-2, 2, mb.nv))))))
    assert worst < 1e-11  # measured 3.4e-13


@pytest.mark.opensim
def test_inverse_dynamics_matches_opensims_tool(opensim_task, tmp_path, capsys):
    """Against OpenSim's InverseDynamicsTool on an assembled copy of coordinates.sto (the file's patella columns
    violate the couplers; OpenSim's tool takes them as they are, trajopt assembles them as Moco does).
    Lumbar and arms agree to the tool's 8 printed decimals. The legs and pelvis differ by up to ~1.3 N·m: OpenSim's
    velocity-dependent forces for the walker knee disagree with Lagrange's equations of its own mass matrix (with
    zero speeds both agree to 1e-13), while trajopt's satisfy them (test above)."""
    from trajopt.edge.tools.common import load_tool_input

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assembled = load_tool_input(MODEL, COORDINATES).motion
    write_sto(tmp_path / "assembled.sto", assembled)
    reference = opensim_task("inverse_dynamics_tool", {
        "model": str(MODEL), "coordinates": str(tmp_path / "assembled.sto"), "external_loads": str(LOADS),
        "initial_time": 0.45, "final_time": 1.799})
    code, out, _ = _run(capsys, "inverse-dynamics", MODEL, COORDINATES, "--external-loads", LOADS,
                        "--out", tmp_path / "id")
    assert code == 0 and "knee_angle_r_beta" in out  # the note says the patella was assembled
    ours = read_table(tmp_path / "id" / "inverse_dynamics.sto")
    np.testing.assert_allclose(ours.time, reference["time"], atol=1e-12)
    labels = list(reference["labels"])
    assert set(labels) == set(ours.labels)
    upper = [label for label in labels if label.split("_")[0] in ("lumbar", "arm", "elbow", "pro")]
    for label in upper:
        difference = ours.column(label) - reference["generalized_forces"][:, labels.index(label)]
        assert np.max(np.abs(difference[5:-5])) < 1e-7  # measured 3.9e-8 (8 printed decimals)


def test_inverse_dynamics_bad_input_is_one_line(tmp_path, capsys):
    code, _, err = _run(capsys, "inverse-dynamics", MODEL, COORDINATES, "--cutoff", "1000", "--out", tmp_path / "a")
    assert code == 2 and err.count("\n") == 1 and "--cutoff 1000" in err and "Nyquist frequency 500 Hz" in err
    code, _, err = _run(capsys, "inverse-dynamics", MODEL, COORDINATES, "--external-loads", tmp_path / "none.xml",
                        "--out", tmp_path / "a")
    assert code == 2 and err.count("\n") == 1 and "none.xml" in err


def test_muscle_analysis_writes_lengths_and_coupled_moment_arms(tmp_path, capsys):
    from trajopt.model.paths.function_based_xml import read_function_based_path_set

    code, _, _ = _run(capsys, "muscle-analysis", MODEL, COORDINATES, "--paths", FBP, "--out", tmp_path)
    assert code == 0
    lengths = read_table(tmp_path / "lengths.sto")
    arms = read_table(tmp_path / "moment_arms_knee_angle_r.sto")
    assert not (tmp_path / "moment_arms_knee_angle_r_beta.sto").exists()  # dependent: no file
    paths = read_function_based_path_set(FBP)
    table = read_table(COORDINATES)
    row = 500
    q = [table.data[row, [c.split("/")[-2] for c in table.labels].index(c)] for c in paths.coordinates]
    values, gradient = (np.asarray(v) for v in paths.lengths_and_moment_arms_function(paths.coordinates)(q))
    k = list(paths.muscles).index("vaslat_r")
    assert lengths.column("vaslat_r")[row] == pytest.approx(values[k, 0], abs=1e-15)
    knee = list(paths.coordinates).index("knee_angle_r")
    assert arms.column("vaslat_r")[row] == pytest.approx(gradient[k, knee], abs=1e-15)
    assert arms.column("vaslat_r")[row] < -0.02  # a knee extensor: negative about knee flexion


def _motion_window(path, start: float, end: float, out):
    """The frames of a motion file with start <= time <= end, written as .sto: a shorter run of the same data."""
    from trajopt.table import Table

    motion = read_table(path)
    rows = (motion.time >= start) & (motion.time <= end + 1e-9)
    write_sto(out, Table(motion.time[rows], motion.labels, motion.data[rows], motion.in_degrees, motion.name))
    return out, int(rows.sum())


@pytest.mark.slow
def test_static_optimization_with_ground_reactions(tmp_path, capsys):
    """51 frames (0.60-0.65 s) of the walking motion with its ground reactions (all 1350 frames took 135 s)."""
    motion, frames = _motion_window(COORDINATES, 0.6, 0.65, tmp_path / "coordinates.sto")
    code, out, _ = _run(capsys, "static-optimization", MODEL, motion, "--external-loads", LOADS, "--paths", FBP,
                        "--out", tmp_path / "so")
    assert code == 0
    tmp_path = tmp_path / "so"
    activations = read_table(tmp_path / "activations.sto")
    assert frames == 51 and activations.num_frames == frames and "soleus_r" in activations.labels
    reserves = read_table(tmp_path / "reserves.sto")
    assert "reserve_knee_angle_r_beta" not in reserves.labels  # the reduced form: independent coordinates only
    summary = (tmp_path / "summary.md").read_text()
    # the pelvis needs its residuals: said as such, not as a muscle shortfall
    assert "Caveats" in summary and "residual loads on the ground joint's coordinates exceed" in summary


@pytest.mark.opensim
@pytest.mark.slow
def test_walk3d_static_optimization_matches_opensims(opensim_task, tmp_path):
    """The walk3d-static-optimization benchmark's problem on 21 frames (0.60-0.62 s): GRFs, FunctionBasedPaths on
    both sides, no muscle physiology, reserves 1 on the independent coordinates. Largest activation difference
    per muscle against OpenSim's StaticOptimization (its default convergence 1e-4): measured 2.3e-3 (bfsh_r), median
    over frames 1.5e-3. It is OpenSim's convergence: replacing trajopt's rigid-body forces by OpenSim's (its
    walker-knee velocity forces differ by up to 0.05 N·m here) leaves it unchanged; with OpenSim's criterion at 1e-7
    the frames agree to 3e-4 except frames where OpenSim's optimizer stops early."""
    from trajopt.benchmarks.walk3d_static_optimization import main as bench

    out = tmp_path / "walk3d_static_optimization.json"
    assert bench(["--window", "0.6", "0.62", "--out", str(tmp_path)]) == 0
    import json

    report = json.loads(out.read_text())
    assert report["trajopt"]["frames"] == 21 and report["trajopt"]["status"] == "Solve_Succeeded"
    assert report["max_activation_difference"]["value"] < 3e-3


@pytest.mark.slow
def test_inverse_dynamics_forces_option_takes_passive_moments_off(capsys, tmp_path):
    """``--forces`` adds the ForceSet's ExpressionBasedCoordinateForces (Moco's example's passive joint moments):
    the coordinates they act on change, the others (pelvis) do not."""
    forces = WALK3D / "subject_walk_scaled_ExpressionBasedCoordinateForceSet.xml"
    code, _, _ = _run(capsys, "inverse-dynamics", MODEL, COORDINATES, "--out", tmp_path / "bare")
    assert code == 0
    code, _, _ = _run(capsys, "inverse-dynamics", MODEL, COORDINATES, "--forces", forces,
                      "--out", tmp_path / "passive")
    assert code == 0
    bare, passive = (read_table(tmp_path / name / "inverse_dynamics.sto") for name in ("bare", "passive"))
    assert np.max(np.abs(bare.column("elbow_flex_r_moment") - passive.column("elbow_flex_r_moment"))) > 0.1
    np.testing.assert_array_equal(bare.column("pelvis_tx_force"), passive.column("pelvis_tx_force"))
