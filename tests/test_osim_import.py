"""OpenSim model import: what trajopt reads from arm26 and 2D_gait equals what OpenSim reads,
and bad or partly supported files give errors/warnings that name the element and its path."""

import warnings
from pathlib import Path

import numpy as np
import pytest

from conftest import DATA, ROOT
from trajopt.errors import ModelFileError
from trajopt.model.osim import OsimIgnoredWarning, load_osim, parse_osim
from trajopt.model.osim import spec

ARM26 = ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim"
GAIT2D = ROOT / "trajopt" / "examples" / "gait2d" / "2D_gait.osim"
ALL_JOINTS = DATA / "osim" / "all_joints.osim"
BALL_FREE = DATA / "osim" / "ball_free.osim"


def _quiet_parse(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OsimIgnoredWarning)
        return parse_osim(path)


def _quiet_load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OsimIgnoredWarning)
        return load_osim(path)


@pytest.mark.opensim
@pytest.mark.parametrize("path", [ARM26, GAIT2D, ALL_JOINTS, BALL_FREE],
                         ids=["arm26", "gait2d", "all_joints", "ball_free"])
def test_import_matches_opensim(path, opensim_task):
    """Bodies, joints, coordinates, markers, muscles, actuators and contacts: names, types, numbers."""
    model = _quiet_parse(path)
    reference = opensim_task("osim_model_summary", {"model": str(path)})

    np.testing.assert_allclose(model.gravity, reference["gravity"], rtol=1e-15)
    assert [b.name for b in model.bodies] == list(reference["body_names"])
    np.testing.assert_allclose([b.mass for b in model.bodies], reference["body_masses"], rtol=1e-15)
    np.testing.assert_allclose([b.mass_center for b in model.bodies], reference["body_mass_centers"], rtol=1e-15)

    assert [j.name for j in model.joints] == list(reference["joint_names"])
    assert [type(j).__name__ for j in model.joints] == list(reference["joint_types"])
    assert [j.parent_frame for j in model.joints] == list(reference["joint_parent_frames"])
    assert [j.child_frame for j in model.joints] == list(reference["joint_child_frames"])

    coordinates = model.coordinates
    assert [c.name for c in coordinates] == list(reference["coordinate_names"])
    assert [c.motion_type for c in coordinates] == list(reference["coordinate_motion_types"])
    np.testing.assert_allclose([c.range for c in coordinates], reference["coordinate_ranges"], rtol=1e-15)
    np.testing.assert_allclose([c.default_value for c in coordinates], reference["coordinate_defaults"])
    assert [c.locked for c in coordinates] == list(reference["coordinate_locked"])

    assert [m.name for m in model.markers] == list(reference["marker_names"])

    muscles = model.muscles
    assert [m.name for m in muscles] == list(reference["muscle_names"])
    assert [m.model for m in muscles] == list(reference["muscle_types"])
    for field, key in [("max_isometric_force", "muscle_max_isometric_force"),
                       ("optimal_fiber_length", "muscle_optimal_fiber_length"),
                       ("tendon_slack_length", "muscle_tendon_slack_length"),
                       ("pennation_angle_at_optimal", "muscle_pennation_angle"),
                       ("max_contraction_velocity", "muscle_max_contraction_velocity")]:
        np.testing.assert_allclose([getattr(m, field) for m in muscles], reference[key], rtol=1e-15, err_msg=field)
    assert [len(m.path.points) for m in muscles] == list(reference["muscle_path_point_counts"])

    assert [a.name for a in model.coordinate_actuators] == list(reference["actuator_names"])
    assert [a.coordinate for a in model.coordinate_actuators] == list(reference["actuator_coordinates"])
    np.testing.assert_allclose([a.optimal_force for a in model.coordinate_actuators],
                               reference["actuator_optimal_forces"])
    assert [c.name for c in model.contact_forces] == list(reference["contact_names"])
    np.testing.assert_allclose([c.stiffness for c in model.contact_forces], reference["contact_stiffness"])


def test_arm26_contents():
    """Offline check of what the arm26 file holds (read by eye from the file)."""
    model = _quiet_load(ARM26)
    assert model.multibody.coordinate_names == ("r_shoulder_elev", "r_elbow_flex")
    assert [b.name for b in model.multibody.bodies] == ["base", "r_humerus", "r_ulna_radius_hand"]
    assert len(model.muscles) == 6 and {m.model for m in model.muscles} == {"Thelen2003Muscle"}
    triceps = model.muscle("TRIlong")
    assert triceps.parameters.KshapeActive == 0.5 and triceps.parameters.Af == 0.3  # file values, not defaults
    assert [w.wrap_object for w in triceps.path.wraps] == ["TRI", "TRIlonghh", "TRIlongglen"]
    assert {w.name: w.frame for w in model.spec.wrap_objects}["TRI"] == "/bodyset/r_humerus"
    assert model.spec.muscles_using("TRIlonghh") == ("TRIlong",)
    # The shoulder's parent frame is an offset of 'base' (-0.017545, -0.007, 0.17): joint frames compose to bodies.
    shoulder = model.multibody.joint("r_shoulder")
    assert shoulder.parent.body == "base"
    np.testing.assert_allclose(shoulder.parent.translation, (-0.017545, -0.007, 0.17))


def test_gait2d_contents():
    """2D_gait keeps its forces in <components>: muscles, actuator and contacts are all found."""
    with pytest.warns(OsimIgnoredWarning, match="derivative_smoothing"):
        model = load_osim(GAIT2D)
    assert len(model.muscles) == 18 and {m.model for m in model.muscles} == {"DeGrooteFregly2016Muscle"}
    assert model.multibody.nq == model.multibody.nv == 10
    points = model.muscle("rect_fem_r").path.points
    moving = [p for p in points if isinstance(p, spec.MovingPathPoint)]
    assert moving and moving[0].x_coordinate == "knee_angle_r"
    assert isinstance(moving[0].x_location, spec.MultiplierFunction)
    conditional = [p for m in model.muscles for p in m.path.points if isinstance(p, spec.ConditionalPathPoint)]
    assert conditional and conditional[0].coordinate == "hip_flexion_r"
    assert [s.name for s in model.contact_spheres] == ["heel_r", "heel_l", "front_r", "front_l"]
    assert model.contact_spheres[0].body == "calcn_r" and model.contact_spheres[0].radius == 0.035
    # The floor is rotated -90 deg about z: Simbody's half space x > 0 becomes y < 0, outward normal +y.
    np.testing.assert_allclose(model.contact_half_spaces[0].normal, (0.0, 1.0, 0.0), atol=1e-15)
    assert model.contact_forces[0].sphere == "/contactgeometryset/heel_r"
    assert model.contact_forces[0].constant_contact_force == 1e-5  # absent from the file: OpenSim's default


def test_ball_and_free_joints_become_quaternion_joints():
    model = _quiet_load(BALL_FREE)
    multibody = model.multibody
    assert (multibody.nq, multibody.nv) == (11, 9)
    assert multibody.coordinate_names == ("floating_qw", "floating_qx", "floating_qy", "floating_qz",
                                          "trunk_tx", "trunk_ty", "trunk_tz",
                                          "shoulder_qw", "shoulder_qx", "shoulder_qy", "shoulder_qz")


def test_nested_frames_compose_to_their_body():
    """/bodyset/slider/shelf sits on the slider body; the universal joint's frame sits on the shelf."""
    model = _quiet_load(ALL_JOINTS)
    joint = model.multibody.joint("cardan_joint")
    assert joint.parent.body == "slider"
    from trajopt.core.multibody.rotations import xyz_body_fixed_rotation

    shelf = np.array(xyz_body_fixed_rotation((-0.3, 0.1, 0.5)))
    own = np.array(xyz_body_fixed_rotation((0.4, 0.0, -0.2)))
    np.testing.assert_allclose(joint.parent.translation, np.array([0.05, -0.1, 0.2]) + shelf @ [0, -0.05, 0.01],
                               atol=1e-15)
    np.testing.assert_allclose(joint.parent.rotation, shelf @ own, atol=1e-14)
    assert model.marker("on_shelf").body == "slider"


def test_enforced_coupler_constraint_is_refused(tmp_path):
    """trajopt.core.multibody has no kinematic constraints: the spec keeps the constraint, the build refuses it."""
    constraint = ("<ConstraintSet name=\"constraintset\">\n\t\t\t<objects><CoordinateCouplerConstraint name=\"couple\">"
                  "<coupled_coordinates_function><LinearFunction><coefficients>0.5 0</coefficients></LinearFunction>"
                  "</coupled_coordinates_function><independent_coordinate_names>r_shoulder_elev"
                  "</independent_coordinate_names><dependent_coordinate_name>r_elbow_flex</dependent_coordinate_name>"
                  "</CoordinateCouplerConstraint></objects>")
    path = _edited(tmp_path, "<ConstraintSet name=\"constraintset\">\n\t\t\t<objects />", constraint)
    parsed = _quiet_parse(path)
    assert parsed.constraints[0].function == spec.LinearFunction(0.5, 0.0)
    assert parsed.constraints[0].independent_coordinates == ("r_shoulder_elev",)
    with pytest.raises(ModelFileError, match=r"CoordinateCouplerConstraint\(s\) \['couple'\]"):
        _quiet_load(path)


# --- errors and warnings on edited copies of arm26 ----------------------------------------------


def _edited(tmp_path, old, new, count=1):
    text = ARM26.read_text()
    assert text.count(old) >= 1
    path = tmp_path / "edited.osim"
    path.write_text(text.replace(old, new, count))
    return path


def test_unsupported_joint_names_element_and_path(tmp_path):
    path = _edited(tmp_path, '<CustomJoint name="r_elbow">', '<EllipsoidJoint name="r_elbow">')
    path.write_text(path.read_text().replace("</CustomJoint>\n\t\t\t</objects>", "</EllipsoidJoint>\n\t\t\t</objects>"))
    with pytest.raises(ModelFileError, match=r"JointSet/objects/EllipsoidJoint\[r_elbow\].*EllipsoidJoint"):
        _quiet_parse(path)


def test_unsupported_force_names_element_and_path(tmp_path):
    path = _edited(tmp_path, "<ForceSet name=\"forceset\">\n\t\t\t<objects>",
                   "<ForceSet name=\"forceset\">\n\t\t\t<objects><PrescribedForce name=\"push\"/>")
    with pytest.raises(ModelFileError, match=r"ForceSet/objects/PrescribedForce\[push\]: unsupported component type"):
        _quiet_parse(path)


def test_ignored_elements_are_listed_in_a_warning(tmp_path):
    path = _edited(tmp_path, "<mass>1.8645719999999999</mass>",
                   "<mass>1.8645719999999999</mass><favourite_colour>blue</favourite_colour>")
    with pytest.warns(OsimIgnoredWarning, match=r"BodySet/objects/Body\[r_humerus\]/favourite_colour"):
        model = parse_osim(path)
    assert model.ignored == ("/OpenSimDocument/Model[arm26]/BodySet/objects/Body[r_humerus]/favourite_colour",)


def test_visual_elements_are_skipped_silently():
    with warnings.catch_warnings():
        warnings.simplefilter("error", OsimIgnoredWarning)
        model = parse_osim(ARM26)  # arm26 holds meshes, appearances and frame geometry only as visuals
    assert model.ignored == ()


def test_bad_number_names_file_and_element(tmp_path):
    path = _edited(tmp_path, "<mass>1.8645719999999999</mass>", "<mass>heavy</mass>")
    with pytest.raises(ModelFileError, match=r"edited.osim: .*Body\[r_humerus\]/mass: expected numbers, got 'heavy'"):
        _quiet_parse(path)


def test_opensim3_format_is_refused(tmp_path):
    path = _edited(tmp_path, 'Version="40000"', 'Version="30000"')
    with pytest.raises(ModelFileError, match="Version=30000"):
        _quiet_parse(path)


def test_unknown_frame_reference(tmp_path):
    path = _edited(tmp_path, "<socket_parent_frame>/bodyset/base</socket_parent_frame>",
                   "<socket_parent_frame>/bodyset/nowhere</socket_parent_frame>")
    with pytest.raises(ModelFileError, match="/bodyset/nowhere"):
        _quiet_parse(path)


WALK3D = Path(__file__).parent.parent / "trajopt" / "examples" / "walk3d" / "subject_walk_scaled.osim"


@pytest.mark.opensim
@pytest.mark.parametrize("path", [ARM26, GAIT2D, ALL_JOINTS, BALL_FREE, WALK3D],
                         ids=["arm26", "gait2d", "all_joints", "ball_free", "walk3d"])
def test_motion_types_match_opensim(path, opensim_task):
    """Coordinate::getMotionType: walk3d's knee angles (rotation axis plus spline translations) are rotational,
    its patella angles (spline rotation) coupled."""
    reference = opensim_task("osim_model_summary", {"model": str(path)})
    model = _quiet_parse(path)
    assert [c.name for c in model.coordinates] == list(reference["coordinate_names"])
    assert [c.motion_type for c in model.coordinates] == list(reference["coordinate_motion_types"])


def test_knee_in_degrees_is_converted(tmp_path):
    from trajopt.model.io import read_motion

    model = _quiet_parse(WALK3D)
    motion = tmp_path / "knee.mot"
    motion.write_text("knee\nversion=1\nnRows=2\nnColumns=3\ninDegrees=yes\nendheader\n"
                      "time\tknee_angle_r\tknee_angle_r_beta\n0\t30\t0.5\n0.01\t60\t0.5\n")
    rotational = tuple(c.name for c in model.coordinates if c.motion_type == "rotational")
    table = read_motion(motion, rotational=rotational)
    np.testing.assert_allclose(table.column("knee_angle_r"), np.radians([30.0, 60.0]), rtol=1e-15)
    np.testing.assert_allclose(table.column("knee_angle_r_beta"), [0.5, 0.5])  # coupled: as OpenSim, not converted
