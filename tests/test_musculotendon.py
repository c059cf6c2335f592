"""Musculotendon units against OpenSim's DeGrooteFregly2016Muscle, identities and derivative checks."""

import casadi
import numpy as np
import pytest

from trajopt.errors import TrajoptInputError
from trajopt.core.muscles import DEGROOTE2016_PUBLISHED, ElasticTendonMuscle, MuscleParameters, RigidTendonMuscle

# Two muscles exercising every OpenSim property trajopt maps.
PENNATED = dict(
    max_isometric_force=800.0,
    optimal_fiber_length=0.1,
    tendon_slack_length=0.2,
    pennation_angle_at_optimal=0.25,
    max_contraction_velocity=10.0,
    fiber_damping=0.02,
)
WIDE = dict(
    max_isometric_force=300.0,
    optimal_fiber_length=0.08,
    tendon_slack_length=0.25,
    pennation_angle_at_optimal=0.0,
    max_contraction_velocity=8.0,
    tendon_strain_at_one_norm_force=0.06,
    passive_fiber_strain_at_one_norm_force=0.5,
    active_force_width_scale=1.4,
    fiber_damping=0.0,
)
NO_PASSIVE = dict(WIDE, ignore_passive_fiber_force=True)
N_STATES = 24


def _parameters(reference) -> MuscleParameters:
    """trajopt parameters from the property values OpenSim reports for its muscle."""
    return MuscleParameters(
        max_isometric_force=reference["max_isometric_force"],
        optimal_fiber_length=reference["optimal_fiber_length"],
        tendon_slack_length=reference["tendon_slack_length"],
        optimal_pennation_angle=reference["pennation_angle_at_optimal"],
        max_contraction_velocity=reference["max_contraction_velocity"],
        tendon_strain_at_one_norm_force=reference["tendon_strain_at_one_norm_force"],
        passive_fiber_strain_at_one_norm_force=reference["passive_fiber_strain_at_one_norm_force"],
        active_force_width_scale=reference["active_force_width_scale"],
        fiber_damping=reference["fiber_damping"],
        ignore_passive_fiber_force=bool(reference["ignore_passive_fiber_force"]),
        activation_time_constant=reference["activation_time_constant"],
        deactivation_time_constant=reference["deactivation_time_constant"],
    )


def _states(properties, fiber_range, seed):
    rng = np.random.default_rng(seed)
    l_opt, l_s = properties["optimal_fiber_length"], properties["tendon_slack_length"]
    lengths = l_s + l_opt * rng.uniform(*fiber_range, N_STATES)
    speeds = l_opt * properties["max_contraction_velocity"] * rng.uniform(-0.5, 0.5, N_STATES)
    activations = rng.uniform(0.05, 1.0, N_STATES)
    return lengths, speeds, activations


def _evaluate(function, n, **inputs):
    outputs = function.map(n)(**{k: np.reshape(v, (1, -1)) for k, v in inputs.items()})
    return {k: np.asarray(v).ravel() for k, v in outputs.items()}


@pytest.mark.parametrize(
    "properties", [PENNATED, WIDE, NO_PASSIVE], ids=["pennated_damped", "wide_compliant", "no_passive"]
)
def test_rigid_tendon_equals_opensim(opensim_task, properties):
    lengths, speeds, activations = _states(properties, (0.55, 1.5), seed=1)
    reference = opensim_task(
        "degroote_muscle",
        dict(properties, tendon_compliance="rigid", lengths=lengths, speeds=speeds, activations=activations),
    )
    assert np.allclose(reference["state_length"], lengths, rtol=0, atol=1e-14)
    muscle = RigidTendonMuscle(_parameters(reference))
    ours = _evaluate(
        muscle.quantities,
        N_STATES,
        activation=activations,
        musculotendon_length=reference["state_length"],
        musculotendon_velocity=reference["state_lengthening_speed"],
    )
    relative = np.abs(ours["tendon_force"] - reference["state_tendon_force"]) / np.abs(reference["state_tendon_force"])
    assert np.max(relative) <= 1e-6
    scale = properties["max_isometric_force"]
    for name in ("active_fiber_force", "passive_fiber_force", "fiber_damping_force"):
        assert np.max(np.abs(ours[name] - reference[f"state_{name}"])) <= 1e-9 * scale, name
    for name in ("fiber_length", "fiber_velocity", "pennation_angle"):
        assert np.max(np.abs(ours[name] - reference[f"state_{name}"])) <= 1e-12, name


@pytest.mark.parametrize("properties", [PENNATED, WIDE], ids=["pennated_damped", "wide_compliant"])
def test_elastic_tendon_equilibrium_equals_opensim(opensim_task, properties):
    lengths, speeds, activations = _states(properties, (0.8, 1.8), seed=2)
    reference = opensim_task(
        "degroote_muscle",
        dict(properties, tendon_compliance="elastic", lengths=lengths, speeds=speeds, activations=activations),
    )
    muscle = ElasticTendonMuscle(_parameters(reference))
    force = muscle.equilibrium_normalized_tendon_force(
        activations, reference["state_length"], reference["state_lengthening_speed"]
    )
    ours = force * properties["max_isometric_force"]
    relative = np.abs(ours - reference["state_tendon_force"]) / np.abs(reference["state_tendon_force"])
    assert np.max(relative) <= 1e-4
    # OpenSim's fiber state at its equilibrium equals ours at the same tendon force.
    quantities = _evaluate(
        muscle.quantities,
        N_STATES,
        activation=activations,
        musculotendon_length=reference["state_length"],
        musculotendon_velocity=reference["state_lengthening_speed"],
        normalized_tendon_force=reference["state_normalized_tendon_force"],
        normalized_tendon_force_derivative=np.zeros(N_STATES),
    )
    assert np.max(np.abs(quantities["fiber_length"] - reference["state_fiber_length"])) <= 1e-12


def test_implicit_residual_equals_opensim(opensim_task):
    rng = np.random.default_rng(3)
    n = 30
    inputs = dict(
        residual_lengths=0.2 + 0.1 * rng.uniform(0.8, 1.6, n),
        residual_speeds=rng.uniform(-0.4, 0.4, n),
        residual_activations=rng.uniform(0.05, 1.0, n),
        residual_normalized_tendon_forces=rng.uniform(0.05, 1.5, n),
        residual_normalized_tendon_force_derivatives=rng.uniform(-3.0, 3.0, n),
    )
    reference = opensim_task("degroote_muscle", dict(PENNATED, tendon_compliance="elastic", **inputs))
    muscle = ElasticTendonMuscle(_parameters(reference))
    residual = muscle.equilibrium_residual.map(n)(
        activation=inputs["residual_activations"].reshape(1, -1),
        musculotendon_length=inputs["residual_lengths"].reshape(1, -1),
        musculotendon_velocity=inputs["residual_speeds"].reshape(1, -1),
        normalized_tendon_force=inputs["residual_normalized_tendon_forces"].reshape(1, -1),
        normalized_tendon_force_derivative=inputs["residual_normalized_tendon_force_derivatives"].reshape(1, -1),
    )["equilibrium_residual"]
    # OpenSim 4.6 reports the residual normalized by max isometric force, as trajopt does.
    assert np.max(np.abs(np.asarray(residual).ravel() - reference["equilibrium_residual"])) <= 1e-10


def _pennated(**changes):
    values = dict(PENNATED, optimal_pennation_angle=PENNATED["pennation_angle_at_optimal"], **changes)
    del values["pennation_angle_at_optimal"]
    return MuscleParameters(**values)


def test_tendon_force_is_affine_in_activation():
    muscle = RigidTendonMuscle(_pennated())
    rng = np.random.default_rng(4)
    for length, speed, activation in zip(rng.uniform(0.26, 0.34, 10), rng.uniform(-0.5, 0.5, 10),
                                         rng.uniform(0, 1, 10)):
        at_zero, per_activation = muscle.tendon_force_affine(length, speed)
        force = muscle.tendon_force(activation, length, speed)
        assert abs(float(at_zero + activation * per_activation - force)) <= 1e-12 * 800


def test_explicit_and_implicit_forms_agree():
    # The explicit form's tendon force and tendon velocity make the implicit residual vanish.
    muscle = ElasticTendonMuscle(_pennated(fiber_damping=0.0))
    k = muscle.constants.tendon_stiffness(0.049)
    rng = np.random.default_rng(5)
    lengths, speeds, activations = rng.uniform(0.29, 0.33, 10), rng.uniform(-0.3, 0.3, 10), rng.uniform(0.1, 1, 10)
    equilibrium = muscle.equilibrium_normalized_tendon_force(activations, lengths, speeds)
    for length, speed, activation, force, step in zip(lengths, speeds, activations, equilibrium,
                                                      rng.uniform(-0.01, 0.01, 10)):
        # a fiber length near equilibrium, so the fiber velocity stays within the force-velocity range
        at_rest = muscle.quantities(
            activation=activation,
            musculotendon_length=length,
            musculotendon_velocity=speed,
            normalized_tendon_force=force,
            normalized_tendon_force_derivative=0.0,
        )
        fiber = float(at_rest["normalized_fiber_length"]) + step
        explicit = muscle.explicit_quantities(
            activation=activation, musculotendon_length=length, musculotendon_velocity=speed,
            normalized_fiber_length=fiber
        )
        force = float(explicit["normalized_tendon_force"])
        derivative = k * (force + muscle.constants.tendon_shift) * float(explicit["tendon_velocity"]) / 0.2
        residual = muscle.equilibrium_residual(activation, length, speed, force, derivative)
        assert abs(float(residual)) <= 1e-12
        implicit = muscle.quantities(
            activation=activation,
            musculotendon_length=length,
            musculotendon_velocity=speed,
            normalized_tendon_force=force,
            normalized_tendon_force_derivative=derivative,
        )
        assert abs(float(implicit["normalized_fiber_length"]) - fiber) <= 1e-12
        rate = muscle.fiber_length_dynamics(activation, length, fiber)
        assert abs(float(rate) - float(implicit["fiber_velocity"]) / 0.1) <= 1e-12 * max(1.0, abs(float(rate)))


def test_explicit_form_refuses_damping():
    muscle = ElasticTendonMuscle(_pennated(fiber_damping=0.02, name="soleus"))
    with pytest.raises(TrajoptInputError, match="soleus.*fiber_damping"):
        muscle.fiber_length_dynamics


def _jacobian_matches_differences(function, point, h=1e-6, tolerance=1e-6):
    symbols = [casadi.SX.sym(name) for name in function.name_in()]
    output = function(*symbols)
    jacobian = casadi.Function("j", symbols, [casadi.jacobian(output, casadi.vertcat(*symbols))])
    analytic = np.asarray(jacobian(*point)).ravel()
    for i in range(len(point)):
        up, down = list(point), list(point)
        up[i] += h
        down[i] -= h
        difference = (float(function(*up)) - float(function(*down))) / (2 * h)
        assert abs(analytic[i] - difference) <= tolerance * max(1.0, abs(analytic[i])), (function.name(), i)


@pytest.mark.parametrize("constants_name", ["opensim", "published"])
def test_casadi_jacobians_equal_central_differences(constants_name):
    constants = {"published": DEGROOTE2016_PUBLISHED}.get(constants_name)
    kwargs = {} if constants is None else {"constants": constants}
    _jacobian_matches_differences(RigidTendonMuscle(_pennated(), **kwargs).tendon_force, [0.6, 0.31, -0.2])
    elastic = ElasticTendonMuscle(_pennated(), **kwargs)
    _jacobian_matches_differences(elastic.equilibrium_residual, [0.6, 0.31, -0.2, 0.4, 1.5])
    undamped = ElasticTendonMuscle(_pennated(fiber_damping=0.0), **kwargs)
    _jacobian_matches_differences(undamped.fiber_length_dynamics, [0.6, 0.31, 1.05])


def test_bad_parameter_names_muscle_and_value():
    with pytest.raises(TrajoptInputError, match="biceps.*optimal_fiber_length.*-0.1"):
        MuscleParameters(100.0, -0.1, 0.2, name="biceps")
    with pytest.raises(TrajoptInputError, match="biceps.*optimal_pennation_angle"):
        MuscleParameters(100.0, 0.1, 0.2, optimal_pennation_angle=1.7, name="biceps")


def test_explicit_fiber_length_form_equals_sympy():
    # SymPy's MusculotendonDeGroote2016 (FIBER_LENGTH_EXPLICIT, published constants) on a straight path of length q.
    import sympy as sp
    import sympy.physics.mechanics as me
    from sympy.physics import biomechanics as bm

    q = me.dynamicsymbols("q")
    frame, origin, insertion = me.ReferenceFrame("N"), me.Point("O"), me.Point("P")
    insertion.set_pos(origin, q * frame.x)
    origin.set_vel(frame, 0)
    insertion.set_vel(frame, q.diff() * frame.x)
    reference = bm.MusculotendonDeGroote2016.with_defaults(
        "m",
        me.LinearPathway(origin, insertion),
        bm.FirstOrderActivationDeGroote2016.with_defaults("m"),
        musculotendon_dynamics=bm.MusculotendonFormulation.FIBER_LENGTH_EXPLICIT,
        tendon_slack_length=0.2,
        peak_isometric_force=800.0,
        optimal_fiber_length=0.1,
        maximal_fiber_velocity=1.0,  # m/s = max_contraction_velocity 10 * optimal_fiber_length 0.1
        optimal_pennation_angle=0.25,
        fiber_damping_coefficient=0.0,
    )
    length, fiber, activation = sp.symbols("length fiber activation", positive=True)
    rate = reference.rhs()[0].xreplace({q: length, reference.x[0]: fiber, reference.x[1]: activation}).doit()
    expected = sp.lambdify((activation, length, fiber), rate, "mpmath")

    muscle = ElasticTendonMuscle(_pennated(fiber_damping=0.0), constants=DEGROOTE2016_PUBLISHED)
    rng = np.random.default_rng(6)
    lengths, activations = rng.uniform(0.29, 0.33, 20), rng.uniform(0.1, 1.0, 20)
    equilibrium = muscle.equilibrium_normalized_tendon_force(activations, lengths, 0.0)
    for a, l_mt, force, step in zip(activations, lengths, equilibrium, rng.uniform(-0.01, 0.01, 20)):
        at_rest = muscle.quantities(
            activation=a,
            musculotendon_length=l_mt,
            musculotendon_velocity=0.0,
            normalized_tendon_force=force,
            normalized_tendon_force_derivative=0.0,
        )
        fiber_length = float(at_rest["normalized_fiber_length"]) + step
        value = float(expected(a, l_mt, fiber_length))
        actual = float(muscle.fiber_length_dynamics(a, l_mt, fiber_length))
        assert abs(actual - value) <= 1e-12 * max(1.0, abs(value))


@pytest.mark.parametrize("damping", [0.0, 0.02, 0.5])
def test_explicit_tendon_force_derivative_solves_the_equilibrium(damping):
    """d f̃T/dt from ``normalized_tendon_force_derivative`` zeroes the implicit residual at random states, and without
    damping equals the fiber-length form's: the tendon velocity of ``explicit_quantities`` (inverse force-velocity
    curve) times the tendon stiffness d f̃T/d l̃T = kT (f̃T + 0.2) over the slack length."""
    muscle = ElasticTendonMuscle(_pennated(fiber_damping=damping))
    rng = np.random.default_rng(11)
    n = 200
    a, length = rng.uniform(0.02, 1.0, n), 0.2 + 0.1 * rng.uniform(0.7, 1.5, n)
    speed, force = rng.uniform(-1.0, 1.0, n), rng.uniform(0.0, 1.5, n)
    a_sym, l_sym, v_sym, f_sym = (casadi.SX.sym(name) for name in "alvf")
    rate = casadi.Function("rate", [a_sym, l_sym, v_sym, f_sym],
                           [muscle.normalized_tendon_force_derivative(a_sym, l_sym, v_sym, f_sym)]).map(n)
    rates = np.asarray(rate(a, length, speed, force)).ravel()
    finite = np.isfinite(rates)
    # without damping a weak fiber cannot hold a large tendon force at any finite speed: those states have no root
    assert finite.all() if damping > 0 else finite.mean() > 0.9
    residual = np.asarray(muscle.equilibrium_residual.map(n)(a, length, speed, force, rates)).ravel()
    assert np.max(np.abs(residual[finite])) <= 1e-12  # measured 6.7e-16
    if damping == 0.0:
        fiber = rng.uniform(0.6, 1.4, n)
        explicit = _evaluate(muscle.explicit_quantities, n, activation=a, musculotendon_length=length,
                             musculotendon_velocity=speed, normalized_fiber_length=fiber)
        forces = explicit["normalized_tendon_force"]
        keep = forces > 0.0
        stiffness = np.log(1.2 / 0.2) / 0.049 * (forces + 0.2)  # OpenSim's 0.2 exp(kT (l̃T - 1)) - 0.2, strain 0.049
        expected = explicit["tendon_velocity"] * stiffness / 0.2
        ours = np.asarray(rate(a, length, speed, forces)).ravel()
        np.testing.assert_allclose(ours[keep], expected[keep], rtol=1e-9, atol=1e-9)


def test_explicit_tendon_force_derivative_at_zero_activation_is_finite_with_damping():
    """At activation 0 a damped fiber still holds the tendon (β ṽM carries what the passive force does not): the
    rate zeroes the implicit residual, and its Jacobian (what an implicit integrator factorizes) is finite."""
    muscle = ElasticTendonMuscle(_pennated(fiber_damping=0.01))
    rng = np.random.default_rng(12)
    n = 100
    length, speed, force = 0.2 + 0.1 * rng.uniform(0.7, 1.5, n), rng.uniform(-1.0, 1.0, n), rng.uniform(0.0, 0.5, n)
    a_sym, l_sym, v_sym, f_sym = (casadi.SX.sym(name) for name in "alvf")
    rate_expression = muscle.normalized_tendon_force_derivative(a_sym, l_sym, v_sym, f_sym)
    inputs = casadi.vertcat(a_sym, l_sym, v_sym, f_sym)
    rate = casadi.Function("rate", [a_sym, l_sym, v_sym, f_sym],
                           [rate_expression, casadi.jacobian(rate_expression, inputs)]).map(n)
    values, jacobians = (np.asarray(x) for x in rate(np.zeros(n), length, speed, force))
    assert np.isfinite(values).all() and np.isfinite(jacobians).all()
    residual = np.asarray(muscle.equilibrium_residual.map(n)(np.zeros(n), length, speed, force, values)).ravel()
    assert np.max(np.abs(residual)) <= 1e-12
