"""Dynamics identities at random states and analytic cases.

- ID(q, u, FD(q, u, tau)) = tau with applied wrenches; ID = M udot + C;
- M symmetric positive definite; 1/2 u^T M u = sum over bodies of 1/2 (m v_com^2 + w^T I w);
- Lagrange's equations (casadi derivatives of T - V) equal recursive Newton-Euler when q = u;
- power balance d(T + V)/dt = u^T tau + F . v_point for the quaternion models;
- a single pendulum (tau = m g l sin(theta) + I theta''), a sliding mass on a ramp, and their
  joint reaction loads; locked coordinates.
"""

import casadi as ca
import numpy as np
import pytest

from trajopt.core.multibody import (
    ReactionAxes,
    bias_forces,
    body_pose,
    body_torque,
    forward_dynamics,
    frame_jacobian,
    integrate,
    inverse_dynamics,
    joint_reaction_loads,
    kinetic_energy,
    mass_matrix,
    point_acceleration,
    point_force,
    point_velocity,
    potential_energy,
)
from trajopt.core.multibody.example_models import (
    double_pendulum_3d,
    planar_chain,
    random_state,
    single_pendulum,
    sliding_mass,
    spatial_chain,
)

MODELS = {
    "planar_chain": planar_chain,
    "spatial_chain": spatial_chain,
    "spatial_chain_euler": lambda: spatial_chain(with_quaternions=False),
    "double_pendulum_3d": double_pendulum_3d,
    "double_pendulum_yzy": lambda: double_pendulum_3d("YZY"),
}


def _v(x):
    return np.asarray(x, dtype=float).ravel()


@pytest.fixture(scope="module", params=list(MODELS))
def model(request):
    return MODELS[request.param]()


def _random_wrenches(model, q, rng):
    body = model.bodies[-1].name
    wrenches = point_force(model, q, body, rng.normal(size=3) * 0.1, rng.normal(size=3))
    return wrenches + body_torque(model, model.bodies[0].name, rng.normal(size=3))


def test_inverse_of_forward_dynamics_is_identity(model):
    rng = np.random.default_rng(21)
    for _ in range(5):
        q, u, udot = random_state(model, rng)
        tau = rng.normal(size=model.nv) * 5
        wrenches = _random_wrenches(model, q, rng)
        accelerations = forward_dynamics(model, q, u, tau, wrenches)
        tau_back = _v(inverse_dynamics(model, q, u, accelerations, wrenches))
        assert np.abs(tau_back - tau).max() < 1e-10 * (1 + np.abs(tau).max())
        mass = np.asarray(mass_matrix(model, q))
        assert np.abs(mass @ udot + _v(bias_forces(model, q, u, wrenches))
                      - _v(inverse_dynamics(model, q, u, udot, wrenches))).max() < 1e-10


def test_mass_matrix_is_symmetric_positive_definite_and_gives_kinetic_energy(model):
    rng = np.random.default_rng(22)
    for _ in range(5):
        q, u, _ = random_state(model, rng)
        mass = np.asarray(mass_matrix(model, q))
        assert np.abs(mass - mass.T).max() < 1e-14 * np.abs(mass).max()
        assert np.linalg.eigvalsh(mass).min() > 0
        # Kinetic energy summed body by body from center-of-mass velocity and angular velocity.
        total = 0.0
        for body in model.bodies:
            jacobian = np.asarray(frame_jacobian(model, q, body.name, body.center_of_mass))
            omega_ground, v_com = jacobian[:3] @ u, jacobian[3:] @ u
            omega_body = np.asarray(body_pose(model, q, body.name)[0]).T @ omega_ground
            total += 0.5 * body.mass * v_com @ v_com + 0.5 * omega_body @ body.inertia_matrix @ omega_body
        assert abs(0.5 * u @ mass @ u - total) < 1e-12 * (1 + total)
        assert abs(float(kinetic_energy(model, q, u)) - total) < 1e-12 * (1 + total)


@pytest.mark.parametrize("name", ["planar_chain", "spatial_chain_euler", "double_pendulum_yzy"])
def test_recursive_newton_euler_equals_lagrange_equations(name):
    model = MODELS[name]()
    assert model.nq == model.nv  # Lagrange's equations in these coordinates need qdot = u
    q, u, udot = ca.SX.sym("q", model.nq), ca.SX.sym("u", model.nv), ca.SX.sym("a", model.nv)
    lagrangian = kinetic_energy(model, q, u) - potential_energy(model, q)
    momentum = ca.gradient(lagrangian, u)
    # d/dt (dL/du) - dL/dq with qdot = u.
    lagrange = ca.jtimes(momentum, q, u) + ca.jtimes(momentum, u, udot) - ca.gradient(lagrangian, q)
    f = ca.Function("lagrange", [q, u, udot], [lagrange])
    rng = np.random.default_rng(23)
    for _ in range(5):
        qk, uk, ak = random_state(model, rng)
        expected = _v(f(qk, uk, ak))
        assert np.abs(_v(inverse_dynamics(model, qk, uk, ak)) - expected).max() < 1e-10 * (1 + np.abs(expected).max())


@pytest.mark.parametrize("name", ["spatial_chain", "double_pendulum_3d"])
def test_power_balance_with_quaternions_and_applied_force(name):
    model = MODELS[name]()
    rng = np.random.default_rng(24)
    q, u, _ = random_state(model, rng)
    tau = rng.normal(size=model.nv)
    body, point, force = model.bodies[-1].name, (0.05, -0.1, 0.02), rng.normal(size=3)

    def energy_and_power(qk, uk):
        wrenches = point_force(model, qk, body, point, force)  # constant force in ground axes
        udot = _v(forward_dynamics(model, qk, uk, tau, wrenches))
        energy = float(kinetic_energy(model, qk, uk) + potential_energy(model, qk))
        power = uk @ tau + force @ _v(point_velocity(model, qk, uk, body, point))
        return energy, power, udot

    _, power, udot = energy_and_power(q, u)
    h = 1e-5
    energies = []
    for t in (h, -h):
        qt = _v(integrate(model, q, u * t + 0.5 * udot * t**2, 1.0))
        energies.append(energy_and_power(qt, u + udot * t)[0])
    assert abs((energies[0] - energies[1]) / (2 * h) - power) < 1e-6 * (1 + abs(power))


def test_single_pendulum_matches_analytic_inverse_dynamics_and_reaction():
    mass, length, inertia, g = 2.0, 0.8, 0.1, 9.81
    model = single_pendulum(mass, length, inertia, g)
    for theta, omega, alpha in [(0.3, 0.7, -1.1), (-1.2, 2.0, 0.4), (2.5, -1.0, 3.0)]:
        tau = float(inverse_dynamics(model, [theta], [omega], [alpha]))
        assert abs(tau - (mass * g * length * np.sin(theta) + (inertia + mass * length**2) * alpha)) < 1e-12
        assert abs(float(forward_dynamics(model, [theta], [omega], [tau])) - alpha) < 1e-12
        # Reaction on the bob at the pivot: F = m (a_com - g); moment about the pivot = tau about z.
        r = length * np.array([np.sin(theta), -np.cos(theta), 0.0])
        a_com = alpha * np.cross([0, 0, 1], r) - omega**2 * r
        forces, moments = joint_reaction_loads(model, [theta], [omega], [alpha])
        assert np.abs(_v(forces) - mass * (a_com - np.array([0.0, -g, 0.0]))).max() < 1e-12
        assert np.abs(_v(moments) - [0.0, 0.0, tau]).max() < 1e-12
        # Expressed in the bob's frame: the same vector rotated by -theta about z.
        forces_child, _ = joint_reaction_loads(model, [theta], [omega], [alpha], expressed_in=ReactionAxes.CHILD)
        c, s = np.cos(theta), np.sin(theta)
        assert np.abs(_v(forces_child) - np.array([[c, s, 0], [-s, c, 0], [0, 0, 1]]) @ _v(forces)).max() < 1e-12


def test_sliding_mass_on_a_ramp():
    mass, incline, g = 3.0, 0.4, 9.81
    model = sliding_mass(mass, incline, g)
    for x, speed, accel in [(0.0, 0.0, 0.0), (0.5, -1.0, 2.0)]:
        force = float(inverse_dynamics(model, [x], [speed], [accel]))
        assert abs(force - mass * (accel + g * np.sin(incline))) < 1e-12
        reaction, moment = joint_reaction_loads(model, [x], [speed], [accel], expressed_in=ReactionAxes.PARENT)
        # In the ramp frame: along-ramp force is the actuator's, normal force carries m g cos(incline).
        assert np.abs(_v(reaction) - [force, mass * g * np.cos(incline), 0.0]).max() < 1e-12
        assert np.abs(_v(moment)).max() < 1e-12


def test_generalized_force_of_point_force_is_jacobian_transpose():
    # 'nail' is welded to 'finger' and folded into it by the algorithms: its load must still count.
    model = spatial_chain()
    rng = np.random.default_rng(25)
    q, u, udot = random_state(model, rng)
    for body in ("finger", "nail", "trunk"):
        point, force = (0.02, -0.03, 0.01), rng.normal(size=3)
        wrenches = point_force(model, q, body, point, force)
        jacobian = np.asarray(frame_jacobian(model, q, body, point))
        difference = _v(inverse_dynamics(model, q, u, udot)) - _v(inverse_dynamics(model, q, u, udot, wrenches))
        assert np.abs(difference - jacobian[3:].T @ force).max() < 1e-12, body
        free_difference = (_v(forward_dynamics(model, q, u, np.zeros(model.nv), wrenches))
                           - _v(forward_dynamics(model, q, u, np.zeros(model.nv))))
        mass = np.asarray(mass_matrix(model, q))
        assert np.abs(mass @ free_difference - jacobian[3:].T @ force).max() < 1e-10, body


def test_locked_coordinates_do_not_accelerate():
    model = planar_chain(locked_coordinates=("telescope_length",))
    locked = model.coordinate_names.index("telescope_length")
    assert model.locked_speed_indices() == [locked]
    rng = np.random.default_rng(26)
    q, u, _ = random_state(model, rng)
    u[locked] = 0.0
    tau = rng.normal(size=model.nv)
    udot = _v(forward_dynamics(model, q, u, tau, respect_locks=True))
    assert udot[locked] == 0.0
    residual = _v(inverse_dynamics(model, q, u, udot)) - tau
    free = model.unlocked_speed_indices()
    assert np.abs(residual[free]).max() < 1e-10  # the lock's reaction appears only in its own row
    assert abs(residual[locked]) > 1e-3


def test_root_reaction_force_equals_total_momentum_rate(model):
    # Newton for the whole tree: the load ground applies through the root joint is sum m (a_com - g).
    rng = np.random.default_rng(27)
    q, u, udot = random_state(model, rng)
    expected = sum(body.mass * (_v(point_acceleration(model, q, u, udot, body.name, body.center_of_mass))
                                - model.gravity)
                   for body in model.bodies)
    forces, _ = joint_reaction_loads(model, q, u, udot)
    root = [k for k, joint in enumerate(model.joints) if joint.parent.body == "ground"]
    assert len(root) == 1
    assert np.abs(np.asarray(forces)[:, root[0]] - expected).max() < 1e-10 * (1 + np.abs(expected).max())
