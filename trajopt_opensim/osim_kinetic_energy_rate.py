"""The rate of kinetic energy along OpenSim's own forward dynamics with every force off, gravity zero and every
constraint unenforced: a free mechanical system, so dT/dt must vanish.

Request: model (path), coordinate_names (n: every coordinate), q, u (N x n, in that order),
step (central-difference step in time, default 1e-6).
Result: kinetic_energy (N), rate (N): (T(q + h q̇, u + h u̇) - T(q - h q̇, u - h u̇)) / 2h with q̇ = u (the model's
coordinates must have q̇ = u: no ball or free joints) and u̇ from realizeAcceleration.
"""

import numpy as np
import opensim

from trajopt_opensim._model_state import coordinates


def run(request):
    opensim.Logger.setLevelString("error")
    opensim.Logger.removeFileSink()
    model = opensim.Model(str(request["model"]))
    constraints = model.updConstraintSet()
    for i in range(constraints.getSize()):
        constraints.get(i).set_isEnforced(False)
    model.setGravity(opensim.Vec3(0.0, 0.0, 0.0))
    for component in list(model.getComponentsList()):
        if opensim.Force.safeDownCast(component) is not None:
            opensim.Force.safeDownCast(model.updComponent(component.getAbsolutePathString())).set_appliesForce(False)
    state = model.initSystem()
    matter = model.getMatterSubsystem()
    names = [str(n) for n in np.atleast_1d(request["coordinate_names"])]
    if sorted(names) != sorted(c.getName() for c in coordinates(model)):
        raise ValueError(f"coordinate_names {names} are not the model's coordinates")
    coords = [model.getCoordinateSet().get(n) for n in names]
    q, u = (np.atleast_2d(np.asarray(request[k], dtype=float)) for k in ("q", "u"))
    h = float(request.get("step", 1e-6))

    def energy(qk, uk):
        for coordinate, value, speed in zip(coords, qk, uk):
            coordinate.setValue(state, float(value), False)
            coordinate.setSpeedValue(state, float(speed))
        model.realizeVelocity(state)
        return matter.calcKineticEnergy(state)

    kinetic, rate = np.zeros(len(q)), np.zeros(len(q))
    for k in range(len(q)):
        kinetic[k] = energy(q[k], u[k])
        model.realizeAcceleration(state)
        udot = np.array([c.getAccelerationValue(state) for c in coords])
        rate[k] = (energy(q[k] + h * u[k], u[k] + h * udot) - energy(q[k] - h * u[k], u[k] - h * udot)) / (2 * h)
    return {"kinetic_energy": kinetic, "rate": rate}
