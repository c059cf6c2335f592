"""trajopt/examples/walk3d/opensim_check: OpenSim 4.6 builds the walk3d prediction's model (Moco's example's recipe
and PredSim's) with its own operators and components and agrees with trajopt's contact forces, tendon forces,
dynamics and (PredSim's compliant tendons) implicit tendon residuals at states of the reference motion
(coordinates.sto's first half cycle, the prediction's guess) with random muscle, actuator and tendon inputs."""

import numpy as np
import pytest

KNEES = ("knee_angle_r", "knee_angle_l")


@pytest.fixture(scope="module")
def states():
    """Six frames of the reference guess's states (quaternion pelvis), random muscle and actuator inputs; the same
    frames twice: with the knee speeds set to zero, then as they are."""
    rng = np.random.default_rng(13)
    from trajopt.examples.walk3d.opensim_check import trajopt_functions
    from trajopt.examples.walk3d.prediction import reference_motion
    from trajopt.studies.gait.guess import speeds_from_coordinates

    walk, forces, _, _ = trajopt_functions()
    mb = walk.model.musculoskeletal.multibody
    time, q = reference_motion()
    u = speeds_from_coordinates(mb, time, q)
    pick = np.linspace(0, time.size - 1, 6).round().astype(int)
    still = u[pick].copy()
    still[:, [mb.speed_index(k) for k in KNEES]] = 0.0
    q, u = np.vstack([q[pick], q[pick]]), np.vstack([still, u[pick]])
    frames = q.shape[0]
    a, e = rng.uniform(0.01, 1.0, (frames, 80)), rng.uniform(0.0, 1.0, (frames, 80))
    c = rng.uniform(-1.0, 1.0, (frames, 15))
    udot = np.asarray(forces.map(frames)(q.T, u.T, a.T, c.T, np.zeros((0, frames)))[2]).T  # trajopt's dynamics
    return walk, q, u, a, e, c, udot


def test_walk3d_forces_and_dynamics_equal_opensims(states, opensim_task):
    """Contact records (12 per sphere) and tendon forces agree to round-off at every frame. Dynamics, compared in
    trajopt's speeds (OpenSim's pelvis angle accelerations converted to the FreeJoint's angular acceleration) and in
    OpenSim's inverse dynamics at trajopt's accelerations: round-off while the knees do not move. With knee speeds
    the walker knee's velocity-dependent forces differ (up to ~1 N here): OpenSim's disagree with Lagrange's
    equations of its own mass matrix, trajopt's satisfy them (tests/test_tools.py)."""
    from trajopt.examples.walk3d.opensim_check import check_states

    walk, q, u, a, e, c, udot = states
    half = q.shape[0] // 2
    summary, arrays = check_states(walk, q, u, a, e, c, udot=udot, run_task=opensim_task)
    scale = np.abs(arrays["opensim_records"][:, 0:3]).max()
    assert scale > 500.0  # the feet press on the ground
    # measured 2.0e-15 of the largest force
    np.testing.assert_allclose(arrays["records"], arrays["opensim_records"], rtol=0, atol=2e-14 * scale)
    tendon = np.abs(arrays["tendon"]).max()
    assert tendon > 1000.0
    assert summary["tendon_force_max_abs_difference_N"] < 1e-14 * tendon  # measured 9e-16
    still = slice(0, half)
    np.testing.assert_allclose(arrays["trajopt_forward_udot"][still], arrays["opensim_udot"][still], rtol=0,
                               atol=5e-9)  # rad/s², m/s²: measured 5.8e-10
    assert np.abs(arrays["at_opensim"][still]).max() < 5e-10  # N·m, N: measured 5.9e-11
    opensim_residual = arrays["opensim_inverse_dynamics_residual"]
    assert np.abs(opensim_residual[still]).max() < 5e-10  # measured 6.2e-11
    moving = np.abs(arrays["at_opensim"][half:])
    assert 0.01 < moving.max() < 5.0  # the walker knee's velocity forces (N·m, N): measured 0.47


def test_opensims_walker_knee_does_not_conserve_energy(opensim_task):
    """Why the check above keeps the knees still: subject_walk_scaled.osim with every force off, gravity zero and the
    couplers unenforced is a free mechanical system, so kinetic energy is constant along its forward dynamics.
    OpenSim's realizeAcceleration keeps it constant (to the central differences' round-off) while the knees rest
    and loses it when they move; trajopt's forward dynamics keeps T + V constant either way (same states)."""
    import warnings

    import casadi as ca

    from trajopt.examples.walk3d.prediction import MODEL
    from trajopt.core.multibody import forward_dynamics, kinetic_energy, potential_energy
    from trajopt.model.musculoskeletal.operators import load_processed

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mb = load_processed(MODEL)[0].multibody
    names = mb.coordinate_names
    rng = np.random.default_rng(5)
    q = np.tile(mb.default_q(), (4, 1)) + rng.uniform(-0.2, 0.2, (4, mb.nq))
    q[:, [names.index(k) for k in KNEES]] = rng.uniform(0.2, 1.2, (4, 2))
    u = rng.uniform(-2.0, 2.0, (4, mb.nv))
    knees = [names.index(k) for k in KNEES]
    u[:2, knees] = 0.0  # the first two states: knees at rest
    result = opensim_task("osim_kinetic_energy_rate", {"model": str(MODEL), "coordinate_names": np.array(names),
                                                       "q": q, "u": u})
    qs, us = ca.SX.sym("q", mb.nq), ca.SX.sym("u", mb.nv)
    energy = kinetic_energy(mb, qs, us) + potential_energy(mb, qs)
    udot = forward_dynamics(mb, qs, us, ca.DM.zeros(mb.nv))
    power = ca.Function("power", [qs, us], [ca.jtimes(energy, qs, us) + ca.jtimes(energy, us, udot),
                                            kinetic_energy(mb, qs, us)])
    ours = np.array([[float(x) for x in power(q[k], u[k])] for k in range(4)])
    np.testing.assert_allclose(ours[:, 1], result["kinetic_energy"], rtol=1e-12)  # same T
    assert np.abs(ours[:, 0]).max() < 1e-10  # W: measured 1.1e-11 (T up to ~100 J)
    assert np.abs(result["rate"][:2]).max() < 1e-7  # knees at rest: the differences' round-off, measured 2.1e-8
    assert np.abs(result["rate"][2:]).min() > 1e-4  # knees moving: measured 1.6e-3 and 0.14 W


@pytest.mark.slow
def test_walk3d_euler_pelvis_variant_equals_opensims(opensim_task):
    """The ``--euler-pelvis`` variant (the .osim's pelvis angles, no conversion) at three reference states with the
    knees still: the same agreement as the quaternion model."""
    rng = np.random.default_rng(13)
    from trajopt.examples.walk3d.opensim_check import check_states, trajopt_functions
    from trajopt.examples.walk3d.prediction import reference_motion
    from trajopt.studies.gait.guess import speeds_from_coordinates

    walk, forces, _, _ = trajopt_functions(False)
    mb = walk.model.musculoskeletal.multibody
    assert mb.nq == mb.nv
    time, q = reference_motion(quaternion_pelvis=False)
    u = speeds_from_coordinates(mb, time, q)
    pick = [0, time.size // 2, time.size - 1]
    q, u = q[pick], u[pick]
    u[:, [mb.speed_index(k) for k in KNEES]] = 0.0
    a, e, c = rng.uniform(0.01, 1.0, (3, 80)), rng.uniform(0.0, 1.0, (3, 80)), rng.uniform(-1.0, 1.0, (3, 15))
    udot = np.asarray(forces.map(3)(q.T, u.T, a.T, c.T, np.zeros((0, 3)))[2]).T
    summary, arrays = check_states(walk, q, u, a, e, c, udot=udot, run_task=opensim_task)
    assert summary["pelvis_quaternion_max_norm_error"] is None
    scale = np.abs(arrays["opensim_records"][:, 0:3]).max()
    assert scale > 500.0
    assert summary["contact_record_max_abs_difference"] < 5e-14 * scale  # measured 1.3e-14
    assert summary["tendon_force_max_abs_difference_N"] < 1e-14 * np.abs(arrays["tendon"]).max()  # 1.2e-15
    assert summary["forward_acceleration_max_abs_difference"] < 5e-9  # measured 4.4e-10
    assert summary["implicit_residual_at_opensim_accelerations_max_abs"] < 5e-10  # measured 2.9e-11
    assert summary["opensim_inverse_dynamics_residual_max_abs"] < 5e-10  # measured 5.6e-11


@pytest.fixture(scope="module")
def predsim_states():
    """PredSim's recipe: four frames of its reference guess with the joint angles moved by up to ±0.15 rad (the
    mtp angles drawn in [0, 0.5] rad: the file has none), random joint speeds, activations, excitations, actuator
    controls, normalized tendon forces and their derivatives; the same frames twice: knee speeds zero, then
    random."""
    rng = np.random.default_rng(29)
    from trajopt.examples.walk3d.opensim_check import trajopt_functions
    from trajopt.examples.walk3d.prediction import PREDSIM_MODEL, PREDSIM_RECIPE, reference_motion
    from trajopt.studies.gait.guess import speeds_from_coordinates
    from trajopt.studies.gait.passive_joint_torques import floating_base_speeds

    walk, forces, _, _ = trajopt_functions(True, PREDSIM_RECIPE)
    mb = walk.model.musculoskeletal.multibody
    time, q = reference_motion(choices=PREDSIM_MODEL)
    u = speeds_from_coordinates(mb, time, q)
    pick = np.linspace(0, time.size - 1, 4).round().astype(int)
    q, u = q[pick], u[pick]
    floating = set(floating_base_speeds(mb))
    joints = [n for n in mb.speed_names if n in mb.coordinate_names and n not in floating]
    angles, speeds = [mb.coordinate_index(n) for n in joints], [mb.speed_index(n) for n in joints]
    q[:, angles] += rng.uniform(-0.15, 0.15, (4, len(joints)))
    q[:, [mb.coordinate_index(n) for n in ("mtp_angle_r", "mtp_angle_l")]] = rng.uniform(0.0, 0.5, (4, 2))
    u[:, speeds] = rng.uniform(-3.0, 3.0, (4, len(joints)))
    still = u.copy()
    still[:, [mb.speed_index(k) for k in KNEES]] = 0.0
    q, u = np.vstack([q, q]), np.vstack([still, u])
    frames, muscles = q.shape[0], len(walk.model.musculoskeletal.muscle_names)
    actuators = walk.muscle_driven.actuator_controls.numel()
    a, e = rng.uniform(0.05, 1.0, (frames, muscles)), rng.uniform(0.0, 1.0, (frames, muscles))
    c = rng.uniform(-1.0, 1.0, (frames, actuators))
    tendon = (rng.uniform(0.02, 1.2, (frames, muscles)), rng.uniform(-100.0, 100.0, (frames, muscles)))
    udot = np.asarray(forces.map(frames)(q.T, u.T, a.T, c.T, tendon[0].T)[2]).T  # trajopt's forward dynamics
    return walk, q, u, a, e, c, udot, tendon


@pytest.mark.slow
def test_walk3d_predsim_recipe_equals_opensims(opensim_task, predsim_states):
    """PredSim's recipe rebuilt by OpenSim (compliant DeGrooteFregly2016Muscles in implicit mode with passive fiber
    force and width 1, PredSim's passive joint torques as ExpressionBasedCoordinateForces, passive toes, welded
    forearms) at random states: the muscles' settings are trajopt's, OpenSim's implicit tendon residual is trajopt's
    fiber-tendon equilibrium residual to round-off, tendon forces and contact records agree to round-off, and the
    dynamics both ways to round-off while the knees are still (the walker knee's velocity forces otherwise,
    ``test_opensims_walker_knee_does_not_conserve_energy``)."""
    from trajopt.examples.walk3d.opensim_check import check_states

    walk, q, u, a, e, c, udot, tendon = predsim_states
    half = q.shape[0] // 2
    summary, arrays = check_states(walk, q, u, a, e, c, udot=udot, run_task=opensim_task, tendon=tendon)
    assert summary["excluded_from_comparison"] == []
    assert max(summary["muscle_settings_max_abs_difference"].values()) == 0.0
    passive = np.abs(np.asarray(walk.model.passive(q.T, u.T))).max()
    assert passive > 5.0  # N·m: the passive joint torques take part (mtp springs, limits, damping): 8.9
    scale = np.abs(arrays["opensim_records"][:, 0:3]).max()
    assert scale > 500.0  # the feet press on the ground
    np.testing.assert_allclose(arrays["records"], arrays["opensim_records"], rtol=0,
                               atol=5e-14 * scale)  # measured 1.7e-14 of the largest force
    tendon_force = np.abs(arrays["tendon"]).max()
    assert tendon_force > 1000.0
    assert summary["tendon_force_max_abs_difference_N"] < 1e-14 * tendon_force  # measured 0
    equilibrium = np.abs(arrays["equilibrium"]).max()
    assert equilibrium > 0.5  # random tendon forces are far from equilibrium
    np.testing.assert_allclose(arrays["equilibrium"], arrays["opensim_equilibrium"], rtol=0,
                               atol=2e-13)  # measured 1.9e-14 (residuals up to 2.0)
    still = slice(0, half)
    np.testing.assert_allclose(arrays["trajopt_forward_udot"][still], arrays["opensim_udot"][still], rtol=0,
                               atol=5e-9)  # rad/s², m/s²: measured 1.9e-10
    assert np.abs(arrays["at_opensim"][still]).max() < 5e-10  # N·m, N: measured 8.6e-11
    assert np.abs(arrays["opensim_inverse_dynamics_residual"][still]).max() < 5e-10  # measured 7.6e-11
    moving = np.abs(arrays["at_opensim"][half:])
    assert 0.01 < moving.max() < 5.0  # the walker knee's velocity forces (N·m, N): measured 0.059


@pytest.mark.slow
def test_walk3d_predsim_tendon_stiffness_overrides_reach_opensim(opensim_task):
    """PredSim's recipe with a compliant triceps surae (kT 17.5 for soleus and gastrocnemii): OpenSim's muscles get
    the tendon strain of that stiffness on OpenSim's tendon curve, ln(1.2 / 0.2) / 17.5, the others keep 0.049, and
    the implicit tendon residuals agree with trajopt's at random states."""
    import dataclasses

    from trajopt.examples.walk3d.opensim_check import check_states, trajopt_functions
    from trajopt.examples.walk3d.opensim_request import opensim_request
    from trajopt.examples.walk3d.prediction import (COMPLIANT_TRICEPS_SURAE, PREDSIM_MODEL, PREDSIM_RECIPE,
                                                    reference_motion)

    rng = np.random.default_rng(31)
    recipe = dataclasses.replace(PREDSIM_RECIPE, tendon_stiffness=COMPLIANT_TRICEPS_SURAE)
    walk = trajopt_functions(True, recipe)[0]
    _, q = reference_motion(choices=PREDSIM_MODEL)
    q, u = q[[0, 20]], rng.uniform(-1.0, 1.0, (2, walk.model.musculoskeletal.multibody.nv))
    a, e, c = rng.uniform(0.05, 1.0, (2, 80)), rng.uniform(0.0, 1.0, (2, 80)), rng.uniform(-1.0, 1.0, (2, 11))
    tendon = (rng.uniform(0.02, 1.2, (2, 80)), rng.uniform(-100.0, 100.0, (2, 80)))
    request = opensim_request(walk, q, u, a, e, c, tendon=tendon)
    result = opensim_task("walk3d_solution_check", request)
    names = list(walk.model.musculoskeletal.muscle_names)
    strains = dict(zip(names, result["muscle_tendon_strain"]))
    for name, _ in COMPLIANT_TRICEPS_SURAE:
        assert strains[name] == pytest.approx(np.log(6.0) / 17.5, rel=1e-15)
    assert strains["tibant_r"] == pytest.approx(0.049, rel=1e-15)
    summary, arrays = check_states(walk, q, u, a, e, c, run_task=opensim_task, tendon=tendon)
    assert max(summary["muscle_settings_max_abs_difference"].values()) == 0.0
    soleus = names.index("soleus_r")
    assert abs(arrays["equilibrium"][0, soleus]) > 1e-3
    np.testing.assert_allclose(arrays["equilibrium"], arrays["opensim_equilibrium"], rtol=0,
                               atol=1e-12)  # measured 2.3e-13


class _StatesAsSolution:
    """Stands in for a solution of the walk3d problem: ``value(symbol)`` gives the symbol's given rows (frames) as
    columns, as ``Solution.value`` gives them on its grid."""

    def __init__(self, values):
        self.values = values

    def value(self, symbol):
        import casadi as ca

        return next(v.T for s, v in self.values if s.shape == symbol.shape and ca.is_equal(s, symbol))


@pytest.mark.slow
def test_walk3d_predsim_solution_check_hands_over_tendon_states(opensim_task, predsim_states):
    """``solution_check`` (what ``trajopt run walk3d-prediction`` records) on PredSim's recipe reads the normalized
    tendon forces and their derivatives with the other variables: at states whose accelerations are trajopt's
    forward dynamics (knees still) OpenSim's accelerations and tendon residuals are trajopt's to round-off."""
    from trajopt.examples.walk3d.opensim_check import opensim_check_rows, solution_check

    walk, q, u, a, e, c, udot, tendon = predsim_states
    still = slice(0, q.shape[0] // 2)
    built = walk.muscle_driven
    symbols = (built.q, built.u, built.activations, built.excitations, built.actuator_controls, built.accelerations,
               built.normalized_tendon_forces, built.normalized_tendon_force_derivatives)
    check = solution_check(walk, _StatesAsSolution(list(zip(symbols, (x[still] for x in (q, u, a, e, c, udot,
                                                                                          *tendon))))))
    assert check["equilibrium_residual_max_abs_difference"] < 1e-12
    assert check["opensim_equilibrium_residual_max_abs"] > 0.5
    assert check["acceleration_max_abs_difference"] < 5e-9
    assert check["opensim_inverse_dynamics_residual_max_abs"] < 5e-10
    assert len(opensim_check_rows(check)) > 0
