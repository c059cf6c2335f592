"""PredSim's passive joint torques (trajopt.studies.gait.passive_joint_torques) on the 3D walking model: PredSim's
published coefficients in closed form, signs, damping, the mtp spring of Falisse et al. 2022, and agreement with the
ExpressionBasedCoordinateForce strings problems/walk3d uses for the lumbar joint."""

import dataclasses
import warnings

import numpy as np
import pytest

from trajopt.errors import TrajoptInputError
from trajopt.examples.data import model_file
from trajopt.studies.gait.passive_joint_torques import (
    FALISSE2022,
    PREDSIM_DEFAULT,
    PassiveJointTorques,
    floating_base_speeds,
    passive_joint_torques,
)
from trajopt.model.osim import load_osim
from trajopt.model.osim.expression_forces import generalized_forces_function

# PredSim default_coord_lim_torq_coeff.csv (commit a50fb31): name, K_1..K_4, theta_1 (lower), theta_2 (upper).
PUBLISHED = {
    "hip_flexion_r": (-2.44, 5.05, 1.51, -21.88, -0.6981, 1.81),
    "knee_angle_l": (-6.09, 33.94, 11.03, -11.33, -2.4, 0.13),
    "ankle_angle_r": (-2.03, 38.11, 0.18, -12.12, -0.74, 0.52),
    "lumbar_extension": (-0.35, 30.72, 0.25, -20.36, -0.523598775598299, 0.17),
    "mtp_angle_r": (-0.9, 14.87, 0.18, -70.08, 0.0, 1.13446401379631),
}


# The walk3d model's knee flexes positive, PredSim's model's negative: its limits are mirrored (τ'(q) = -τ(-q)).
MIRRORED = ("knee_angle",)
WALK3D_DEFAULT = dataclasses.replace(PREDSIM_DEFAULT, mirrored=MIRRORED)
WALK3D_FALISSE2022 = dataclasses.replace(FALISSE2022, mirrored=MIRRORED)


def _published(name):
    """(closed form of the limit torque, lower, upper) in the walk3d model's sign convention."""
    k1, k2, k3, k4, lower, upper = PUBLISHED[name]

    def closed(angle):
        return k1 * np.exp(k2 * (angle - upper)) + k3 * np.exp(k4 * (angle - lower))

    if name.startswith(MIRRORED):
        return (lambda angle: -closed(-angle)), -upper, -lower
    return closed, lower, upper


@pytest.fixture(scope="module")
def multibody():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_osim(model_file("walk3d"), constraints=True).multibody


def _torques(multibody, torques, q, u):
    functions = passive_joint_torques(multibody, torques)
    tau, cost = functions.generalized_forces(q, u), functions.limit_torques(q, u)
    return np.asarray(tau).ravel(), np.asarray(cost).ravel(), functions.cost_coordinates


def _state(multibody, rng, values=None):
    q = rng.uniform(-0.3, 0.3, multibody.nq)
    for name, value in (values or {}).items():
        q[multibody.coordinate_index(name)] = value
    return q


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_limit_torque_closed_form_and_cost(multibody, name):
    rng = np.random.default_rng(1)
    closed, lower, upper = _published(name)
    for angle in (lower - 0.1, lower, 0.5 * (lower + upper), upper, upper + 0.1):
        q = _state(multibody, rng, {name: angle})
        u = np.zeros(multibody.nv)
        tau, cost, names = _torques(multibody, WALK3D_DEFAULT, q, u)
        expected = closed(angle)
        assert tau[multibody.speed_index(name)] == pytest.approx(expected, rel=1e-14)
        assert cost[names.index(name)] == pytest.approx(expected, rel=1e-14)


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_limit_torque_opposes_going_past_either_limit(multibody, name):
    rng = np.random.default_rng(2)
    _, lower, upper = _published(name)
    index = multibody.speed_index(name)
    beyond_upper = [_torques(multibody, WALK3D_DEFAULT, _state(multibody, rng, {name: upper + d}),
                             np.zeros(multibody.nv))[0][index] for d in (0.05, 0.15)]
    beyond_lower = [_torques(multibody, WALK3D_DEFAULT, _state(multibody, rng, {name: lower - d}),
                             np.zeros(multibody.nv))[0][index] for d in (0.05, 0.15)]
    assert beyond_upper[1] < beyond_upper[0] < 0  # pulls back, harder further out
    assert beyond_lower[1] > beyond_lower[0] > 0


def test_damping_signs_mtp_spring_and_floating_base(multibody):
    rng = np.random.default_rng(3)
    q = _state(multibody, rng)
    u = rng.uniform(-3, 3, multibody.nv)
    still = np.zeros(multibody.nv)
    default, _, _ = _torques(multibody, WALK3D_DEFAULT, q, u)
    default_still, _, _ = _torques(multibody, WALK3D_DEFAULT, q, still)
    arm = multibody.speed_index("arm_flex_r")  # no PredSim coefficients: damping only
    assert default[arm] == pytest.approx(-0.1 * u[arm], rel=1e-14)
    knee = multibody.speed_index("knee_angle_r")
    assert default[knee] - default_still[knee] == pytest.approx(-0.1 * u[knee], rel=1e-12)
    for name in floating_base_speeds(multibody):
        assert default[multibody.speed_index(name)] == 0.0
    with_mtp, _, _ = _torques(multibody, WALK3D_FALISSE2022, q, u)
    mtp = multibody.speed_index("mtp_angle_l")
    angle = q[multibody.coordinate_index("mtp_angle_l")]
    k1, k2, k3, k4, lower, upper = PUBLISHED["mtp_angle_r"]
    limit = k1 * np.exp(k2 * (angle - upper)) + k3 * np.exp(k4 * (angle - lower))
    assert with_mtp[mtp] == pytest.approx(limit - 25.0 * angle - 2.0 * u[mtp], rel=1e-13)
    assert with_mtp[knee] == default[knee]


def test_matches_walk3d_lumbar_expression_forces(multibody):
    """problems/walk3d's LUMBAR_PASSIVE strings are PredSim's lumbar coefficients with the limits rounded to 4
    decimals (0.5236, 0.3491) and Moco's damping 1 N·m·s/rad: with those limits the module gives the same torques to
    rounding; with PredSim's own limits they differ by at most K ∆θ (20.36 x 3.4e-5 = 7e-4) of the limit torque."""
    from trajopt.examples.walk3d.prediction import LUMBAR_PASSIVE

    rng = np.random.default_rng(4)
    lumbar = ("lumbar_extension", "lumbar_bending", "lumbar_rotation")
    limits = PREDSIM_DEFAULT.limits
    rounded = dataclasses.replace(limits, **{
        name: dataclasses.replace(getattr(limits, name), theta_lower=round(getattr(limits, name).theta_lower, 4),
                                  theta_upper=round(getattr(limits, name).theta_upper, 4)) for name in lumbar})
    exact = passive_joint_torques(multibody, dataclasses.replace(WALK3D_DEFAULT, damping=1.0), lumbar)
    as_strings = passive_joint_torques(multibody, dataclasses.replace(WALK3D_DEFAULT, damping=1.0, limits=rounded),
                                       lumbar).generalized_forces
    strings = generalized_forces_function(multibody, LUMBAR_PASSIVE)
    for _ in range(20):
        q = rng.uniform(-0.7, 0.7, multibody.nq)
        u = rng.uniform(-2, 2, multibody.nv)
        theirs = np.asarray(strings(q, u)).ravel()
        np.testing.assert_allclose(np.asarray(as_strings(q, u)).ravel(), theirs, rtol=1e-13, atol=1e-13)
        ours = np.asarray(exact.generalized_forces(q, u)).ravel()
        limit_torques = np.asarray(exact.limit_torques(q, u)).ravel()
        index = [multibody.speed_index(n) for n in lumbar]
        assert np.all(np.abs(ours[index] - theirs[index]) <= 7.0e-4 * np.abs(limit_torques) + 1e-13)


def test_coordinate_choice_is_checked(multibody):
    with pytest.raises(TrajoptInputError, match=r"\['lumbar_twist'\] are not in model"):
        passive_joint_torques(multibody, PassiveJointTorques(), coordinates=("lumbar_twist",))
    with pytest.raises(TrajoptInputError, match="floating base"):
        passive_joint_torques(multibody, PassiveJointTorques(), coordinates=("pelvis_tilt",))


def test_a_knee_of_the_opposite_sign_is_refused_in_one_line(multibody):
    """PredSim's knee limits (-2.4 to 0.13 rad, flexion negative) on walk3d's knee (0 to 2.44 rad, flexion
    positive) would push with exp(33.94 * 1.09) N·m at mid-range: refused, naming the coordinate."""
    with pytest.raises(TrajoptInputError, match="knee_angle_r.*mirrored"):
        passive_joint_torques(multibody, PREDSIM_DEFAULT)
