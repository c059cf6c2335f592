"""Joint reactions with muscle forces applied (trajopt.studies.analysis.joint_reactions).

- no muscle force: the reactions are inverse dynamics' (identity);
- BICshort has no wrap object in arm26, so its straight-line path is OpenSim's: with only its
  force applied, trajopt's reactions and the generalized forces left for the joints must equal
  OpenSim's JointReaction loads (Joint::calcReactionOnChildExpressedInGround) to rounding;
- TRIlat, TRImed and BRA wrap over the humerus' cylinder: with their forces applied at the path and
  tangent points of OpenSim's wrapped path, the same must hold.
"""

import warnings

import numpy as np
import pytest

from conftest import ROOT
from trajopt.examples.arm26_static_optimization.main import ELBOW_MOTION, build_problem, load_model
from trajopt.studies.analysis.joint_reactions import muscle_joint_reactions

ARM26 = ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim"


@pytest.fixture(scope="module")
def setup():
    model = load_model()
    problem = build_problem(ELBOW_MOTION, model=model)
    return model, problem.inverse_dynamics


def _bicshort_forces(model, frames):
    forces = np.zeros((frames, len(model.muscles)))
    forces[:, model.muscle_names.index("BICshort")] = np.linspace(10.0, 200.0, frames)
    return forces


def _assert_equals_opensim_joint_reaction(opensim_task, model, kinematics, forces, reactions):
    """OpenSim's JointReaction loads with the same muscle forces (child process) equal ``reactions`` to 1e-9."""
    k = kinematics
    reference = opensim_task("osim_joint_reaction_muscles", {
        "model": str(ARM26), "q": k.q, "u": k.u, "udot": k.udot,
        "muscle_names": np.array(model.muscle_names), "muscle_forces": forces})
    assert tuple(reference["joint_names"]) == reactions.joint_names
    assert reference["udot_error"] <= 1e-10
    np.testing.assert_allclose(reactions.forces, reference["forces_ground"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(reactions.moments, reference["moments_ground"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(reactions.joint_generalized_forces, reference["actuator_forces"], rtol=0, atol=1e-9)


def test_without_muscle_forces_reactions_are_inverse_dynamics(setup):
    model, inverse = setup
    reactions = muscle_joint_reactions(model, inverse.kinematics, np.zeros((inverse.times.size, 6)))
    np.testing.assert_allclose(reactions.forces, inverse.reaction_forces, rtol=0, atol=1e-10)
    np.testing.assert_allclose(reactions.moments, inverse.reaction_moments, rtol=0, atol=1e-10)
    np.testing.assert_allclose(reactions.joint_generalized_forces, inverse.generalized_forces, rtol=0, atol=1e-10)
    # wrapped_muscles: those whose wrap objects the loads ignore (wrapping=False); every wrap object is modelled
    assert reactions.wrapped_muscles == ()


def test_written_table_has_opensim_labels(setup, tmp_path):
    model, inverse = setup
    reactions = muscle_joint_reactions(model, inverse.kinematics, _bicshort_forces(model, inverse.times.size))
    written = reactions.write(tmp_path)
    assert written[0].name == "joint_reactions_with_muscles.sto"
    assert "r_elbow_on_r_ulna_radius_hand_in_ground_fy" in reactions.table().labels


@pytest.mark.opensim
def test_unwrapped_muscle_reactions_equal_opensim_joint_reaction(setup, opensim_task):
    model, inverse = setup
    k = inverse.kinematics
    forces = _bicshort_forces(model, k.times.size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reactions = muscle_joint_reactions(model, k, forces)
    _assert_equals_opensim_joint_reaction(opensim_task, model, k, forces, reactions)


def test_static_optimization_exposes_reactions_with_its_muscle_forces(setup):
    model, _ = setup
    problem = build_problem(ELBOW_MOTION, model=model)
    result = problem.solve()
    reactions = problem.joint_reactions(result)
    direct = muscle_joint_reactions(model, problem.inverse_dynamics.kinematics, result.muscle_forces)
    np.testing.assert_array_equal(reactions.forces, direct.forces)
    # muscles pull the forearm into the elbow: far larger loads than the weight alone
    elbow = reactions.joint_names.index("r_elbow")
    assert (np.abs(reactions.forces[:, elbow]).max()
            > 5 * np.abs(result.inverse_dynamics.reaction_forces[:, elbow]).max())


@pytest.mark.opensim
def test_wrapped_muscle_reactions_equal_opensim_joint_reaction(setup, opensim_task):
    from trajopt.model.paths.geometric import geometric_path

    model, inverse = setup
    k = inverse.kinematics
    names = ("TRIlat", "TRImed", "BRA")
    forces = np.zeros((k.times.size, len(model.muscles)))
    for j, name in enumerate(names):
        forces[:, model.muscle_names.index(name)] = np.linspace(50.0, 300.0, k.times.size) * (1 + j)
    # the elbow motion wraps them over the cylinder on part of the frames: a straight line would not do
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wrapped = [float(geometric_path(model.osim, "BRA").length(q)) for q in k.q]
        straight = [float(geometric_path(model.osim, "BRA", wrapping=False).length(q)) for q in k.q]
    assert np.max(np.subtract(wrapped, straight)) > 1e-3
    reactions = muscle_joint_reactions(model, k, forces)
    # measured: forces 2.9e-10 N (of 1650 N), moments 5.6e-12 N·m, generalized forces 3.3e-13 N·m
    _assert_equals_opensim_joint_reaction(opensim_task, model, k, forces, reactions)


@pytest.mark.opensim
@pytest.mark.slow
def test_all_six_muscles_reactions_equal_opensim_joint_reaction(setup, opensim_task):
    """TRIlong and BIClong wrap over ellipsoids (and TRIlong over two cylinders): with all six muscles pulling,
    the reactions equal OpenSim's JointReaction."""
    from trajopt.model.paths.geometric import geometric_path

    model, inverse = setup
    k = inverse.kinematics
    forces = np.outer(np.linspace(50.0, 300.0, k.times.size), np.arange(1.0, len(model.muscles) + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("TRIlong", "BIClong"):
            wrapped = geometric_path(model.osim, name).wrapped_length_function.map(k.times.size)(k.q.T)
            straight = [float(geometric_path(model.osim, name, wrapping=False).length(q)) for q in k.q]
            assert np.max(np.abs(np.asarray(wrapped).ravel() - straight)) > 5e-4, name  # the wraps are on
    reactions = muscle_joint_reactions(model, k, forces)
    assert reactions.wrapped_muscles == ()
    # measured: forces 5.8e-10 N (of 5876 N), moments 1.1e-11 N·m, generalized forces 6.5e-13 N·m
    _assert_equals_opensim_joint_reaction(opensim_task, model, k, forces, reactions)
