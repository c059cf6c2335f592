"""Small models with OpenSim's non-muscle force elements, written by OpenSim 4.6, and the generalized force one
element applies at given states.

Request ``action``:

- ``"write"``: ``folder``; writes ``bouncing_block.osim`` (one body on a FreeJoint, a ContactSphere on it, a
  ContactHalfSpace on the ground and a HuntCrossleyForce between them), ``limited_chain.osim`` (two links on pin
  joints and a slider, a CoordinateActuator per coordinate, CoordinateLimitForces on a rotational and a translational
  coordinate, a PathSpring and a PathActuator) and ``double_pendulum.osim`` (two pin links and two
  CoordinateActuators, no other force). Result: ``files``.
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


def _write(folder):
    folder = Path(folder)
    files = []
    for build in (bouncing_block, limited_chain, double_pendulum):
        model = build()
        model.finalizeConnections()
        model.initSystem()
        file = folder / f"{build.__name__}.osim"
        model.printToXML(str(file))
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


def run(request):
    if request["action"] == "write":
        return _write(request["folder"])
    return _generalized_forces(request)
