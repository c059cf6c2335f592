"""ExternalLoads (.xml + data) read and applied as OpenSim's ExternalForce does, checked against OpenSim's
InverseDynamicsTool: the generalized forces the loads contribute (ID with loads minus ID without) must agree."""

import warnings

import numpy as np
import pytest

from conftest import ROOT
from trajopt.studies.analysis.external_loads_file import read_external_loads
from trajopt.studies.analysis.inverse_dynamics import motion_inverse_dynamics
from trajopt.studies.analysis.static_optimization import StaticOptimization
from trajopt.errors import TrajoptInputError
from trajopt.examples.arm26_static_optimization.main import ELBOW_MOTION, load_model
from trajopt.model.io import MotionProcessor, Table, read_table, write_sto
from trajopt.model.osim import load_osim
from trajopt.model.musculoskeletal.operators import WeldJoints, load_processed

GAIT2D = ROOT / "trajopt" / "examples" / "gait2d"
WALK3D = ROOT / "trajopt" / "examples" / "walk3d"


def _contribution(opensim_task, model_file, coordinates, loads_file, window, disable=()):
    common = {"model": str(model_file), "coordinates": str(coordinates), "initial_time": window[0],
              "final_time": window[1], "disable": list(disable)}
    with_loads = opensim_task("inverse_dynamics_tool", dict(common, external_loads=str(loads_file)))
    without = opensim_task("inverse_dynamics_tool", common)
    return (with_loads["time"], list(with_loads["labels"]),
            with_loads["generalized_forces"] - without["generalized_forces"])


def _ours(osim, coordinates, loads, times):
    motion = MotionProcessor(coordinates, window=(times[0], times[-1]))
    with_loads = motion_inverse_dynamics(osim, motion, external_loads=loads)
    without = motion_inverse_dynamics(osim, motion)
    assert np.allclose(with_loads.times, times, atol=1e-12)
    a, b = with_loads.generalized_forces_table(), without.generalized_forces_table()
    return {label: a.column(label) - b.column(label) for label in a.labels}


@pytest.mark.opensim
def test_gait2d_ground_reactions_match_opensim(opensim_task):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        osim = load_osim(GAIT2D / "2D_gait.osim")
    contacts = [f.name for f in osim.spec.contact_forces]  # the model's own contact spheres stay off
    times, labels, theirs = _contribution(opensim_task, GAIT2D / "2D_gait.osim", GAIT2D / "referenceCoordinates.sto",
                                          GAIT2D / "referenceGRF.xml", (0.0, 0.47), contacts)
    ours = _ours(osim, GAIT2D / "referenceCoordinates.sto", read_external_loads(GAIT2D / "referenceGRF.xml"), times)
    worst = max(np.max(np.abs(ours[label] - theirs[:, k])) for k, label in enumerate(labels))
    assert worst < 3e-8  # measured 9.7e-9: the tool prints 8 decimals (loads up to ~1.2 kN)


@pytest.mark.opensim
@pytest.mark.slow
def test_walk3d_ground_reactions_match_opensim(opensim_task):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # mtp is not in coordinates.sto: OpenSim's tool holds it at its default (0), the weld at 0 does the same.
        osim, _ = load_processed(WALK3D / "subject_walk_scaled.osim", [WeldJoints(("mtp_r", "mtp_l"))])
    times, labels, theirs = _contribution(opensim_task, WALK3D / "subject_walk_scaled.osim",
                                          WALK3D / "coordinates.sto", WALK3D / "grf_walk.xml", (0.5, 1.6))
    ours = _ours(osim, WALK3D / "coordinates.sto", read_external_loads(WALK3D / "grf_walk.xml"), times)
    interior = slice(2, -2)
    worst = max(np.max(np.abs(ours[label][interior] - theirs[interior, k])) for k, label in enumerate(labels)
                if label in ours)
    assert worst < 3e-8  # measured 9.9e-9 (8 printed decimals)


def _loads_file(tmp_path, text, data=True):
    source = (GAIT2D / "referenceGRF.xml").read_text()
    (tmp_path / "loads.xml").write_text(text(source))
    if data:
        (tmp_path / "referenceGRF.sto").write_text((GAIT2D / "referenceGRF.sto").read_text())
    return tmp_path / "loads.xml"


def test_missing_data_file_is_one_line(tmp_path):
    path = _loads_file(tmp_path, lambda s: s, data=False)
    with pytest.raises(TrajoptInputError, match=r"loads.xml: datafile 'referenceGRF.sto' not found"):
        read_external_loads(path)


def test_missing_column_names_force_and_identifier(tmp_path):
    path = _loads_file(tmp_path, lambda s: s.replace("ground_force_r_v<", "ground_force_r_w<"))
    with pytest.raises(TrajoptInputError, match=r"ExternalForce 'Right_GRF': force_identifier 'ground_force_r_w' "
                                                r"matches 0 columns"):
        read_external_loads(path)


def test_unknown_body_names_force_and_body(tmp_path):
    path = _loads_file(tmp_path, lambda s: s.replace("<applied_to_body>calcn_r<", "<applied_to_body>heel_r<"))
    loads = read_external_loads(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        osim = load_osim(GAIT2D / "2D_gait.osim")
    with pytest.raises(TrajoptInputError, match=r"ExternalForce 'Right_GRF' applied_to_body 'heel_r' is not a body"):
        loads.check(osim.multibody)


def test_a_path_and_the_object_give_the_same_inverse_dynamics():
    """``external_loads=`` takes the .xml file as well as ``ExternalLoads``. 2D_gait's pelvis_ty translates the whole
    model along ground y, so the loads' share of its generalized force is minus the summed vertical reactions."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        osim = load_osim(GAIT2D / "2D_gait.osim")
    motion = MotionProcessor(GAIT2D / "referenceCoordinates.sto", window=(0.0, 0.2))
    from_path = motion_inverse_dynamics(osim, motion, external_loads=str(GAIT2D / "referenceGRF.xml"))
    from_object = motion_inverse_dynamics(osim, motion, external_loads=read_external_loads(GAIT2D / "referenceGRF.xml"))
    np.testing.assert_array_equal(from_path.generalized_forces, from_object.generalized_forces)
    without = motion_inverse_dynamics(osim, motion).generalized_forces_table()
    contribution = from_path.generalized_forces_table().column("pelvis_ty_force") - without.column("pelvis_ty_force")
    grf = read_table(GAIT2D / "referenceGRF.sto")  # sampled at the motion's times
    vertical = np.interp(from_path.times, grf.time, grf.column("ground_force_r_vy") + grf.column("ground_force_l_vy"))
    assert np.abs(vertical).max() > 1000.0
    np.testing.assert_allclose(contribution, -vertical, rtol=0, atol=1e-9)


def _hand_load(folder):
    """A constant 20 N downward pull on arm26's hand, 0.3 m along the forearm, as an ExternalLoads .xml."""
    times = np.linspace(0.0, 2.0, 5)
    data = np.tile([0.0, -20.0, 0.0, 0.0, -0.3, 0.0], (times.size, 1))
    write_sto(folder / "hand.sto", Table(times, ("hand_vx", "hand_vy", "hand_vz", "hand_px", "hand_py", "hand_pz"),
                                         data, in_degrees=False, name="hand"))
    (folder / "hand.xml").write_text(
        "<OpenSimDocument><ExternalLoads name='hand'><objects><ExternalForce name='pull'>"
        "<applied_to_body>r_ulna_radius_hand</applied_to_body><force_expressed_in_body>ground"
        "</force_expressed_in_body><point_expressed_in_body>r_ulna_radius_hand</point_expressed_in_body>"
        "<force_identifier>hand_v</force_identifier><point_identifier>hand_p</point_identifier>"
        "</ExternalForce></objects><datafile>hand.sto</datafile></ExternalLoads></OpenSimDocument>")
    return folder / "hand.xml"


def test_static_optimization_takes_the_loads_file(tmp_path):
    model = load_model()
    path = _hand_load(tmp_path)
    from_path = StaticOptimization(model, ELBOW_MOTION, external_loads=path).inverse_dynamics.generalized_forces
    from_object = StaticOptimization(model, ELBOW_MOTION,
                                     external_loads=read_external_loads(path)).inverse_dynamics.generalized_forces
    without = StaticOptimization(model, ELBOW_MOTION).inverse_dynamics.generalized_forces
    np.testing.assert_array_equal(from_path, from_object)
    # 20 N at 0.3 m down the forearm: at most about 6 N·m about the elbow (measured 6.04, forearm near horizontal).
    assert 5.5 < np.abs(from_path - without)[:, 1].max() < 6.5


def test_missing_loads_file_is_one_line(tmp_path):
    with pytest.raises(TrajoptInputError, match=r"^\S*nowhere.xml: ExternalLoads file not found$"):
        StaticOptimization(load_model(), ELBOW_MOTION, external_loads=tmp_path / "nowhere.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        osim = load_osim(GAIT2D / "2D_gait.osim")
    with pytest.raises(TrajoptInputError, match=r"^\S*nowhere.xml: ExternalLoads file not found$"):
        motion_inverse_dynamics(osim, GAIT2D / "referenceCoordinates.sto", external_loads=str(tmp_path / "nowhere.xml"))
