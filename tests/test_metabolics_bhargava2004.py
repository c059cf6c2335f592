"""trajopt.core.muscles.metabolics_bhargava2004 and trajopt.studies.gait.metabolic_cost: analytic values, limits, and
OpenSim's Bhargava2004SmoothedMuscleMetabolics term by term on the 18 DeGrooteFregly2016 muscles of 2D_gait.osim."""

import math
import warnings

import casadi as ca
import numpy as np
import pytest

from trajopt.errors import TrajoptInputError
from trajopt.examples.data import model_file, problem_file
from trajopt.studies.gait.metabolic_cost import (
    body_mass,
    metabolic_cost,
    predsim_metabolic_cost,
    whole_body_metabolic_rate,
)
from trajopt.model.io.opensim_reference import opensim_available, run_opensim_task
from trajopt.core.muscles import (
    Bhargava2004Constants,
    Bhargava2004MuscleConstants,
    HuberSmoothing,
    MetabolicInputs,
    MuscleParameters,
    NoSmoothing,
    RigidTendonMuscle,
    TanhSmoothing,
    basal_metabolic_rate_bhargava2004,
    fiber_length_dependence_bhargava2004,
    metabolic_rates_bhargava2004,
    metabolics_bhargava2004_function,
    muscle_mass_bhargava2004,
)
from trajopt.model.musculoskeletal import MusculoskeletalModel, degroote_parameters
from trajopt.core.ocp import Effort, Guess, HermiteSimpson, Ipopt
from trajopt.model.osim import load_osim
from trajopt.model.paths.geometric import GeometricPaths
from trajopt.model.paths.polynomial import PolynomialPaths
from trajopt.studies.prediction import (
    OPENSIM_ACTIVATION_SMOOTHING,
    StateBounds,
    muscle_driven_problem,
)

MODEL_FILE = model_file("gait2d")
STATES = 200
TERMS = ("activation_heat_rate", "maintenance_heat_rate", "shortening_heat_rate", "mechanical_work_rate",
         "total_rate")
# Relative error with this floor (W) in the denominator: below 1 W the error is absolute (W).
FLOOR = 1.0
TOLERANCE = 1e-9

# (label, trajopt constants, OpenSim properties that differ from the component's defaults).
TANH = {"use_smoothing": True, "smoothing_type": "tanh"}
HUBER = {"use_smoothing": True, "smoothing_type": "huber"}
OPTION_SETS = (
    ("default (tanh)", Bhargava2004Constants(), TANH),
    ("no smoothing", Bhargava2004Constants(smoothing=NoSmoothing()), {"use_smoothing": False}),
    ("huber", Bhargava2004Constants(smoothing=HuberSmoothing()), HUBER),
    ("force-dependent shortening", Bhargava2004Constants(use_force_dependent_shortening_prop_constant=True,
                                                         velocity_smoothing=20.0),
     {**TANH, "use_force_dependent_shortening_prop_constant": True, "velocity_smoothing": 20.0}),
    ("force-dependent shortening, huber", Bhargava2004Constants(
        smoothing=HuberSmoothing(), use_force_dependent_shortening_prop_constant=True),
     {**HUBER, "use_force_dependent_shortening_prop_constant": True}),
    ("force-dependent shortening, no smoothing", Bhargava2004Constants(
        smoothing=NoSmoothing(), use_force_dependent_shortening_prop_constant=True),
     {"use_smoothing": False, "use_force_dependent_shortening_prop_constant": True}),
    ("negative work excluded", Bhargava2004Constants(include_negative_mechanical_work=False),
     {**TANH, "include_negative_mechanical_work": False}),
    ("negative work excluded, huber", Bhargava2004Constants(smoothing=HuberSmoothing(),
                                                            include_negative_mechanical_work=False),
     {**HUBER, "include_negative_mechanical_work": False}),
    ("negative work excluded, no smoothing", Bhargava2004Constants(smoothing=NoSmoothing(),
                                                                   include_negative_mechanical_work=False),
     {"use_smoothing": False, "include_negative_mechanical_work": False}),
    ("negative total power allowed", Bhargava2004Constants(forbid_negative_total_power=False, power_smoothing=5.0),
     {**TANH, "forbid_negative_total_power": False, "power_smoothing": 5.0}),
    ("no minimum heat rate", Bhargava2004Constants(enforce_minimum_heat_rate_per_muscle=False),
     {**TANH, "enforce_minimum_heat_rate_per_muscle": False}),
    ("smoothing 3/5/2, effort scaling 0.8", Bhargava2004Constants(
        velocity_smoothing=3.0, power_smoothing=5.0, heat_rate_smoothing=2.0, muscle_effort_scaling_factor=0.8),
     {**TANH, "velocity_smoothing": 3.0, "power_smoothing": 5.0, "heat_rate_smoothing": 2.0,
      "muscle_effort_scaling_factor": 0.8}),
    ("basal 1.5 M^0.9", Bhargava2004Constants(basal_coefficient=1.5, basal_exponent=0.9),
     {**TANH, "basal_coefficient": 1.5, "basal_exponent": 0.9}),
    ("basal off", Bhargava2004Constants(basal_rate_on=False), {**TANH, "basal_coefficient": 0.0}),
)
OPENSIM_DEFAULTS = {"use_smoothing": False, "smoothing_type": "tanh", "velocity_smoothing": 10.0,
                    "power_smoothing": 10.0, "heat_rate_smoothing": 10.0,
                    "enforce_minimum_heat_rate_per_muscle": True, "use_force_dependent_shortening_prop_constant": False,
                    "include_negative_mechanical_work": True, "forbid_negative_total_power": True,
                    "basal_coefficient": 1.2, "basal_exponent": 1.0, "muscle_effort_scaling_factor": 1.0}


def _inputs_on(function, values: dict, n: int):
    return function.map(n)(*(np.asarray(values[name]).reshape(n, -1).T for name in function.name_in()))


# ---------------------------------------------------------------------------------------------------------------
# Analytic checks (no OpenSim)
# ---------------------------------------------------------------------------------------------------------------

def test_muscle_mass_is_cross_section_times_length_times_density():
    # 1000 N / 0.25 MPa = 40 cm^2; times 0.1 m and 1059.7 kg/m^3.
    assert muscle_mass_bhargava2004(1000.0, 0.1) == pytest.approx(0.004 * 0.1 * 1059.7, rel=1e-15)
    parameters = MuscleParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1, tendon_slack_length=0.2)
    assert Bhargava2004MuscleConstants(specific_tension=0.5e6).mass(parameters) == pytest.approx(0.21194, rel=1e-12)
    assert Bhargava2004MuscleConstants(muscle_mass=0.7).mass(parameters) == 0.7


def test_fiber_length_dependence_key_points():
    lengths = [0.0, 0.3, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 12.0]
    expected = [0.5, 0.5, 0.5, 0.75, 1.0, 0.5, 0.0, 0.0, 0.0]
    assert [float(fiber_length_dependence_bhargava2004(x)) for x in lengths] == pytest.approx(expected, abs=1e-15)


def _rates(constants, excitation=0.0, activation=0.5, length=1.0, velocity=0.0, active=400.0, passive=50.0,
           multiplier=1.0, ratio=0.5, mass=0.4, fmax=1000.0):
    inputs = MetabolicInputs(excitation, activation, length, velocity, active, passive, multiplier)
    rates = metabolic_rates_bhargava2004(inputs, fmax, mass,
                                         Bhargava2004MuscleConstants(ratio_slow_twitch_fibers=ratio),
                                         constants)
    return {name: float(getattr(rates, name)) for name in TERMS}


def test_zero_excitation_and_velocity_give_the_minimum_heat_rate():
    # No excitation: no activation or maintenance heat; no velocity: no shortening heat or work (up to OpenSim's
    # 1e-16 m/s offset); the heat rate is raised to 1 W/kg (exactly, or through tanh(10 m) when smoothed).
    mass = 0.4
    exact = _rates(Bhargava2004Constants(smoothing=NoSmoothing()), mass=mass)
    assert exact["activation_heat_rate"] == 0.0 and exact["maintenance_heat_rate"] == 0.0
    assert abs(exact["shortening_heat_rate"]) < 1e-13 and exact["mechanical_work_rate"] == 0.0
    assert exact["total_rate"] == pytest.approx(mass, rel=1e-12)
    smooth = _rates(Bhargava2004Constants(), mass=mass)
    assert smooth["total_rate"] == pytest.approx(mass * (0.5 + 0.5 * math.tanh(10.0 * mass)), rel=1e-12)
    unclamped = _rates(Bhargava2004Constants(enforce_minimum_heat_rate_per_muscle=False), mass=mass)
    assert abs(unclamped["total_rate"]) < 1e-13


def test_full_excitation_isometric_heat_rates_are_the_published_constants():
    # e = 1: slow-twitch recruitment r, fast-twitch 1 - r; at optimal length g = 1.
    ratio, mass = 0.3, 0.4
    rates = _rates(Bhargava2004Constants(smoothing=NoSmoothing()), excitation=1.0, ratio=ratio, mass=mass)
    assert rates["activation_heat_rate"] == pytest.approx(mass * (40.0 * ratio + 133.0 * (1 - ratio)), rel=1e-14)
    assert rates["maintenance_heat_rate"] == pytest.approx(mass * (74.0 * ratio + 111.0 * (1 - ratio)), rel=1e-14)
    half = _rates(Bhargava2004Constants(smoothing=NoSmoothing()), excitation=1.0, ratio=ratio, mass=mass, length=1.25)
    assert half["maintenance_heat_rate"] == pytest.approx(0.5 * rates["maintenance_heat_rate"], rel=1e-14)
    flat = _rates(Bhargava2004Constants(smoothing=NoSmoothing(), use_fiber_length_dependence_on_maintenance_rate=False),
                  excitation=1.0, ratio=ratio, mass=mass, length=1.25)
    assert flat["maintenance_heat_rate"] == pytest.approx(rates["maintenance_heat_rate"], rel=1e-14)


def test_shortening_and_work_rates_follow_the_contraction_type():
    # Shortening at 0.2 m/s with 400 N active and 50 N passive: α = 0.25 (F_active + F_passive); work F_active v.
    shortening = _rates(Bhargava2004Constants(smoothing=NoSmoothing()), excitation=0.5, velocity=-0.2)
    assert shortening["shortening_heat_rate"] == pytest.approx(0.25 * 450.0 * 0.2, rel=1e-12)
    assert shortening["mechanical_work_rate"] == pytest.approx(400.0 * 0.2, rel=1e-14)
    forced = _rates(Bhargava2004Constants(smoothing=NoSmoothing(), use_force_dependent_shortening_prop_constant=True),
                    excitation=0.5, velocity=-0.2, activation=0.5, multiplier=0.8)
    assert forced["shortening_heat_rate"] == pytest.approx((0.16 * 0.5 * 0.8 * 1000.0 + 0.18 * 450.0) * 0.2, rel=1e-12)
    lengthening = Bhargava2004Constants(smoothing=NoSmoothing(), include_negative_mechanical_work=False,
                                        forbid_negative_total_power=False)
    rates = _rates(lengthening, excitation=0.5, velocity=0.2)
    assert rates["shortening_heat_rate"] == 0.0 and rates["mechanical_work_rate"] == 0.0


def test_smooth_rates_approach_the_non_smooth_ones_for_large_smoothing():
    # Fiber speeds >= 0.01 m/s and random forces: with smoothing 1e7 (1/(m/s), 1/W) tanh and Huber switches give
    # the exact rates to rounding; OpenSim's default smoothing 10 visibly differs (so the limit is not trivial).
    rng = np.random.default_rng(20040101)
    n = 400
    values = {"excitation": rng.uniform(0, 1, n), "activation": rng.uniform(0, 1, n),
              "normalized_fiber_length": rng.uniform(0.4, 1.6, n),
              "fiber_velocity": rng.choice([-1, 1], n) * rng.uniform(0.01, 0.5, n),
              "active_fiber_force": rng.uniform(0, 2000, n), "passive_fiber_force": rng.uniform(0, 500, n),
              "active_force_length_multiplier": rng.uniform(0, 1, n)}
    muscles = [MuscleParameters(max_isometric_force=2000.0, optimal_fiber_length=0.1, tendon_slack_length=0.2)]

    def rates(constants):
        return np.vstack([np.asarray(x).ravel() for x in
                          _inputs_on(metabolics_bhargava2004_function(muscles, constants=constants), values, n)])

    for flags in ({}, {"use_force_dependent_shortening_prop_constant": True},
                  {"include_negative_mechanical_work": False}):
        exact = rates(Bhargava2004Constants(smoothing=NoSmoothing(), **flags))
        for smoothing in (TanhSmoothing(), HuberSmoothing()):
            steep = rates(Bhargava2004Constants(smoothing=smoothing, velocity_smoothing=1e7, power_smoothing=1e7,
                                                heat_rate_smoothing=1e7, **flags))
            default = rates(Bhargava2004Constants(smoothing=smoothing, **flags))
            assert _relative_errors(steep, exact) < 1e-12
            assert _relative_errors(default, exact) > 0.1


def test_default_smooth_rates_jacobian_equals_central_differences():
    # The tanh-smoothed total rate is differentiable in every input (away from the kinks of the piecewise-linear
    # fiber-length factor at l̃M = 0.5, 1, 1.5): CasADi's Jacobian against central differences.
    rng = np.random.default_rng(11)
    muscles = [MuscleParameters(max_isometric_force=1500.0, optimal_fiber_length=0.09, tendon_slack_length=0.2)]
    function = metabolics_bhargava2004_function(muscles)
    x = ca.SX.sym("x", len(function.name_in()))
    total = function(*ca.vertsplit(x))[-1]
    value = ca.Function("total", [x], [total])
    jacobian = ca.Function("jacobian", [x], [ca.jacobian(total, x)])
    for _ in range(20):
        point = np.array([rng.uniform(0.05, 0.95), rng.uniform(0.05, 0.95), rng.choice([0.7, 1.2, 1.35]),
                          rng.uniform(-0.3, 0.3), rng.uniform(0, 1500), rng.uniform(0, 300), rng.uniform(0, 1)])
        steps = 1e-6 * np.maximum(np.abs(point), 1.0)
        differences = [(float(value(point + h * e)) - float(value(point - h * e))) / (2 * h)
                       for h, e in zip(steps, np.eye(point.size))]
        np.testing.assert_allclose(np.asarray(jacobian(point)).ravel(), differences, rtol=1e-6, atol=1e-5)


def test_function_accepts_sx_mx_and_numbers_and_equals_the_free_function():
    rng = np.random.default_rng(5)
    muscles = [MuscleParameters(max_isometric_force=f, optimal_fiber_length=0.08, tendon_slack_length=0.3)
               for f in (800.0, 1500.0)]
    metabolic = [Bhargava2004MuscleConstants(ratio_slow_twitch_fibers=0.2),
                 Bhargava2004MuscleConstants(muscle_mass=0.9)]
    function = metabolics_bhargava2004_function(muscles, metabolic)
    values = [rng.uniform(0.1, 1.0, 2) for _ in function.name_in()]
    numeric = [np.asarray(x).ravel() for x in function(*values)]
    symbols = [ca.MX.sym(name, 2) for name in function.name_in()]
    mx = ca.Function("mx", symbols, function(*symbols))
    assert all(np.allclose(np.asarray(a).ravel(), b, rtol=1e-15) for a, b in zip(mx(*values), numeric))
    one = metabolic_rates_bhargava2004(MetabolicInputs(*(float(v[1]) for v in values)), 1500.0, 0.9, metabolic[1])
    assert [float(getattr(one, name)) for name in TERMS] == pytest.approx([v[1] for v in numeric], rel=1e-14)
    assert basal_metabolic_rate_bhargava2004(70.0) == pytest.approx(84.0)
    assert basal_metabolic_rate_bhargava2004(70.0, Bhargava2004Constants(basal_rate_on=False)) == 0.0


def test_bad_constants_raise_input_errors():
    with pytest.raises(TrajoptInputError, match="ratio_slow_twitch_fibers"):
        Bhargava2004MuscleConstants(ratio_slow_twitch_fibers=1.5)
    with pytest.raises(TrajoptInputError, match="muscle_mass"):
        Bhargava2004MuscleConstants(muscle_mass=0.0)
    with pytest.raises(TrajoptInputError, match="velocity_smoothing"):
        Bhargava2004Constants(velocity_smoothing=-1.0)
    muscles = [MuscleParameters(max_isometric_force=1.0, optimal_fiber_length=0.1, tendon_slack_length=0.1)]
    with pytest.raises(TrajoptInputError, match="2 metabolic parameter sets for 1 muscles"):
        metabolics_bhargava2004_function(muscles, [Bhargava2004MuscleConstants()] * 2)


# ---------------------------------------------------------------------------------------------------------------
# OpenSim's Bhargava2004SmoothedMuscleMetabolics at random states of 2D_gait.osim (one child run for all sets)
# ---------------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gait():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        osim = load_osim(MODEL_FILE)
    return osim


@pytest.fixture(scope="module")
def reference(gait):
    if not opensim_available():
        pytest.skip("opensim is not installed (pip install 'trajopt[opensim]')")
    rng = np.random.default_rng(2004)
    coordinates = gait.spec.coordinates
    muscles = [m.name for m in gait.muscles]
    lower = np.array([max(c.range[0], -1.2) for c in coordinates])
    upper = np.array([min(c.range[1], 1.2) for c in coordinates])
    q = lower + (upper - lower) * rng.random((STATES, len(coordinates)))
    u = rng.uniform(-4.0, 4.0, (STATES, len(coordinates)))
    activations = rng.uniform(0.0, 1.0, (STATES, len(muscles)))
    excitations = rng.uniform(0.0, 1.0, (STATES, len(muscles)))
    excitations[rng.random(excitations.shape) < 0.15] = 0.0  # idle muscles reach the minimum heat rate
    ratio = rng.uniform(0.0, 1.0, len(muscles))
    specific_tension = rng.uniform(0.2e6, 0.6e6, len(muscles))
    masses = np.full(len(muscles), np.nan)
    masses[[0, 7]] = (0.35, 1.2)
    request = {"model_file": MODEL_FILE, "coordinate_names": np.array([c.name for c in coordinates]), "q": q, "u": u,
               "muscle_names": np.array(muscles), "activations": activations, "excitations": excitations,
               "ratio_slow_twitch_fibers": ratio, "specific_tension": specific_tension, "muscle_mass": masses}
    for key, default in OPENSIM_DEFAULTS.items():
        request[key] = np.array([opensim.get(key, default) for _, _, opensim in OPTION_SETS])
    request["probe_constant_maintenance"] = True
    result = run_opensim_task("bhargava2004_metabolics", request)
    metabolic = [Bhargava2004MuscleConstants(ratio_slow_twitch_fibers=r, specific_tension=s,
                                             muscle_mass=None if np.isnan(m) else m)
                 for r, s, m in zip(ratio, specific_tension, masses)]
    return {"result": result, "request": request, "metabolic": metabolic,
            "parameters": [degroote_parameters(m) for m in gait.muscles]}


def _opensim_inputs(result):
    return {"excitation": result["excitation"], "activation": result["activation"],
            "normalized_fiber_length": result["normalized_fiber_length"], "fiber_velocity": result["fiber_velocity"],
            "active_fiber_force": result["active_fiber_force"], "passive_fiber_force": result["passive_fiber_force"],
            "active_force_length_multiplier": result["active_force_length_multiplier"]}


def _relative_errors(values, expected):
    return float(np.max(np.abs(values - expected) / np.maximum(np.abs(expected), FLOOR)))


@pytest.mark.opensim
def test_muscle_masses_and_inputs_equal_opensim(reference):
    result, metabolic, parameters = reference["result"], reference["metabolic"], reference["parameters"]
    masses = np.array([own.mass(p) for own, p in zip(metabolic, parameters)])
    np.testing.assert_allclose(masses, result["metabolic_muscle_mass"], rtol=1e-14)
    np.testing.assert_array_equal(result["excitation"], reference["request"]["excitations"])
    # The rigid-tendon helper gives OpenSim's fiber quantities from the musculotendon length and lengthening speed.
    for j, p in enumerate(parameters):
        muscle = RigidTendonMuscle(p)
        inputs = MetabolicInputs.from_rigid_tendon(muscle, result["excitation"][:, j], result["activation"][:, j],
                                                   result["musculotendon_length"][:, j],
                                                   result["lengthening_speed"][:, j])
        for name, expected in _opensim_inputs(result).items():
            assert _relative_errors(np.asarray(getattr(inputs, name), dtype=float).ravel(), expected[:, j]) < 1e-12


@pytest.mark.opensim
@pytest.mark.parametrize("index", range(len(OPTION_SETS)), ids=[label for label, _, _ in OPTION_SETS])
def test_rates_equal_opensim_term_by_term(reference, index):
    result = reference["result"]
    _, constants, _ = OPTION_SETS[index]
    function = metabolics_bhargava2004_function(reference["parameters"], reference["metabolic"], constants)
    ours = dict(zip(function.name_out(), (np.asarray(x).T for x in _inputs_on(function, _opensim_inputs(result),
                                                                            STATES))))
    # OpenSim's Huber power clamp divides 0 by 0 (NaN) where the total power is exactly 0: no excitation while
    # lengthening with negative work excluded. trajopt gives the continuous limit there; compare elsewhere.
    undefined = np.isnan(result[f"set{index}_shortening_heat_rate"])
    assert np.all((result["excitation"][undefined] == 0.0) & (result["fiber_velocity"][undefined] > 0.0))
    assert all(np.all(np.isfinite(ours[name])) for name in TERMS)
    errors = {}
    for name in TERMS:
        expected = result[f"set{index}_{'muscle_total_rate' if name == 'total_rate' else name}"]
        errors[name] = _relative_errors(ours[name][~undefined], expected[~undefined])
    basal = basal_metabolic_rate_bhargava2004(float(result["body_mass"]), constants)
    whole = ours["total_rate"].sum(axis=1) + basal
    defined = ~undefined.any(axis=1)
    errors["whole_body"] = _relative_errors(whole[defined], result[f"set{index}_total_metabolic_rate"][defined])
    assert np.sum(defined) >= (10 if undefined.any() else STATES)
    print(f"{OPTION_SETS[index][0]}: " + ", ".join(f"{k} {v:.1e}" for k, v in errors.items())
          + f" (OpenSim NaN: {undefined.sum()} muscle states; whole body over {defined.sum()} states)")
    assert max(errors.values()) < TOLERANCE, errors
    if index > 0:  # the option changes OpenSim's rates at these states (so the agreement above is not vacuous)
        keys = [f"set{{}}_{name}" for name in ("shortening_heat_rate", "mechanical_work_rate", "muscle_total_rate",
                                               "total_metabolic_rate")]
        change = max(np.nanmax(np.abs(result[key.format(index)] - result[key.format(0)])) for key in keys)
        assert change > 1e-3


@pytest.mark.opensim
def test_maintenance_without_fiber_length_dependence_equals_opensim_probe(reference):
    # OpenSim's smoothed component always applies g(l̃M); its non-smooth Bhargava2004MuscleMetabolicsProbe takes the
    # curve as a property, here 1 everywhere: trajopt's use_fiber_length_dependence_on_maintenance_rate=False.
    result = reference["result"]
    constants = Bhargava2004Constants(smoothing=NoSmoothing(), use_fiber_length_dependence_on_maintenance_rate=False)
    function = metabolics_bhargava2004_function(reference["parameters"], reference["metabolic"], constants)
    ours = dict(zip(function.name_out(), (np.asarray(x).T for x in _inputs_on(function, _opensim_inputs(result),
                                                                            STATES))))
    maintenance = _relative_errors(ours["maintenance_heat_rate"], result["probe_maintenance_heat_rate"])
    total = _relative_errors(ours["total_rate"], result["probe_total_rate"])
    print(f"constant fiber-length dependence: maintenance_heat_rate {maintenance:.1e}, total_rate {total:.1e}")
    assert maintenance < TOLERANCE and total < TOLERANCE
    # The curve matters at these states: with it the maintenance rate differs.
    assert np.max(np.abs(result["set1_maintenance_heat_rate"] - result["probe_maintenance_heat_rate"])) > 1.0


@pytest.mark.opensim
def test_whole_body_rate_and_goal_on_a_muscle_driven_problem_equal_opensim(reference, gait):
    # 2D_gait with its own geometric paths (exact lengths), so the problem's rate is OpenSim's at the same states.
    result, request = reference["result"], reference["request"]
    model = MusculoskeletalModel(gait, GeometricPaths(gait))
    assert model.muscle_names == tuple(request["muscle_names"])
    assert body_mass(model) == pytest.approx(result["body_mass"], rel=1e-14)
    built = muscle_driven_problem(model, duration=1.0)
    rate = whole_body_metabolic_rate(built, reference["metabolic"])
    function = ca.Function("rate", [built.q, built.u, built.activations, built.excitations], [rate])
    n = 40
    order = [list(request["coordinate_names"]).index(name) for name in model.coordinate_names]
    q, u = request["q"][:n, order].T, request["u"][:n, order].T
    values = np.asarray(function.map(n)(q, u, request["activations"][:n].T, request["excitations"][:n].T)).ravel()
    assert _relative_errors(values, result["set0_total_metabolic_rate"][:n]) < 1e-9
    # PredSim's goal: integrand (rate / body mass)^2, its integral divided by the distance.
    distance = built.problem.final(built.q[1]) - built.problem.initial(built.q[1])
    terms = metabolic_cost(built, reference["metabolic"], per_distance=distance).terms(built.problem)
    integrand = ca.Function("integrand", [built.q, built.u, built.activations, built.excitations], terms.integrands)
    mass = float(result["body_mass"])
    squared = np.asarray(integrand.map(n)(q, u, request["activations"][:n].T, request["excitations"][:n].T)).ravel()
    np.testing.assert_allclose(squared, (result["set0_total_metabolic_rate"][:n] / mass) ** 2, rtol=1e-9)
    cost = ca.Function("cost", [built.problem.final(built.q[1]), built.problem.initial(built.q[1])],
                       [terms.cost([ca.SX(3.0)])])
    assert float(cost(1.5, 0.5)) == pytest.approx(3.0)
    # PredSim's term: integrand Σ_i rate_i² (OpenSim's per-muscle totals), cost (1 / (n M)) ∫ / distance.
    terms = predsim_metabolic_cost(built, reference["metabolic"], per_distance=distance).terms(built.problem)
    integrand = ca.Function("integrand", [built.q, built.u, built.activations, built.excitations], terms.integrands)
    summed = np.asarray(integrand.map(n)(q, u, request["activations"][:n].T, request["excitations"][:n].T)).ravel()
    np.testing.assert_allclose(summed, np.sum(result["set0_muscle_total_rate"][:n] ** 2, axis=1), rtol=1e-9)
    cost = ca.Function("cost", [built.problem.final(built.q[1]), built.problem.initial(built.q[1])],
                       [terms.cost([ca.SX(3.0)])])
    assert float(cost(1.5, 0.5)) == pytest.approx(3.0 / (18 * mass))


def test_metabolic_goal_solves_a_reach_with_less_metabolic_cost_than_the_effort_goal():
    # arm26 reaching (rest at q = 0 to rest at elbow 90° in 0.5 s): the solution of the metabolic goal has a smaller
    # integral of (rate / body mass)² than the solution of the excitation-effort goal, and its objective is that
    # integral (grid trapezoid vs the transcription's quadrature: within 2 %).
    model = MusculoskeletalModel(load_osim(model_file("arm26")),
                                 PolynomialPaths.load(problem_file("arm26", "paths.json")))
    results = {}
    for label, goal in (("effort", lambda built: Effort(built.excitations)), ("metabolic", metabolic_cost)):
        built = muscle_driven_problem(
            model, 0.5, coordinates=StateBounds(initial=[0.0, 0.0], final=[0.0, np.pi / 2]),
            speeds=StateBounds((-20.0, 20.0), initial=0.0, final=0.0), activations=StateBounds((0.0, 1.0), initial=0.0),
            activation_smoothing=OPENSIM_ACTIVATION_SMOOTHING)
        built.problem.minimize(goal(built))
        guess = Guess([0.0, 0.5]).set(built.q, [[0.0, 0.0], [0.0, np.pi / 2]])
        solution = built.problem.solve(HermiteSimpson(10), Ipopt(tol=1e-8), guess=guess)
        assert solution.success
        squared = solution.value(whole_body_metabolic_rate(built, per_body_mass=True) ** 2)
        results[label] = (solution.objective, np.trapezoid(squared, solution.time))
    objective, integral = results["metabolic"]
    assert objective == pytest.approx(integral, rel=0.02)
    assert integral < 0.8 * results["effort"][1]
