"""Small models with OpenSim's non-muscle force elements, written by OpenSim 4.6, and the generalized force one
element applies at given states.

Request ``action``:

- ``"write"``: ``folder``; writes ``bouncing_block.osim`` (one body on a FreeJoint, a ContactSphere on it, a
  ContactHalfSpace on the ground and a HuntCrossleyForce between them), ``limited_chain.osim`` (two links on pin
  joints and a slider, a CoordinateActuator per coordinate, CoordinateLimitForces on a rotational and a translational
  coordinate, a PathSpring and a PathActuator) and ``double_pendulum.osim`` (two pin links and two
  CoordinateActuators, no other force) and ``sliding_ball.osim`` (a body on a PlanarJoint with two contact spheres
  against the floor in one HuntCrossleyForce, the floor and the spheres of different materials). Result: ``files``.
- ``"hunt_crossley"``: ``model``, ``force``, ``body``, ``q``, ``u``: per state the body's kinematics in ground and
  the force and torque (about the body origin) the HuntCrossleyForce applies to it (its record values).
- ``"generalized_forces"``: ``model``, ``force`` (name), ``q``, ``u`` (states x coordinates), optional ``actuation``
  (per state, the actuator's force when it is an actuator). Result per state: the generalized force per coordinate
  the element applies (``values``, states x coordinates): OpenSim's InverseDynamicsSolver at zero accelerations with
  every force off, less the same with only this element on (so gravity and velocity terms cancel);
  ``coordinate_names``.
"""

import math
from pathlib import Path

import numpy as np
import opensim


def _body(name, mass, com, inertia):
    return opensim.Body(name, mass, opensim.Vec3(*com), opensim.Inertia(*inertia))


def bouncing_block():
    model = opensim.Model()
    model.setName("bouncing_block")
    block = _body("block", 2.0, (0, 0, 0), (0.01, 0.02, 0.03))
    model.addBody(block)
    model.addJoint(opensim.FreeJoint("free", model.getGround(), block))
    floor = opensim.ContactHalfSpace(opensim.Vec3(0, 0, 0), opensim.Vec3(0, 0, -0.5 * math.pi), model.getGround(),
                                     "floor")
    ball = opensim.ContactSphere(0.05, opensim.Vec3(0.01, -0.02, 0.0), block, "ball")
    model.addContactGeometry(floor)
    model.addContactGeometry(ball)
    force = opensim.HuntCrossleyForce()
    force.setName("contact")
    force.addGeometry("floor")
    force.addGeometry("ball")
    force.setStiffness(1e6)
    force.setDissipation(1.5)
    force.setStaticFriction(0.8)
    force.setDynamicFriction(0.6)
    force.setViscousFriction(0.1)
    force.setTransitionVelocity(0.05)
    model.addForce(force)
    return model


def sliding_ball():
    model = opensim.Model()
    model.setName("sliding_ball")
    ball = _body("ball", 3.0, (0.0, 0.01, 0.0), (0.02, 0.03, 0.025))
    model.addBody(ball)
    joint = opensim.PlanarJoint("planar", model.getGround(), ball)
    for k, name in enumerate(("rz", "tx", "ty")):
        joint.upd_coordinates(k).setName(name)
    model.addJoint(joint)
    floor = opensim.ContactHalfSpace(opensim.Vec3(0, 0, 0), opensim.Vec3(0, 0, -0.5 * math.pi), model.getGround(),
                                     "floor")
    model.addContactGeometry(floor)
    force = opensim.HuntCrossleyForce()
    force.setName("ball_floor")
    force.setTransitionVelocity(0.1)
    model.addForce(force)
    for name, center in (("heel", (-0.05, -0.02, 0.0)), ("toe", (0.06, -0.03, 0.0))):
        model.addContactGeometry(opensim.ContactSphere(0.04, opensim.Vec3(*center), ball, name))
    for name in ("floor", "heel", "toe"):
        force.addGeometry(name)
    force.setStiffness(2e6)
    force.setDissipation(1.0)
    force.setStaticFriction(0.9)
    force.setDynamicFriction(0.7)
    force.setViscousFriction(0.05)
    return model


def _link(model, name, parent, parent_offset, joint_type, coordinate):
    body = _body(name, 1.5, (0, -0.25, 0), (0.02, 0.005, 0.02))
    model.addBody(body)
    if joint_type == "pin":
        joint = opensim.PinJoint(f"{name}_joint", parent, opensim.Vec3(*parent_offset), opensim.Vec3(0, 0, 0),
                                 body, opensim.Vec3(0, 0, 0), opensim.Vec3(0, 0, 0))
    else:
        joint = opensim.SliderJoint(f"{name}_joint", parent, opensim.Vec3(*parent_offset), opensim.Vec3(0, 0, 0),
                                    body, opensim.Vec3(0, 0, 0), opensim.Vec3(0, 0, 0))
    joint.upd_coordinates(0).setName(coordinate)
    model.addJoint(joint)
    actuator = opensim.CoordinateActuator(coordinate)
    actuator.setName(f"{coordinate}_actuator")
    actuator.setOptimalForce(10.0)
    model.addForce(actuator)
    return body


def double_pendulum():
    model = opensim.Model()
    model.setName("double_pendulum")
    upper = _link(model, "upper", model.getGround(), (0, 0, 0), "pin", "q1")
    _link(model, "lower", upper, (0, -0.5, 0), "pin", "q2")
    return model


def limited_chain():
    model = opensim.Model()
    model.setName("limited_chain")
    upper = _link(model, "upper", model.getGround(), (0, 0, 0), "pin", "q1")
    lower = _link(model, "lower", upper, (0, -0.5, 0), "pin", "q2")
    slider = _link(model, "slider", lower, (0, -0.5, 0), "slider", "q3")
    model.addForce(opensim.CoordinateLimitForce("q1", 40.0, 2.0, -30.0, 25.0, 0.05, 3.0))
    slide_limit = opensim.CoordinateLimitForce("q3", 0.05, 500.0, -0.02, 800.0, 20.0, 0.01)
    slide_limit.setName("q3_limit")
    model.addForce(slide_limit)
    spring = opensim.PathSpring("spring", 0.6, 300.0, 0.4)
    spring.updGeometryPath().appendNewPathPoint("origin", model.getGround(), opensim.Vec3(0.2, 0.1, 0.05))
    spring.updGeometryPath().appendNewPathPoint("via", upper, opensim.Vec3(0.05, -0.3, 0.0))
    spring.updGeometryPath().appendNewPathPoint("insertion", lower, opensim.Vec3(-0.04, -0.2, 0.03))
    model.addForce(spring)
    actuator = opensim.PathActuator()
    actuator.setName("cable")
    actuator.setOptimalForce(150.0)
    actuator.updGeometryPath().appendNewPathPoint("origin", upper, opensim.Vec3(-0.05, -0.1, 0.0))
    actuator.updGeometryPath().appendNewPathPoint("insertion", slider, opensim.Vec3(0.03, -0.1, 0.02))
    model.addForce(actuator)
    return model


def _two_materials(file):
    """sliding_ball's floor in one ContactParameters entry and its spheres, stiffer and less dissipative, in a
    second (the Python API does not wrap ContactParameters): the file edited, then read and written by OpenSim."""
    text = Path(file).read_text()
    start = text.index("<HuntCrossleyForce::ContactParameters>")
    end = text.index("</HuntCrossleyForce::ContactParameters>") + len("</HuntCrossleyForce::ContactParameters>")
    block = text[start:end]
    spheres = (block.replace("floor heel toe", "heel toe").replace("<stiffness>2000000<", "<stiffness>5000000<")
               .replace("<dissipation>1<", "<dissipation>0.5<").replace("<static_friction>0.90000000000000002<",
                                                                        "<static_friction>0.7<")
               .replace("<dynamic_friction>0.69999999999999996<", "<dynamic_friction>0.5<")
               .replace("<viscous_friction>0.050000000000000003<", "<viscous_friction>0.02<"))
    Path(file).write_text(text[:start] + block.replace("floor heel toe", "floor") + spheres + text[end:])
    model = opensim.Model(str(file))
    model.initSystem()
    model.printToXML(str(file))


def _write(folder):
    folder = Path(folder)
    files = []
    for build in (bouncing_block, limited_chain, double_pendulum, sliding_ball):
        model = build()
        model.finalizeConnections()
        model.initSystem()
        file = folder / f"{build.__name__}.osim"
        model.printToXML(str(file))
        if build is sliding_ball:
            _two_materials(file)
        files.append(str(file))
    return {"files": np.array(files)}


def _generalized_forces(request):
    model = opensim.Model(str(request["model"]))
    state = model.initSystem()
    forces = list(model.getForceSet())
    target = model.getForceSet().get(str(request["force"]))
    actuator = opensim.ScalarActuator.safeDownCast(target)
    coordinates = list(model.getCoordinateSet())
    q, u = (np.atleast_2d(np.asarray(request[k], float)) for k in ("q", "u"))
    actuation = np.atleast_1d(np.asarray(request.get("actuation", np.zeros(len(q))), float))
    solver = opensim.InverseDynamicsSolver(model)
    zeros = opensim.Vector(state.getNU(), 0.0)
    values = np.zeros((len(q), len(coordinates)))
    for k in range(len(q)):
        for c, value, speed in zip(coordinates, q[k], u[k]):
            c.setValue(state, float(value), False)
            c.setSpeedValue(state, float(speed))
        if actuator is not None:
            actuator.overrideActuation(state, True)
            actuator.setOverrideActuation(state, float(actuation[k]))
        for f in forces:
            f.setAppliesForce(state, False)
        without = solver.solve(state, zeros)
        target.setAppliesForce(state, True)
        with_force = solver.solve(state, zeros)
        values[k] = [without.get(i) - with_force.get(i) for i in range(len(coordinates))]
    return {"values": values, "coordinate_names": np.array([c.getName() for c in coordinates])}


def _vec3(v):
    return [v.get(i) for i in range(3)]


def _hunt_crossley(request):
    """Per state: the kinematics of ``body`` in ground (rotation, origin, origin velocity, angular velocity) and the
    HuntCrossleyForce's force and torque (about the body origin, ground axes) on it, from its record values."""
    model = opensim.Model(str(request["model"]))
    state = model.initSystem()
    force = model.getForceSet().get(str(request["force"]))
    body = model.getBodySet().get(str(request["body"]))
    coordinates = list(model.getCoordinateSet())
    q, u = (np.atleast_2d(np.asarray(request[k], float)) for k in ("q", "u"))
    record = force.getRecordLabels()
    labels = [record.get(i) for i in range(record.getSize())]
    columns = [labels.index(f"{force.getName()}.{body.getName()}.{kind}.{axis}")
               for kind in ("force", "torque") for axis in "XYZ"]
    out = {key: [] for key in ("rotation", "origin", "velocity", "angular_velocity", "force", "torque")}
    for k in range(len(q)):
        for c, value, speed in zip(coordinates, q[k], u[k]):
            c.setValue(state, float(value), False)
            c.setSpeedValue(state, float(speed))
        model.realizeDynamics(state)
        transform = body.getTransformInGround(state)
        rotation = transform.R().asMat33()
        out["rotation"].append([[rotation.get(i, j) for j in range(3)] for i in range(3)])
        out["origin"].append(_vec3(transform.p()))
        velocity = body.getVelocityInGround(state)
        out["angular_velocity"].append(_vec3(velocity.get(0)))
        out["velocity"].append(_vec3(velocity.get(1)))
        values = force.getRecordValues(state)
        out["force"].append([values.get(i) for i in columns[:3]])
        out["torque"].append([values.get(i) for i in columns[3:]])
    return {key: np.array(value) for key, value in out.items()}


def run(request):
    if request["action"] == "write":
        return _write(request["folder"])
    if request["action"] == "hunt_crossley":
        return _hunt_crossley(request)
    return _generalized_forces(request)
