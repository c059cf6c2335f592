"""trajopt.core.muscles.metabolics_umberger2010: analytic values, and OpenSim's Umberger2010MuscleMetabolicsProbe term
by term on the 18 DeGrooteFregly2016 muscles of 2D_gait.osim."""

import warnings

import numpy as np
import pytest

from trajopt.errors import TrajoptInputError
from trajopt.examples.data import model_file
from trajopt.model.io.opensim_reference import opensim_available, run_opensim_task
from trajopt.core.muscles import (
    MetabolicInputs,
    MuscleParameters,
    Umberger2010Constants,
    Umberger2010MuscleConstants,
    basal_metabolic_rate_umberger2010,
    metabolic_rates_umberger2010,
    metabolics_umberger2010_function,
)
from trajopt.model.musculoskeletal import degroote_parameters
from trajopt.model.osim import load_osim

MODEL_FILE = model_file("gait2d")
STATES = 200
TERMS = ("activation_maintenance_heat_rate", "shortening_heat_rate", "mechanical_work_rate", "total_rate")
FLOOR = 1.0  # W: relative errors below it are absolute
TOLERANCE = 1e-9
OPTION_SETS = (
    ("defaults", Umberger2010Constants()),
    ("no Bhargava recruitment", Umberger2010Constants(use_Bhargava_recruitment_model=False)),
    ("negative work excluded", Umberger2010Constants(include_negative_mechanical_work=False)),
    ("negative total power allowed", Umberger2010Constants(forbid_negative_total_power=False)),
    ("no minimum heat rate", Umberger2010Constants(enforce_minimum_heat_rate_per_muscle=False)),
    ("anaerobic 1.0, effort scaling 0.8, basal 1.5 M^0.9", Umberger2010Constants(
        aerobic_factor=1.0, muscle_effort_scaling_factor=0.8, basal_coefficient=1.5, basal_exponent=0.9)),
)
MUSCLE = MuscleParameters(max_isometric_force=1000.0, optimal_fiber_length=0.1, tendon_slack_length=0.2,
                          max_contraction_velocity=10.0)


def _rates(constants, excitation=0.0, activation=0.0, length=1.0, velocity=0.0, active=0.0, multiplier=1.0,
           ratio=0.5, mass=0.4):
    inputs = MetabolicInputs(excitation, activation, length, velocity, active, 0.0, multiplier)
    rates = metabolic_rates_umberger2010(inputs, MUSCLE, mass, Umberger2010MuscleConstants(ratio), constants)
    return {name: float(getattr(rates, name)) for name in TERMS}


def test_idle_muscle_costs_the_minimum_heat_rate():
    rates = _rates(Umberger2010Constants(), mass=0.4)
    assert rates["activation_maintenance_heat_rate"] == 0.0 and rates["shortening_heat_rate"] == 0.0
    assert rates["total_rate"] == pytest.approx(0.4, rel=1e-15)  # 1 W/kg
    assert _rates(Umberger2010Constants(enforce_minimum_heat_rate_per_muscle=False))["total_rate"] == 0.0


def test_full_isometric_excitation_gives_the_published_activation_maintenance_rate():
    # A = 1 and fixed slow-twitch ratio r: 1.5 (128 (1 - r) + 25) W/kg; beyond optimal length times 0.4 + 0.6 f̃L.
    constants = Umberger2010Constants(use_Bhargava_recruitment_model=False)
    rates = _rates(constants, excitation=1.0, activation=0.2, ratio=0.3, mass=0.4)
    assert rates["activation_maintenance_heat_rate"] == pytest.approx(0.4 * 1.5 * (128 * 0.7 + 25), rel=1e-14)
    long = _rates(constants, excitation=1.0, activation=0.2, ratio=0.3, mass=0.4, length=1.3, multiplier=0.5)
    assert long["activation_maintenance_heat_rate"] == pytest.approx(0.7 * rates["activation_maintenance_heat_rate"],
                                                                     rel=1e-14)


def test_shortening_heat_at_a_quarter_of_max_velocity():
    # v = -2.5 l_opt/s, v_max 10: slow 100 / 4 · 2.5 = 62.5 W/kg (below its 100 cap), fast 15.3 · 2.5 = 38.25 W/kg;
    # with r = 0.5 and A = 1: 1.5 (0.5 · 62.5 + 0.5 · 38.25) W/kg.
    constants = Umberger2010Constants(use_Bhargava_recruitment_model=False)
    rates = _rates(constants, excitation=1.0, activation=1.0, velocity=-0.25, ratio=0.5, mass=0.4)
    assert rates["shortening_heat_rate"] == pytest.approx(0.4 * 1.5 * (0.5 * 62.5 + 0.5 * 38.25), rel=1e-14)
    lengthening = _rates(constants, excitation=1.0, activation=1.0, velocity=0.25, ratio=0.5, mass=0.4)
    assert lengthening["shortening_heat_rate"] == pytest.approx(0.4 * 1.5 * 4.0 * 25.0 * 2.5, rel=1e-14)


def test_bad_constants_raise_input_errors():
    with pytest.raises(TrajoptInputError, match="ratio_slow_twitch_fibers"):
        Umberger2010MuscleConstants(ratio_slow_twitch_fibers=-0.1)
    with pytest.raises(TrajoptInputError, match="aerobic_factor"):
        Umberger2010Constants(aerobic_factor=0.0)
    with pytest.raises(TrajoptInputError, match="2 metabolic parameter sets for 1 muscles"):
        metabolics_umberger2010_function([MUSCLE], [Umberger2010MuscleConstants()] * 2)


@pytest.fixture(scope="module")
def reference():
    if not opensim_available():
        pytest.skip("opensim is not installed (pip install 'trajopt[opensim]')")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gait = load_osim(MODEL_FILE)
    rng = np.random.default_rng(2010)
    coordinates = gait.spec.coordinates
    muscles = [m.name for m in gait.muscles]
    lower = np.array([max(c.range[0], -1.2) for c in coordinates])
    upper = np.array([min(c.range[1], 1.2) for c in coordinates])
    excitations = rng.uniform(0.0, 1.0, (STATES, len(muscles)))
    excitations[rng.random(excitations.shape) < 0.15] = 0.0
    request = {"model_file": MODEL_FILE, "coordinate_names": np.array([c.name for c in coordinates]),
               "q": lower + (upper - lower) * rng.random((STATES, len(coordinates))),
               "u": rng.uniform(-4.0, 4.0, (STATES, len(coordinates))), "muscle_names": np.array(muscles),
               "activations": rng.uniform(0.0, 1.0, (STATES, len(muscles))), "excitations": excitations,
               "ratio_slow_twitch_fibers": rng.uniform(0.0, 1.0, len(muscles)),
               "muscle_mass": rng.uniform(0.1, 2.0, len(muscles))}
    for field in ("aerobic_factor", "use_Bhargava_recruitment_model", "include_negative_mechanical_work",
                  "forbid_negative_total_power", "enforce_minimum_heat_rate_per_muscle", "basal_coefficient",
                  "basal_exponent", "muscle_effort_scaling_factor"):
        request[field] = np.array([getattr(constants, field) for _, constants in OPTION_SETS])
    result = run_opensim_task("umberger2010_metabolics", request)
    metabolic = [Umberger2010MuscleConstants(ratio_slow_twitch_fibers=r, muscle_mass=m)
                 for r, m in zip(request["ratio_slow_twitch_fibers"], request["muscle_mass"])]
    return {"result": result, "metabolic": metabolic, "parameters": [degroote_parameters(m) for m in gait.muscles]}


@pytest.mark.opensim
@pytest.mark.parametrize("index", range(len(OPTION_SETS)), ids=[label for label, _ in OPTION_SETS])
def test_rates_equal_opensim_term_by_term(reference, index):
    result = reference["result"]
    label, constants = OPTION_SETS[index]
    function = metabolics_umberger2010_function(reference["parameters"], reference["metabolic"], constants)
    ours = dict(zip(function.name_out(), (np.asarray(x).T for x in function.map(STATES)(
        *(result[name].T for name in function.name_in())))))
    errors = {name: float(np.max(np.abs(ours[name] - result[f"set{index}_{name}"])
                                 / np.maximum(np.abs(result[f"set{index}_{name}"]), FLOOR))) for name in TERMS}
    basal = basal_metabolic_rate_umberger2010(float(result["body_mass"]), constants)
    errors["basal"] = abs(basal - result[f"set{index}_basal_rate"][0]) / basal
    print(f"{label}: " + ", ".join(f"{k} {v:.1e}" for k, v in errors.items()))
    assert max(errors.values()) < TOLERANCE, errors
    if index > 0:  # the option changes OpenSim's rates at these states
        change = max(np.max(np.abs(result[f"set{index}_{name}"] - result[f"set0_{name}"])) for name in TERMS)
        assert change > 1e-3 or abs(basal - result["set0_basal_rate"][0]) > 1e-3
