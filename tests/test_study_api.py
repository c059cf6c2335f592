"""The studies' common API: a motion as a file, a table or a MotionProcessor (filter, window), external loads as a
file or an object, enums instead of string options, one Residuals type. Each test compares two ways of asking the
same question, or checks a physical identity."""


import numpy as np
import pytest

from conftest import ROOT
from test_external_loads import _hand_load
from trajopt.studies.analysis.external_loads_file import read_external_loads
from trajopt.studies.analysis.inverse_dynamics import motion_inverse_dynamics
from trajopt.studies.analysis.muscle_inverse import MuscleDrivenInverse
from trajopt.studies.analysis.static_optimization import StaticOptimization
from trajopt.errors import TrajoptInputError
from trajopt.examples.arm26_static_optimization.main import ELBOW_MOTION, load_model
from trajopt.model.io import MotionProcessor, read_motion
from trajopt.core.multibody import BodyAxes, ReactionAxes, joint_reaction_loads
from trajopt.core.ocp import Hessian, Ipopt, ResidualCoordinates, Residuals

DATA = ROOT / "tests" / "data"
IK = DATA / "arm26" / "arm26_InverseKinematics.mot"


def test_a_window_selects_the_whole_motions_frames(arm26):
    """Inverse dynamics is per frame: a window on the processor gives the rows of the whole motion's result that
    fall in it, with or without a filter."""
    for cutoff in (None, 6.0):
        whole = motion_inverse_dynamics(arm26, MotionProcessor(IK, cutoff_frequency=cutoff))
        start, final = 0.3, 0.7
        part = motion_inverse_dynamics(arm26, MotionProcessor(IK, cutoff_frequency=cutoff, window=(start, final)))
        rows = (whole.times >= part.times[0] - 1e-12) & (whole.times <= part.times[-1] + 1e-12)
        np.testing.assert_allclose(part.times, whole.times[rows], rtol=0, atol=1e-12)
        np.testing.assert_allclose(part.generalized_forces, whole.generalized_forces[rows], rtol=0, atol=1e-9)
        assert part.times[0] == pytest.approx(start, abs=0.01) and part.times[-1] == pytest.approx(final, abs=0.01)


def test_a_file_a_table_and_a_processor_are_the_same_motion(arm26):
    table = read_motion(IK, rotational=[c.name for c in arm26.spec.coordinates if c.motion_type == "rotational"])
    results = [motion_inverse_dynamics(arm26, motion).generalized_forces
               for motion in (IK, str(IK), table, MotionProcessor(IK), MotionProcessor(table))]
    for other in results[1:]:
        np.testing.assert_array_equal(other, results[0])


def test_static_optimization_window_is_the_window_of_its_frames():
    """Static optimization frames are independent: a windowed solve equals the same frames of the whole solve to the
    solver's tolerance."""
    model = load_model()
    whole = StaticOptimization(model, ELBOW_MOTION).solve()
    part = StaticOptimization(model, MotionProcessor(ELBOW_MOTION, window=(0.25, 0.5))).solve()
    rows = (whole.times >= part.times[0] - 1e-12) & (whole.times <= part.times[-1] + 1e-12)
    assert part.times[0] == pytest.approx(0.25, abs=0.01) and part.times[-1] == pytest.approx(0.5, abs=0.01)
    np.testing.assert_allclose(part.times, whole.times[rows], rtol=0, atol=1e-12)
    np.testing.assert_allclose(part.activations, whole.activations[rows], rtol=0, atol=1e-7)


def test_muscle_inverse_takes_the_loads_file_or_object(tmp_path):
    """A path and the loaded ExternalLoads give the same required generalized forces; 20 N pulling 0.3 m down the
    forearm changes the elbow's by about 6 N·m (forearm near horizontal)."""
    model = load_model()
    path = _hand_load(tmp_path)
    motion = MotionProcessor(ELBOW_MOTION, window=(0.0, 1.0))
    times = np.linspace(0.0, 1.0, 21)
    required = {name: MuscleDrivenInverse(model, motion, external_loads=loads).grid_data(times).required_forces
                for name, loads in (("path", path), ("text", str(path)), ("object", read_external_loads(path)),
                                    ("none", None))}
    np.testing.assert_array_equal(required["path"], required["object"])
    np.testing.assert_array_equal(required["text"], required["object"])
    assert 5.5 < np.abs(required["path"] - required["none"])[:, 1].max() < 6.5


def test_reaction_forces_have_the_same_size_in_every_axes(arm26):
    """Re-expressing a force rotates it: each joint's reaction has the same magnitude in ground, child, parent and
    any body's axes."""
    rng = np.random.default_rng(5)
    mb = arm26.multibody
    q, u, udot = (rng.uniform(-1.0, 1.0, mb.nv) for _ in range(3))
    norms = []
    for axes in (ReactionAxes.GROUND, ReactionAxes.CHILD, ReactionAxes.PARENT, BodyAxes("r_humerus")):
        forces, moments = joint_reaction_loads(mb, q, u, udot, expressed_in=axes)
        norms.append((np.linalg.norm(np.asarray(forces), axis=0), np.linalg.norm(np.asarray(moments), axis=0)))
    assert norms[0][0].max() > 1.0
    for force, moment in norms[1:]:
        np.testing.assert_allclose(force, norms[0][0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(moment, norms[0][1], rtol=1e-12, atol=1e-12)


def test_string_options_and_unsupported_residuals_are_refused_in_one_line(arm26):
    with pytest.raises(TrajoptInputError, match="Hessian"):
        Ipopt(hessian="exact")
    assert Ipopt(hessian=Hessian.LIMITED_MEMORY).nlpsol_options(False)["ipopt"]["hessian_approximation"] == \
        "limited-memory"
    mb = arm26.multibody
    with pytest.raises(TrajoptInputError, match="ReactionAxes"):
        joint_reaction_loads(mb, np.zeros(mb.nv), np.zeros(mb.nv), np.zeros(mb.nv), expressed_in="child")
    model = load_model()
    with pytest.raises(TrajoptInputError, match="^static optimization: residuals on the coordinates of the joints"):
        StaticOptimization(model, ELBOW_MOTION, residuals=Residuals(coordinates=ResidualCoordinates.GROUND))
    with pytest.raises(TrajoptInputError, match="^static optimization: residual controls are unbounded"):
        StaticOptimization(model, ELBOW_MOTION, residuals=Residuals(max_control=1.0))
    with pytest.raises(TrajoptInputError, match="^MotionProcessor: window"):
        MotionProcessor(ELBOW_MOTION, window=(0.5, 0.2))
