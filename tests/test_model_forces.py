"""Non-muscle force elements of OpenSim 4.6 models (trajopt.model.musculoskeletal.model_forces): files with ``::`` tags
load, CoordinateLimitForce / PathSpring / PathActuator / HuntCrossleyForce match OpenSim, Hunt-Crossley contact is
refused in one line in optimal control, and a model without muscles works."""

import dataclasses

import casadi as ca
import numpy as np
import pytest
from conftest import DATA

from trajopt.studies.analysis.inverse_dynamics import MotionKinematics, motion_inverse_dynamics
from trajopt.studies.analysis.static_optimization import StaticOptimization
from trajopt.model.contact import osim_contacts
from trajopt.model.contact.hunt_crossley import (
    hunt_crossley_pair_function,
    hunt_crossley_pairs,
)
from trajopt.errors import ModelFileError, TrajoptInputError
from trajopt.model.io import Table
from trajopt.core.multibody import inverse_dynamics
from trajopt.model.musculoskeletal import MusculoskeletalModel
from trajopt.model.osim import load_osim
from trajopt.model.musculoskeletal.model_forces import (
    coordinate_limit_force,
    model_applied_forces,
    passive_forces_function,
    path_actuators,
)
from trajopt.studies.prediction import muscle_driven_problem
from trajopt.studies.prediction.tendon_dynamics import ElasticTendons

BLOCK = DATA / "osim" / "bouncing_block.osim"
CHAIN = DATA / "osim" / "limited_chain.osim"
PENDULUM = DATA / "osim" / "double_pendulum.osim"
BALL = DATA / "osim" / "sliding_ball.osim"


def _only(osim, name):
    """The model with only the passive element ``name`` (limit force or path spring) kept."""
    model_spec = osim.spec
    kept = {"coordinate_limit_forces": tuple(f for f in model_spec.coordinate_limit_forces if f.name == name),
            "path_springs": tuple(f for f in model_spec.path_springs if f.name == name)}
    return dataclasses.replace(osim, spec=dataclasses.replace(model_spec, **kept))


def _states(rng, n):
    """q1 across both limits and their transitions (-30/40 deg, 3 deg wide), q3 across its limits (-0.02/0.05 m,
    0.01 m wide)."""
    q1 = np.radians(np.concatenate([rng.uniform(-36, -27, n // 3), rng.uniform(37, 46, n // 3),
                                    rng.uniform(-25, 35, n - 2 * (n // 3))]))
    q3 = np.concatenate([rng.uniform(-0.035, -0.015, n // 2), rng.uniform(0.045, 0.065, n - n // 2)])
    q = np.column_stack([q1, rng.uniform(-1.2, 1.2, n), q3])
    return q, rng.uniform(-2, 2, (n, 3))


def test_opensim_46_scoped_tags_are_read():
    osim = load_osim(BLOCK)
    (force,) = osim.spec.hunt_crossley_forces
    (contact,) = force.contacts
    assert contact.geometry == ("floor", "ball")
    assert (contact.stiffness, contact.dissipation, contact.static_friction, contact.dynamic_friction,
            contact.viscous_friction, force.transition_velocity) == (1e6, 1.5, 0.8, 0.6, 0.1, 0.05)
    assert {g.name for g in osim.spec.contact_geometry} == {"floor", "ball"}


def test_malformed_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.osim"
    bad.write_text(BLOCK.read_text().replace("</ForceSet>", "</ForceSet", 1))
    with pytest.raises(ModelFileError) as error:
        load_osim(bad)
    assert "bad.osim: cannot read the model file: " in str(error.value) and "\n" not in str(error.value)


def test_hunt_crossley_force_matches_opensim(opensim_task):
    """The force and torque (about the block's origin) the HuntCrossleyForce applies to the block, from OpenSim's
    record values at random states (some not touching, some separating), given OpenSim's body kinematics."""
    rng = np.random.default_rng(7)
    n = 24
    q = np.column_stack([rng.uniform(-0.5, 0.5, (n, 3)), rng.uniform(-0.1, 0.1, n), rng.uniform(-0.01, 0.06, n),
                         rng.uniform(-0.1, 0.1, n)])
    u = rng.uniform(-1, 1, (n, 6))
    reference = opensim_task("osim_force_elements", {"action": "hunt_crossley", "model": str(BLOCK),
                                                     "force": "contact", "body": "block", "q": q, "u": u})
    (pair,) = hunt_crossley_pairs(load_osim(BLOCK))
    function = hunt_crossley_pair_function(pair)
    ground = (np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3))
    touching = 0
    for k in range(n):
        force, point = (np.asarray(x).ravel() for x in function(
            reference["rotation"][k], reference["origin"][k], reference["velocity"][k],
            reference["angular_velocity"][k], *ground))
        torque = np.cross(point - reference["origin"][k], force)
        scale = max(np.abs(reference["force"][k]).max(), 1.0)
        touching += np.abs(reference["force"][k]).max() > 1.0
        assert np.abs(force - reference["force"][k]).max() <= 1e-13 * scale
        assert np.abs(torque - reference["torque"][k]).max() <= 1e-13 * scale
    assert touching >= n // 2


def test_motion_inverse_dynamics_applies_hunt_crossley_as_opensim(opensim_task, tmp_path):
    """OpenSim's InverseDynamicsTool on a body pressed and dragged on the floor by two spheres (floor and spheres of
    different materials) against motion_inverse_dynamics; the contact carries most of the load."""
    from trajopt.model.io import write_sto

    times = np.linspace(0, 1, 201)
    q = np.column_stack([0.15 * np.sin(2 * np.pi * times), 0.3 * times + 0.05 * np.sin(3 * times),
                         0.058 - 0.004 * (1 + np.sin(2 * np.pi * times))])
    names = ("rz", "tx", "ty")
    motion = write_sto(tmp_path / "motion.sto", Table(times, names, np.column_stack([np.degrees(q[:, 0]), q[:, 1:]]),
                                                      in_degrees=True, name="motion"))
    reference = opensim_task("inverse_dynamics_tool", {"model": str(BALL), "coordinates": str(motion),
                                                       "initial_time": 0.0, "final_time": 1.0})
    osim = load_osim(BALL)
    ours = motion_inverse_dynamics(osim, Table(times, names, q, name="motion"))
    expected = reference["generalized_forces"]
    assert list(reference["labels"]) == list(ours.generalized_force_labels)
    without = dataclasses.replace(osim, spec=dataclasses.replace(osim.spec, hunt_crossley_forces=()))
    contact = motion_inverse_dynamics(without, Table(times, names, q, name="motion")).generalized_forces - expected
    assert np.abs(contact).max() > 500
    assert np.abs(ours.generalized_forces - expected).max() <= 1e-10 * np.abs(expected).max()


def test_applied_wrenches_are_the_generalized_forces():
    """ModelForces' body wrenches per frame give its generalized forces (Jᵀ w, through inverse dynamics)."""
    rng = np.random.default_rng(8)
    osim = load_osim(BALL)
    n = 5
    q = np.column_stack([rng.uniform(-0.2, 0.2, n), rng.uniform(-1, 1, n), rng.uniform(0.045, 0.06, n)])
    kinematics = MotionKinematics(np.arange(n, dtype=float), ("rz", "tx", "ty"), q, rng.uniform(-0.3, 0.3, (n, 3)),
                                  np.zeros((n, 3)))
    forces = model_applied_forces(osim)
    wrenches, generalized = forces.wrenches(kinematics), forces.generalized_forces(kinematics)
    assert np.abs(generalized).max() > 100
    for k in range(n):
        zero = np.zeros(3)
        applied = inverse_dynamics(osim.multibody, q[k], kinematics.u[k], zero) - \
            inverse_dynamics(osim.multibody, q[k], kinematics.u[k], zero, wrenches[k])
        np.testing.assert_allclose(np.asarray(applied).ravel(), generalized[k], rtol=1e-12, atol=1e-9)


def test_optimal_control_contacts_refuse_hunt_crossley():
    with pytest.raises(TrajoptInputError) as error:
        osim_contacts(load_osim(BLOCK))
    message = str(error.value)
    assert "HuntCrossleyForce 'contact'" in message and "SmoothSphereHalfSpaceForce" in message
    assert "\n" not in message


@pytest.mark.parametrize("name", ["q1_LimitForce", "q3_limit", "spring"])
def test_passive_elements_match_opensim(opensim_task, name):
    rng = np.random.default_rng(11)
    q, u = _states(rng, 12)
    reference = opensim_task("osim_force_elements", {"action": "generalized_forces", "model": str(CHAIN),
                                                     "force": name, "q": q, "u": u})["values"]
    ours = np.asarray(passive_forces_function(_only(load_osim(CHAIN), name)).map(len(q))(q.T, u.T)).T
    assert np.abs(reference).max() > 1.0
    assert np.max(np.abs(ours - reference)) <= 1e-12 * np.abs(reference).max()


def test_path_actuator_matches_opensim(opensim_task):
    rng = np.random.default_rng(12)
    q, u = _states(rng, 10)
    controls = rng.uniform(-2, 2, len(q))
    osim = load_osim(CHAIN)
    optimal_force = osim.spec.path_actuators[0].optimal_force
    reference = opensim_task("osim_force_elements", {"action": "generalized_forces", "model": str(CHAIN),
                                                     "force": "cable", "q": q, "u": u,
                                                     "actuation": optimal_force * controls})["values"]
    per_control = path_actuators(osim).per_control
    ours = np.array([np.asarray(per_control(q[k]))[:, 0] * controls[k] for k in range(len(q))])
    assert np.abs(reference).max() > 10.0
    assert np.max(np.abs(ours - reference)) <= 1e-12 * np.abs(reference).max()


def test_limit_force_closed_form_and_signs():
    """Beyond the transition the stiffness is constant: -K (q - q_up) with K per degree; inside the limits only
    nothing acts; damping opposes the speed past a limit and vanishes between the limits."""
    force = load_osim(CHAIN).spec.coordinate_limit_forces[0]  # q1: upper 40 deg (2 N m/deg), lower -30 (25), 3 deg

    def value(degrees, speed):
        return float(coordinate_limit_force(force, np.radians(degrees), speed, True))

    assert value(50.0, 0.0) == pytest.approx(-2.0 * 10.0, rel=1e-13)
    assert value(-40.0, 0.0) == pytest.approx(25.0 * 10.0, rel=1e-13)
    assert value(10.0, 3.0) == 0.0
    damping_per_radian = 0.05 * 180 / np.pi
    assert value(50.0, 1.0) - value(50.0, 0.0) == pytest.approx(-damping_per_radian, rel=1e-13)
    assert value(-40.0, -1.0) - value(-40.0, 0.0) == pytest.approx(damping_per_radian, rel=1e-13)
    translational = load_osim(CHAIN).spec.coordinate_limit_forces[1]  # q3: upper 0.05 m, 500 N/m, 0.01 m
    assert float(coordinate_limit_force(translational, 0.08, 0.0, False)) == pytest.approx(-500 * 0.03, rel=1e-13)


def test_model_without_muscles_drives_with_actuators():
    """A model with CoordinateActuators only: no activations, and the problem's accelerations satisfy
    M udot + c - g = optimal_force * control."""
    rng = np.random.default_rng(5)
    osim = load_osim(PENDULUM)
    model = MusculoskeletalModel(osim, None)
    ocp = muscle_driven_problem(model, 1.0)
    assert ocp.activations is None and ocp.excitations is None
    accelerations = ca.Function("a", [ocp.q, ocp.u, ocp.actuator_controls], [ocp.explicit_accelerations])
    q, u, c = rng.uniform(-1, 1, 2), rng.uniform(-2, 2, 2), rng.uniform(-1, 1, 2)
    udot = accelerations(q, u, c)
    tau = np.asarray(inverse_dynamics(osim.multibody, q, u, udot)).ravel()
    np.testing.assert_allclose(tau, 10.0 * c, rtol=1e-10, atol=1e-12)
    times = np.linspace(0, 1, 11)
    table = Table(times, ("q1", "q2"), np.column_stack([np.sin(times), np.cos(times)]), name="swing")
    with pytest.raises(TrajoptInputError, match="static optimization shares the load among muscles"):
        StaticOptimization(model, table)
    with pytest.raises(TrajoptInputError, match="ElasticTendons: the model has no muscles"):
        muscle_driven_problem(model, 1.0, tendons=ElasticTendons())


def test_chain_problem_applies_path_actuator_and_passive_forces():
    """Limited chain: ID of the problem's accelerations = coordinate actuators + path actuator + passive forces."""
    rng = np.random.default_rng(6)
    osim = load_osim(CHAIN)
    passive = passive_forces_function(osim)
    actuators = path_actuators(osim)
    ocp = muscle_driven_problem(MusculoskeletalModel(osim, None), 1.0, path_actuators=actuators,
                                extra_generalized_forces=lambda problem, q, u: passive(q, u))
    accelerations = ca.Function("a", [ocp.q, ocp.u, ocp.actuator_controls, ocp.path_actuator_controls],
                                [ocp.explicit_accelerations])
    q, u = _states(rng, 3)
    for k in range(3):
        c, p = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 1)
        udot = accelerations(q[k], u[k], c, p)
        tau = np.asarray(inverse_dynamics(osim.multibody, q[k], u[k], udot)).ravel()
        expected = (10.0 * c + np.asarray(actuators.per_control(q[k]) @ p).ravel()
                    + np.asarray(passive(q[k], u[k])).ravel())
        np.testing.assert_allclose(tau, expected, rtol=1e-9, atol=1e-9)


def test_motion_inverse_dynamics_takes_passive_elements_off_as_opensim(opensim_task, tmp_path):
    """OpenSim's InverseDynamicsTool on the limited chain (its limit forces and spring apply; the actuators have
    no control) against motion_inverse_dynamics, over a motion that crosses every limit."""
    from trajopt.model.io import write_sto

    times = np.linspace(0, 1, 101)
    q = np.column_stack([np.radians(45 * np.sin(2 * np.pi * times) - 5), 0.8 * np.cos(3 * times),
                         0.02 + 0.05 * np.sin(4 * np.pi * times)])
    table = Table(times, ("q1", "q2", "q3"), np.column_stack([np.degrees(q[:, :2]), q[:, 2]]), name="motion",
                  in_degrees=True)
    motion = write_sto(tmp_path / "motion.sto", table)
    reference = opensim_task("inverse_dynamics_tool", {"model": str(CHAIN), "coordinates": str(motion),
                                                       "initial_time": 0.0, "final_time": 1.0})
    ours = motion_inverse_dynamics(load_osim(CHAIN), Table(times, ("q1", "q2", "q3"), q, name="motion"))
    labels = list(reference["labels"])
    assert labels == list(ours.generalized_force_labels)
    expected = reference["generalized_forces"]
    assert np.abs(expected).max() > 10
    error = np.max(np.abs(ours.generalized_forces - expected))
    assert error <= 1e-10 * np.abs(expected).max(), error


def test_muscle_driven_inverse_refuses_path_actuators(tmp_path):
    from trajopt.studies.analysis.muscle_inverse_files import load_inverse

    with pytest.raises(TrajoptInputError, match="PathActuator 'cable': the muscle-driven inverse takes muscles"):
        load_inverse(CHAIN, tmp_path / "unused.sto")


def test_inverse_dynamics_command(tmp_path):
    """The command applies the contact as the library does (checked against OpenSim above) and refuses a free-joint
    model in one line, exit 2."""
    from trajopt.edge.cli import main
    from trajopt.model.io import read_motion, write_sto

    times = np.linspace(0, 1, 51)
    motion = write_sto(tmp_path / "motion.sto", Table(times, ("rz", "tx", "ty"), np.column_stack(
        [np.zeros(51), 0.1 * times, np.full(51, 0.055)]), name="motion"))
    assert main(["inverse-dynamics", str(BALL), str(motion), "--out", str(tmp_path / "id")]) == 0
    written = read_motion(tmp_path / "id" / "inverse_dynamics.sto")
    library = motion_inverse_dynamics(load_osim(BALL), read_motion(motion))
    assert np.abs(written.column("ty_force")).max() > 100
    np.testing.assert_allclose(written.data, library.generalized_forces, rtol=1e-12, atol=1e-9)
    assert main(["inverse-dynamics", str(BLOCK), str(motion), "--out", str(tmp_path / "x")]) == 2
