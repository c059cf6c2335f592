"""Holonomic constraints (trajopt.core.multibody.constraints) against OpenSim 4.6 and physical identities.

OpenSim's convention, which trajopt follows: M u̇ + C + Gᵀλ = τ with G = ∂φ/∂q and φ Simbody's constraint
errors (coupler: scale f(q_i) − q_d; PointConstraint: p₂ − p₁ in ground; WeldConstraint: x_F·y_B, y_F·z_B,
z_F·x_B, p_F − p_B), so −Gᵀλ is the generalized force the constraints apply; ``state.getMultipliers()``
lists λ in ConstraintSet order, each constraint's equations in that order.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from trajopt.errors import ModelFileError
from trajopt.core.multibody import constraints as mbc
from trajopt.model.osim.load import load_osim

ROOT = Path(__file__).resolve().parents[1]
FOURBAR = ROOT / "tests" / "data" / "osim" / "fourbar.osim"
WALK3D = ROOT / "trajopt" / "examples" / "walk3d" / "subject_walk_scaled.osim"


def _load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_osim(path, constraints=True)


def _compare_with_opensim(opensim_task, path, states, **request):
    """Worst relative difference of u̇ and λ over the states (max-norm of the difference over max-norm of
    OpenSim's value, per state)."""
    reference = opensim_task("constrained_dynamics", {"model": str(path), "states": states, "seed": 3, **request})
    osim = _load(path)
    mb = osim.multibody
    names = list(reference["coordinate_names"])
    order = [names.index(n) for n in mb.coordinate_names]
    assert list(reference["constraint_names"]) == [c.name for c in osim.constraints]
    assert mbc.constraint_count(osim.constraints) == reference["multipliers"].shape[1]
    worst_udot = worst_lambda = worst_phi = 0.0
    for k in range(states):
        q, u, tau = (reference[key][k, order] for key in ("q", "u", "tau"))
        udot, multipliers = (np.asarray(v).ravel() for v in mbc.constrained_forward_dynamics(mb, osim.constraints,
                                                                                             q, u, tau))
        expected = reference["udot"][k, order]
        worst_udot = max(worst_udot, np.max(np.abs(udot - expected)) / np.max(np.abs(expected)))
        lam = reference["multipliers"][k]
        worst_lambda = max(worst_lambda, np.max(np.abs(multipliers - lam)) / np.max(np.abs(lam)))
        worst_phi = max(worst_phi, np.max(np.abs(np.asarray(mbc.constraint_errors(mb, osim.constraints, q)))))
    return worst_udot, worst_lambda, worst_phi, reference


@pytest.mark.opensim
def test_fourbar_forward_dynamics_matches_opensim(opensim_task):
    """Four-bar closed by a PointConstraint plus a payload welded to its coupler (10 coordinates, 9 equations):
    accelerations and multipliers at 20 random assembled states equal OpenSim's realizeAcceleration."""
    worst_udot, worst_lambda, worst_phi, reference = _compare_with_opensim(opensim_task, FOURBAR, 20)
    assert np.max(reference["position_errors"]) < 1e-12 and worst_phi < 1e-12  # OpenSim assembled them
    assert worst_udot < 1e-10  # measured 1.3e-12
    assert worst_lambda < 1e-11  # measured 1.6e-13


@pytest.mark.opensim
def test_walk3d_forward_dynamics_with_couplers_matches_opensim(opensim_task):
    """subject_walk_scaled.osim (Moco's 3D walking model) with its patella couplers enforced, at 20 random
    assembled states, every force off but gravity and random generalized forces. The knee speeds are zero:
    with them OpenSim's velocity-dependent forces of the walker knee disagree with Lagrange's equations (see
    tests/test_tools.py), which has nothing to do with the constraints (the couplers are linear, Ġ = 0)."""
    still = ["knee_angle_r", "knee_angle_r_beta", "knee_angle_l", "knee_angle_l_beta"]
    worst_udot, worst_lambda, worst_phi, reference = _compare_with_opensim(opensim_task, WALK3D, 20, still=still)
    assert worst_phi < 1e-12
    assert worst_udot < 1e-12  # measured 1.2e-14 (with knee speeds: 5e-5, the walker knee's velocity forces)
    assert worst_lambda < 1e-12  # measured 1.2e-14


def test_inverse_dynamics_recovers_forces_and_multipliers():
    """Forward then inverse dynamics on the four-bar: with the speeds that carry no force named passive,
    inverse dynamics returns the generalized forces and multipliers forward dynamics was given/produced,
    and M u̇ + C = τ − Gᵀλ splits into τ and the constraint forces."""
    osim = _load(FOURBAR)
    mb, constraints = osim.multibody, osim.constraints
    rng = np.random.default_rng(0)
    q = mbc.assemble(mb, constraints, rng.uniform(-0.5, 0.5, mb.nq))
    u = mbc.project_speeds(mb, constraints, q, rng.normal(size=mb.nv))
    assert np.max(np.abs(np.asarray(mbc.constraint_jacobian(mb, constraints, q)) @ u)) < 1e-13
    tau = np.zeros(mb.nv)
    tau[mb.speed_index("crank_angle")] = 2.5  # the crank is driven, every other coordinate is passive
    udot, lam = (np.asarray(v).ravel() for v in mbc.constrained_forward_dynamics(mb, constraints, q, u, tau))
    passive = [n for n in mb.speed_names if n != "crank_angle"]
    tau_back, lam_back, forces = (np.asarray(v).ravel() for v in
                                  mbc.constrained_inverse_dynamics(mb, constraints, q, u, udot, passive=passive))
    np.testing.assert_allclose(tau_back, tau, atol=1e-10)
    np.testing.assert_allclose(lam_back, lam, rtol=1e-10, atol=1e-10)
    g = np.asarray(mbc.constraint_jacobian(mb, constraints, q))
    np.testing.assert_allclose(forces, -g.T @ lam, atol=1e-10)


def test_jacobian_and_bias_are_derivatives_of_the_errors():
    """φ(q(t)) along q(t) = q + t u + t²/2 u̇ (scalar coordinates, qdot = u): G u and G u̇ + Ġu are its first two
    time derivatives (central differences)."""
    osim = _load(FOURBAR)
    mb, constraints = osim.multibody, osim.constraints
    rng = np.random.default_rng(1)
    q, u, udot = rng.uniform(-0.5, 0.5, mb.nq), rng.normal(size=mb.nv), rng.normal(size=mb.nv)

    def phi(t):
        return np.asarray(mbc.constraint_errors(mb, constraints, q + t * u + 0.5 * t * t * udot)).ravel()

    h = 1e-4
    g = np.asarray(mbc.constraint_jacobian(mb, constraints, q))
    bias = np.asarray(mbc.constraint_bias(mb, constraints, q, u)).ravel()
    np.testing.assert_allclose((phi(h) - phi(-h)) / (2 * h), g @ u, atol=1e-8)
    np.testing.assert_allclose((phi(h) - 2 * phi(0) + phi(-h)) / h**2, g @ udot + bias, atol=1e-6)


def test_constrained_model_needs_to_be_asked_for(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ModelFileError, match=r"PointConstraint\(s\) \['loop_closure'\].*WeldConstraint\(s\) "
                                                 r"\['payload_weld'\].*constraints=True"):
            load_osim(FOURBAR)
        from trajopt.model.musculoskeletal.operators import load_processed

        with pytest.raises(ModelFileError, match=r"fourbar.osim: PointConstraint/WeldConstraint \['loop_closure', "
                                                 r"'payload_weld'\]"):
            load_processed(FOURBAR)


def test_unsupported_constraint_type_names_the_element(tmp_path):
    path = tmp_path / "distance.osim"
    path.write_text(FOURBAR.read_text().replace('<PointConstraint name="loop_closure">',
                                                '<ConstantDistanceConstraint name="loop_closure">')
                    .replace("</PointConstraint>", "</ConstantDistanceConstraint>"))
    with pytest.raises(ModelFileError, match=r"distance.osim: .*ConstraintSet/objects/ConstantDistanceConstraint"
                                             r"\[loop_closure\]: unsupported constraint type "
                                             r"'ConstantDistanceConstraint'"):
        _load(path)


def test_weld_frame_that_does_not_exist_is_named(tmp_path):
    path = tmp_path / "weld.osim"
    path.write_text(FOURBAR.read_text().replace("<socket_frame2>on_payload</socket_frame2>",
                                                "<socket_frame2>on_nothing</socket_frame2>"))
    with pytest.raises(ModelFileError, match=r"WeldConstraint payload_weld \(socket_frame2\) refers to frame "
                                             r"'/constraintset/payload_weld/on_nothing'"):
        _load(path)


def test_coupler_with_unsupported_function_names_file_element_and_type(tmp_path):
    coupler = ('<CoordinateCouplerConstraint name="tilt_coupler"><coupled_coordinates_function><StepFunction>'
               '<transition_start_time>0</transition_start_time></StepFunction></coupled_coordinates_function>'
               '<independent_coordinate_names>crank_angle</independent_coordinate_names>'
               '<dependent_coordinate_name>coupler_tilt</dependent_coordinate_name></CoordinateCouplerConstraint>')
    path = tmp_path / "stepped.osim"
    path.write_text(FOURBAR.read_text().replace('<PointConstraint name="loop_closure">',
                                                coupler + '<PointConstraint name="loop_closure">'))
    with pytest.raises(ModelFileError) as caught:
        _load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "CoordinateCouplerConstraint[tilt_coupler]" in message
    assert "unsupported function type 'StepFunction'" in message and "\n" not in message


def test_tool_couplers_are_the_multibody_couplers():
    """The OpenSim-style tools' CouplerConstraints (reduced form) and trajopt.core.multibody's CoordinateCoupler are the
    same constraint: Jacobians opposite (φ's sign), and the coupling matrix spans the null space of G."""
    from trajopt.edge.tools.common import load_tool_input

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = load_tool_input(WALK3D, ROOT / "trajopt" / "examples" / "walk3d" / "coordinates.sto")
    tools, mb = data.constraints, data.osim.multibody
    q = data.motion.data[100]
    g = np.asarray(mbc.constraint_jacobian(mb, tools.as_multibody(), q))
    np.testing.assert_array_equal(g, -tools.jacobian(q)[0])
    assert np.max(np.abs(g @ tools.coupling_matrix(q)[0])) == 0.0
    assert np.max(np.abs(np.asarray(mbc.constraint_errors(mb, tools.as_multibody(), q)))) < 1e-15
