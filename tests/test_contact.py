"""trajopt.model.contact: OpenSim's SmoothSphereHalfSpaceForce against OpenSim itself (free ball with
the half space on ground or on a moving plate; 2D_gait's four foot contacts), analytic Hertz and
friction identities, and the contact wrenches in the equations of motion."""

import dataclasses
import warnings

import casadi as ca
import numpy as np
import pytest

from conftest import ROOT
from trajopt.model.contact import (
    SmoothSphereHalfSpaceParameters,
    SphereContact,
    contact_loads,
    contact_record_values,
    contact_wrenches,
    contacts_on,
    ground_reaction_loads,
    osim_contacts,
    smooth_sphere_half_space_force,
    smooth_sphere_half_space_function,
)
from trajopt.errors import ModelFileError, TrajoptInputError
from trajopt.model.io.motion import read_motion
from trajopt.core.multibody import body_pose, frame_jacobian, inverse_dynamics
from trajopt.model.osim import load_osim

GAIT_MODEL = ROOT / "trajopt" / "examples" / "gait2d" / "2D_gait.osim"
GAIT_COORDINATES = ROOT / "trajopt" / "examples" / "gait2d" / "referenceCoordinates.sto"

# Relative agreement required with OpenSim, and the floors below which a force (N) or torque
# (N m) counts as zero (a sphere 2-10 cm above the plane, or leaving it fast, feels < 1e-12 N).
RELATIVE = 1e-6
FORCE_FLOOR = 1e-9
TORQUE_FLOOR = 1e-9

# Distinct static and dynamic friction so that every term of the friction law matters.
PROPERTIES = dict(stiffness=2e6, dissipation=1.5, static_friction=0.9, dynamic_friction=0.6, viscous_friction=0.3,
                  transition_velocity=0.15, constant_contact_force=1e-5, hertz_smoothing=300.0,
                  hunt_crossley_smoothing=50.0)
RADIUS = 0.04
SPHERE_LOCATION = np.array([0.05, -0.02, 0.03])
HALF_SPACE_LOCATION = np.array([0.1, 0.02, -0.05])
HALF_SPACE_ORIENTATION = np.array([0.2, -0.1, -1.4])  # tilted plane (body-fixed XYZ, rad)


def _xyz_body_fixed(angles):
    a, b, c = angles
    rx = np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])
    ry = np.array([[np.cos(b), 0, np.sin(b)], [0, 1, 0], [-np.sin(b), 0, np.cos(b)]])
    rz = np.array([[np.cos(c), -np.sin(c), 0], [np.sin(c), np.cos(c), 0], [0, 0, 1]])
    return rx @ ry @ rz


def _free_ball_request(half_space_on_body, samples=300, seed=7):
    """Random states: 70% penetrating (0-2 cm), the rest near (within 2 cm) or far (2-10 cm) above;
    approach speeds both sides of -2/(3c); slips below and above the transition velocity; half spinning."""
    rng = np.random.default_rng(seed)
    n = samples
    apart = np.where(rng.uniform(size=n) < 0.5, rng.uniform(-0.02, 0.0, n), rng.uniform(-0.1, -0.02, n))
    indentation = np.where(rng.uniform(size=n) < 0.7, rng.uniform(0.0, 0.02, n), apart)
    slow = rng.uniform(size=n) < 0.4
    tangential = np.where(slow[:, None], rng.uniform(-0.1, 0.1, (n, 2)), rng.uniform(-2, 2, (n, 2)))
    spinning = rng.uniform(size=n) < 0.5
    return dict(
        PROPERTIES, radius=RADIUS, sphere_location=SPHERE_LOCATION, half_space_location=HALF_SPACE_LOCATION,
        half_space_orientation=HALF_SPACE_ORIENTATION, half_space_on_body=int(half_space_on_body),
        indentation=indentation, tangent_offset=rng.uniform(-0.3, 0.3, (n, 2)),
        approach_speed=rng.uniform(-1.5, 1.5, n), tangential_velocity=tangential,
        ball_angles=np.column_stack([rng.uniform(-3, 3, n), rng.uniform(-1.2, 1.2, n), rng.uniform(-3, 3, n)]),
        ball_angular_speeds=np.where(spinning[:, None], rng.uniform(-5, 5, (n, 3)), 0.0),
        plate_coordinates=rng.uniform(-0.5, 0.5, (n, 6)), plate_speeds=rng.uniform(-1, 1, (n, 6)))


def _relative_errors(ours, reference, floor):
    """Per row: |ours - reference| / max(|reference|, floor), vector norms over the last axis."""
    error = np.linalg.norm(ours - reference, axis=-1)
    return error / np.maximum(np.linalg.norm(reference, axis=-1), floor)


@pytest.mark.parametrize("half_space_on_body", [False, True], ids=["plane_on_ground", "plane_on_moving_plate"])
def test_free_ball_force_and_torque_equal_opensim(opensim_task, half_space_on_body):
    request = _free_ball_request(half_space_on_body)
    reference = opensim_task("smooth_contact_free_body", request)
    parameters = SmoothSphereHalfSpaceParameters(
        sphere_radius=RADIUS, half_space_location=HALF_SPACE_LOCATION,
        half_space_normal=-_xyz_body_fixed(HALF_SPACE_ORIENTATION)[:, 0], **PROPERTIES)
    f = smooth_sphere_half_space_function(parameters)
    n = len(request["indentation"])
    ours = np.zeros((n, 12))
    indentation = np.zeros(n)
    for k in range(n):
        on_sphere, on_plane, point, depth = (np.array(v).ravel() for v in f(
            reference["sphere_center"][k], reference["sphere_velocity"][k], reference["ball_angular_velocity"][k],
            reference["plate_rotation"][k].reshape(3, 3), reference["plate_origin"][k],
            reference["plate_velocity"][k], reference["plate_angular_velocity"][k]))
        indentation[k] = depth[0]
        ours[k] = np.concatenate([on_sphere, np.cross(point - reference["ball_origin"][k], on_sphere),
                                  on_plane, np.cross(point - reference["plate_origin"][k], on_plane)])
    values = reference["record_values"]
    assert list(reference["record_labels"][:3]) == ["contact.Sphere.force.X", "contact.Sphere.force.Y",
                                                    "contact.Sphere.force.Z"]
    # The states really cover the regimes: contact and none, both Hunt-Crossley branches, strong forces.
    assert np.allclose(indentation, request["indentation"], atol=1e-9)
    assert (indentation > 0).sum() >= 100 and (indentation < -0.02).sum() >= 10
    assert (request["approach_speed"] < -2 / (3 * PROPERTIES["dissipation"])).sum() >= 20
    assert (np.linalg.norm(values[:, 0:3], axis=1) > 1.0).sum() >= 100
    assert np.linalg.norm(values[:, 0:3], axis=1).max() > 1000
    for block, floor in ((slice(0, 3), FORCE_FLOOR), (slice(3, 6), TORQUE_FLOOR),
                         (slice(6, 9), FORCE_FLOOR), (slice(9, 12), TORQUE_FLOOR)):
        errors = _relative_errors(ours[:, block], values[:, block], floor)
        assert errors.max() <= RELATIVE, (block, errors.max())


def _gait_states():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the obsolete derivative_smoothing property
        model = load_osim(GAIT_MODEL)
    names = model.multibody.coordinate_names
    motion = read_motion(GAIT_COORDINATES, coordinates=names)
    q = motion.data
    u = np.gradient(q, motion.time, axis=0)
    return model, names, q, u


def test_gait2d_contacts_equal_opensim(opensim_task):
    model, names, q, u = _gait_states()
    contacts = osim_contacts(model)
    reference = opensim_task("osim_contact_forces", {"model": GAIT_MODEL, "coordinate_names": np.array(names),
                                                     "q": q, "u": u})
    assert list(reference["force_names"]) == [c.name for c in contacts]
    values = reference["record_values"]  # frames x contacts x 12
    ours = np.stack([np.array(contact_record_values(model.multibody, q[k], u[k], contacts)).T for k in range(len(q))])
    # Every contact carries load in some frames (the reference motion is a walking half cycle).
    assert (np.linalg.norm(values[:, :, 0:3], axis=2).max(axis=0) > 40).all()
    for block, floor in ((slice(0, 3), FORCE_FLOOR), (slice(3, 6), TORQUE_FLOOR),
                         (slice(6, 9), FORCE_FLOOR), (slice(9, 12), TORQUE_FLOOR)):
        errors = _relative_errors(ours[:, :, block], values[:, :, block], floor)
        assert errors.max() <= RELATIVE, (block, errors.max())
    # Per foot, as OpenSim's createExternalLoadsTableForGait: the sphere loads of the foot summed.
    for foot in ("calcn_r", "calcn_l"):
        selected = contacts_on(contacts, foot)
        columns = [list(reference["force_names"]).index(c.name) for c in selected]
        for k in range(len(q)):
            force, torque = ground_reaction_loads(model.multibody, q[k], u[k], selected)
            expected = values[k, columns].sum(axis=0)
            assert _relative_errors(np.array(force).ravel(), expected[0:3], FORCE_FLOOR) <= RELATIVE
            assert _relative_errors(np.array(torque).ravel(), expected[3:6], TORQUE_FLOOR) <= RELATIVE


# --- identities (no OpenSim) ------------------------------------------------------------------

FLOOR = SmoothSphereHalfSpaceParameters(sphere_radius=0.035, **PROPERTIES)  # plane y = 0, outward +y


def _hertz_smoothed(parameters, indentation):
    """Serrancoli et al. (2019): fH = 4/3 k sqrt(R k) (d^2 + cf)^(3/4) (1/2 + 1/2 tanh(bd d)), k = E^(2/3)/2."""
    p = parameters
    k = 0.5 * p.stiffness ** (2 / 3)
    return (4 / 3 * k * np.sqrt(p.sphere_radius * k) * (indentation**2 + p.constant_contact_force) ** 0.75
            * (0.5 + 0.5 * np.tanh(p.hertz_smoothing * indentation)))


@pytest.mark.parametrize("indentation", [-0.05, -0.005, 0.0, 0.001, 0.01, 0.02])
def test_normal_force_at_rest_is_the_smoothed_hertz_force(indentation):
    center = [0.3, FLOOR.sphere_radius - indentation, -0.2]
    result = smooth_sphere_half_space_force(FLOOR, center, [0, 0, 0])
    force = np.array(result.force_on_sphere).ravel()
    # At rest the Hunt-Crossley switch is 1/2 + 1/2 tanh(bv 2/(3c)) (1 to double precision here).
    switch = 0.5 + 0.5 * np.tanh(FLOOR.hunt_crossley_smoothing * 2 / (3 * FLOOR.dissipation))
    expected = _hertz_smoothed(FLOOR, indentation) * switch
    assert force[1] == pytest.approx(expected, rel=1e-12, abs=1e-300)
    assert abs(force[0]) + abs(force[2]) <= 1e-12 * max(expected, 1e-300)
    assert float(result.indentation) == pytest.approx(indentation, abs=1e-15)
    # Midway between the two surfaces; equal and opposite on the half space.
    assert np.array(result.contact_point).ravel() == pytest.approx([0.3, -indentation / 2, -0.2], abs=1e-15)
    assert np.array(result.force_on_half_space).ravel() == pytest.approx(-force, rel=0, abs=0)


def test_deep_contact_approaches_hertz_law():
    """Without the smoothing constants (cf -> 0, steep tanh): F = 4/3 k^(3/2) sqrt(R) d^(3/2)."""
    sharp = dataclasses.replace(FLOOR, constant_contact_force=1e-14, hertz_smoothing=5000.0)
    k = 0.5 * sharp.stiffness ** (2 / 3)
    for d in (0.002, 0.01, 0.02):
        result = smooth_sphere_half_space_force(sharp, [0, sharp.sphere_radius - d, 0], [0, 0, 0])
        force = float(result.force_on_sphere[1])
        assert force == pytest.approx(4 / 3 * k**1.5 * np.sqrt(sharp.sphere_radius) * d**1.5, rel=1e-9)


def _friction_ratio(parameters, speed, direction=(1.0, 0.0, -1.0)):
    """|tangential force| / normal force when the sphere slides at ``speed`` along the floor."""
    direction = np.asarray(direction, float) / np.linalg.norm(direction)
    velocity = speed * direction
    result = smooth_sphere_half_space_force(parameters, [0, parameters.sphere_radius - 0.01, 0], velocity)
    force = np.array(result.force_on_sphere).ravel()
    tangential = force - force[1] * np.array([0, 1, 0])
    # Friction opposes the slip.
    assert np.dot(tangential, velocity) < 0
    assert np.linalg.norm(np.cross(tangential, velocity)) <= 1e-12 * np.linalg.norm(tangential) * speed
    return np.linalg.norm(tangential) / force[1]


def _friction_law(parameters, speed):
    """Serrancoli et al. (2019), with the slip speed vs = sqrt(v^2 + cf) (the tangential force
    is the friction force times v / vs)."""
    p = parameters
    slip = np.sqrt(speed**2 + p.constant_contact_force)
    relative = slip / p.transition_velocity
    mu = min(relative, 1.0) * (p.dynamic_friction + 2 * (p.static_friction - p.dynamic_friction) / (1 + relative**2))
    return (mu + p.viscous_friction * slip) * speed / slip


def test_sliding_friction_ratio_approaches_dynamic_friction():
    no_viscous = dataclasses.replace(FLOOR, viscous_friction=0.0)
    vt = no_viscous.transition_velocity
    us, ud = no_viscous.static_friction, no_viscous.dynamic_friction
    multiples = (0.3, 1.0, 2.0, 5.0, 20.0, 100.0, 1000.0)
    ratios = [_friction_ratio(no_viscous, m * vt) for m in multiples]
    for m, ratio in zip(multiples, ratios):
        assert ratio == pytest.approx(_friction_law(no_viscous, m * vt), rel=1e-12)
    assert np.all(np.diff(ratios[1:]) < 0)  # above the transition velocity: from static down to dynamic
    assert abs(ratios[-1] - ud) < 1e-6  # well above it: the dynamic coefficient
    assert ratios[0] < ratios[1] == pytest.approx(us, rel=1e-3)  # at it: about the static coefficient
    # Viscous friction adds uv * slip speed.
    assert _friction_ratio(FLOOR, 100 * vt) == pytest.approx(ud + FLOOR.viscous_friction * 100 * vt, rel=1e-4)
    assert _friction_ratio(FLOOR, 100 * vt) == pytest.approx(_friction_law(FLOOR, 100 * vt), rel=1e-12)


def test_without_dissipation_the_normal_force_is_hertz_at_any_speed():
    """c = 0: Simbody's switch tanh(bv (vn + 2/(3c))) is tanh(+inf) = 1, so fHC = fH for any vn."""
    elastic = dataclasses.replace(FLOOR, dissipation=0.0, static_friction=0.0, dynamic_friction=0.0,
                                  viscous_friction=0.0)
    for speed in (-3.0, 0.0, 2.0):
        force = smooth_sphere_half_space_force(elastic, [0, elastic.sphere_radius - 0.01, 0], [0.5, speed, 0])
        assert np.array(force.force_on_sphere).ravel() == pytest.approx([0, _hertz_smoothed(elastic, 0.01), 0],
                                                                         rel=1e-12, abs=1e-12)


def test_moving_frame_invariance():
    """Rotating and translating the whole scene (sphere, plane, velocities) rotates the force."""
    rng = np.random.default_rng(3)
    rotation = _xyz_body_fixed(rng.uniform(-1, 1, 3))
    shift = rng.uniform(-1, 1, 3)
    center, velocity, spin = np.array([0.1, 0.03, 0.2]), np.array([0.4, -0.3, 0.1]), np.array([1.0, -2.0, 3.0])
    base = smooth_sphere_half_space_force(FLOOR, center, velocity, spin)
    moved = smooth_sphere_half_space_force(FLOOR, rotation @ center + shift, rotation @ velocity, rotation @ spin,
                                           rotation, shift)
    assert np.array(moved.force_on_sphere).ravel() == pytest.approx(rotation @ np.array(base.force_on_sphere).ravel(),
                                                                    rel=1e-12, abs=1e-9)
    assert np.array(moved.contact_point).ravel() == pytest.approx(
        rotation @ np.array(base.contact_point).ravel() + shift, abs=1e-14)


def test_symbolic_inputs_and_derivatives():
    center, velocity = ca.MX.sym("c", 3), ca.SX.sym("v", 3)
    assert isinstance(smooth_sphere_half_space_force(FLOOR, center, [0, 0, 0]).force_on_sphere, ca.MX)
    x = ca.SX.sym("x", 6)
    force = smooth_sphere_half_space_force(FLOOR, x[0:3], x[3:6]).force_on_sphere
    jacobian = ca.Function("j", [x], [ca.jacobian(force, x)])
    f = ca.Function("f", [x], [force])
    point = np.array([0.02, 0.03, -0.01, 0.3, -0.2, 0.5])
    step = 1e-7
    numeric = np.column_stack([(np.array(f(point + step * e)) - np.array(f(point - step * e))).ravel() / (2 * step)
                               for e in np.eye(6)])
    assert np.array(jacobian(point)) == pytest.approx(numeric, rel=1e-5, abs=1e-3)
    assert smooth_sphere_half_space_function(FLOOR).name() == "smooth_sphere_half_space_force"
    assert smooth_sphere_half_space_function(FLOOR) is smooth_sphere_half_space_function(FLOOR)  # built once
    assert isinstance(smooth_sphere_half_space_force(FLOOR, velocity, velocity).force_on_sphere, ca.SX)


def test_contact_wrenches_enter_dynamics_as_jacobian_transpose_force():
    """tau(no contact) - tau(with contact wrenches) = sum over contacts of J_c^T F_c, J_c the
    Jacobian of the sphere-body point at the contact point."""
    model, _, q, u = _gait_states()
    mb = model.multibody
    contacts = osim_contacts(model)
    k = int(np.argmax(np.abs(q[:, 0])))
    loads = contact_loads(mb, q[k], u[k], contacts)
    expected = np.zeros(mb.nv)
    for j, contact in enumerate(contacts):
        # The contact point in the sphere body's frame.
        rotation, origin = body_pose(mb, q[k], contact.sphere_body)
        local = np.array(rotation).T @ (np.array(loads.contact_points[:, j]).ravel() - np.array(origin).ravel())
        jacobian = np.array(frame_jacobian(mb, q[k], contact.sphere_body, local))[3:6]
        expected += jacobian.T @ np.array(loads.sphere_forces[:, j]).ravel()
    udot = np.zeros(mb.nv)
    wrenches = contact_wrenches(mb, q[k], u[k], contacts)
    difference = (np.array(inverse_dynamics(mb, q[k], u[k], udot)).ravel()
                  - np.array(inverse_dynamics(mb, q[k], u[k], udot, wrenches)).ravel())
    assert np.abs(expected).max() > 10
    assert difference == pytest.approx(expected, rel=1e-10, abs=1e-9)
    # The same loads as MX expressions of (q, u), e.g. inside an optimal control problem.
    q_mx, u_mx = ca.MX.sym("q", mb.nq), ca.MX.sym("u", mb.nv)
    right = contacts_on(contacts, "calcn_r")
    columns = [contacts.index(c) for c in right]
    grf = ca.Function("grf", [q_mx, u_mx], list(ground_reaction_loads(mb, q_mx, u_mx, right)))
    force, torque = grf(q[k], u[k])
    for ours, per_contact in ((force, loads.sphere_forces), (torque, loads.sphere_torques)):
        summed = np.array(per_contact[:, columns]).sum(axis=1)
        assert np.array(ours).ravel() == pytest.approx(summed, rel=1e-14)


def test_bad_input_raises():
    with pytest.raises(TrajoptInputError, match="stiffness"):
        SmoothSphereHalfSpaceParameters(stiffness=-1.0, dissipation=1.0, sphere_radius=0.1)
    with pytest.raises(TrajoptInputError, match="half_space_normal"):
        SmoothSphereHalfSpaceParameters(stiffness=1.0, dissipation=1.0, sphere_radius=0.1, half_space_normal=(0, 0, 0))
    model, _, _, _ = _gait_states()
    with pytest.raises(TrajoptInputError, match="no_such_body"):
        contact_wrenches(model.multibody, np.zeros(10), np.zeros(10),
                         [SphereContact("c", "no_such_body", (0, 0, 0), "ground", FLOOR)])
    with pytest.raises(TrajoptInputError, match="toes_r"):
        contacts_on(osim_contacts(model), "toes_r")
    without_spheres = dataclasses.replace(model, contact_spheres=())
    with pytest.raises(ModelFileError, match="contactHeel_r.*heel_r"):
        osim_contacts(without_spheres)
