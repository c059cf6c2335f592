"""MusculoskeletalModel: arm26 muscles on DeGroote curves over polynomial paths.

Identities: moment arms are -∂l/∂q (central differences of the length Function); lengthening
speed is -R u; muscle power balance τ·u = -F·l̇. Parameters: the Thelen2003 -> DeGroote mapping
of OpenSim's replaceMuscles, checked against the .osim XML read independently.
"""

import json
import warnings
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

from conftest import ROOT
from trajopt.errors import TrajoptInputError
from trajopt.model.musculoskeletal import MusculoskeletalModel
from trajopt.model.paths.polynomial import PolynomialPaths

ARM26 = ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim"
PATHS = ROOT / "trajopt" / "examples" / "arm26" / "paths.json"


def _states(count=5, seed=0):
    generator = np.random.default_rng(seed)
    q = np.column_stack([generator.uniform(-0.3, 1.2, count), generator.uniform(0.1, 2.0, count)])
    u = generator.normal(size=(count, 2))
    return q, u


def test_moment_arms_are_minus_length_gradient(arm26_model):
    q, u = _states()
    step = 1e-6
    for k in range(len(q)):
        _, _, arms = (np.asarray(x) for x in arm26_model.musculotendon_kinematics(q[k], u[k]))
        for j in range(2):
            dq = np.zeros(2)
            dq[j] = step
            plus = np.asarray(arm26_model.musculotendon_kinematics(q[k] + dq, u[k])[0]).ravel()
            minus = np.asarray(arm26_model.musculotendon_kinematics(q[k] - dq, u[k])[0]).ravel()
            np.testing.assert_allclose(arms[:, j], -(plus - minus) / (2 * step), rtol=0, atol=1e-8)


def test_lengthening_speed_and_power_balance(arm26_model):
    q, u = _states()
    activations = np.linspace(0.05, 0.9, len(arm26_model.muscles))
    for k in range(len(q)):
        _, speeds, arms = (np.asarray(x) for x in arm26_model.musculotendon_kinematics(q[k], u[k]))
        np.testing.assert_allclose(speeds.ravel(), -arms @ u[k], rtol=1e-12, atol=1e-14)
        forces = np.asarray(arm26_model.tendon_forces(activations, q[k], u[k])).ravel()
        tau = np.asarray(arm26_model.muscle_generalized_forces(activations, q[k], u[k])).ravel()
        # power delivered to the skeleton = power the shortening muscles deliver
        assert tau @ u[k] == pytest.approx(-forces @ speeds.ravel(), rel=1e-12, abs=1e-12)


def test_tendon_force_is_affine_in_activation(arm26_model):
    q, u = _states(1)
    at_zero, per_activation = (np.asarray(x).ravel() for x in arm26_model.tendon_force_affine(q[0], u[0]))
    a = np.full(len(arm26_model.muscles), 0.37)
    forces = np.asarray(arm26_model.tendon_forces(a, q[0], u[0])).ravel()
    np.testing.assert_allclose(forces, at_zero + 0.37 * per_activation, rtol=1e-12)
    assert np.all(per_activation > 0)


def test_thelen_parameters_map_as_opensim_replace_muscles(arm26_model):
    root = ElementTree.parse(ARM26).getroot()
    for muscle, spec in zip(arm26_model.muscles, arm26_model.muscle_specs):
        element = root.find(f".//Thelen2003Muscle[@name='{spec.name}']")
        value = lambda tag: float(element.find(tag).text)  # noqa: E731
        p = muscle.parameters
        assert p.max_isometric_force == value("max_isometric_force")
        assert p.optimal_fiber_length == value("optimal_fiber_length")
        assert p.tendon_slack_length == value("tendon_slack_length")
        assert p.optimal_pennation_angle == value("pennation_angle_at_optimal")
        assert p.max_contraction_velocity == value("max_contraction_velocity")
        assert p.tendon_strain_at_one_norm_force == value("FmaxTendonStrain")
        assert p.passive_fiber_strain_at_one_norm_force == value("FmaxMuscleStrain")
        assert p.fiber_damping == 0.0


def test_single_joint_paths_have_zero_moment_arm_elsewhere(arm26_model):
    q, u = _states(3)
    single = [i for i, name in enumerate(arm26_model.muscle_names)
              if arm26_model.paths[name].coordinates == ("r_elbow_flex",)]
    assert single  # TRIlat, TRImed, BRA
    for k in range(len(q)):
        arms = np.asarray(arm26_model.musculotendon_kinematics(q[k], u[k])[2])
        assert np.all(arms[single, 0] == 0.0)
        assert np.all(arms[single, 1] != 0.0)


def test_missing_path_names_the_muscles(arm26_model):
    partial = PolynomialPaths([path for path in arm26_model.paths if path.muscle != "BRA"])
    with pytest.raises(TrajoptInputError, match="BRA"):
        MusculoskeletalModel(arm26_model.osim, partial)


def test_paths_for_muscles_the_model_lacks_are_a_note(arm26_model, tmp_path):
    data = json.loads(PATHS.read_text())
    data["paths"].append(dict(data["paths"][0], muscle="NOT_A_MUSCLE"))
    (tmp_path / "paths.json").write_text(json.dumps(data))
    model = MusculoskeletalModel(arm26_model.osim, PolynomialPaths.load(tmp_path / "paths.json"))
    assert (len(model.notes) == 1 and "1 muscle(s) the model lacks" in model.notes[0]
            and "NOT_A_MUSCLE" in model.notes[0])
    assert arm26_model.notes == ()
    assert model.muscle_names == arm26_model.muscle_names


def test_load_from_files_equals_explicit_construction(arm26_model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded = MusculoskeletalModel.load(ARM26, PATHS)
    q, u = _states(2)
    a = np.full(6, 0.2)
    np.testing.assert_array_equal(np.asarray(loaded.muscle_generalized_forces(a, q[0], u[0])),
                                  np.asarray(arm26_model.muscle_generalized_forces(a, q[0], u[0])))
