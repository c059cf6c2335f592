"""OpenSim's forward dynamics with the model's constraints enforced, at random assembled states.

Every Force is switched off (gravity stays) and a unit CoordinateActuator is added per coordinate,
its actuation overridden with a random generalized force. Per state: random coordinates within
their ranges (clipped to ±``spread``), ``Model.assemble`` (assembly accuracy 1e-13), random speeds
projected onto the velocity constraints (u − Gᵀ(GGᵀ)⁻¹Gu with Simbody's ``calcG``), then
``realizeAcceleration``.

Request: model (path), states (int), seed (int), spread (float, optional), still (coordinate names whose
speeds are zero, optional). Result (CoordinateSet
order): q, u, tau, udot (states x coordinates), multipliers (states x equations: ``state.getMultipliers()``,
Simbody's order: ConstraintSet order), position_errors / velocity_errors (max |QErr|, |UErr| per state),
coordinate_names, constraint_names, constraint_sizes.
"""

import numpy as np
import opensim

from trajopt_opensim._model_state import coordinates, model_with_coordinate_actuators


def _matrix(m):
    return np.array([[m.get(i, j) for j in range(m.ncol())] for i in range(m.nrow())])


def run(request):
    opensim.Logger.setLevelString("error")
    opensim.Logger.removeFileSink()
    model, actuators = model_with_coordinate_actuators(request["model"])
    model.set_assembly_accuracy(1e-13)
    state = model.initSystem()
    coords = coordinates(model)
    matter = model.getMatterSubsystem()
    rng = np.random.default_rng(int(request.get("seed", 0)))
    spread = float(request.get("spread", 1.0))
    still = set(str(n) for n in np.atleast_1d(request.get("still", [])))
    count, n = int(request["states"]), len(coords)
    constraint_set = model.getConstraintSet()
    constraints = [constraint_set.get(i) for i in range(constraint_set.getSize())]
    out = {k: np.zeros((count, n)) for k in ("q", "u", "tau", "udot")}
    multipliers, position_errors, velocity_errors = [], np.zeros(count), np.zeros(count)
    for actuator in actuators:
        actuator.overrideActuation(state, True)
    for k in range(count):
        for c in coords:
            low, high = max(c.getRangeMin(), -spread), min(c.getRangeMax(), spread)
            c.setValue(state, rng.uniform(low, high), False)
        model.assemble(state)
        for c in coords:
            c.setSpeedValue(state, 0.0 if c.getName() in still else rng.normal())
        model.realizeVelocity(state)
        g = opensim.Matrix()
        matter.calcG(state, g)
        g = _matrix(g)
        u = np.array([state.getU().get(i) for i in range(state.getNU())])
        u = u - g.T @ np.linalg.solve(g @ g.T, g @ u)
        speeds = state.updU()
        for i in range(len(u)):
            speeds.set(i, float(u[i]))
        tau = rng.normal(size=n)
        for actuator, value in zip(actuators, tau):
            actuator.setOverrideActuation(state, float(value))
        model.realizeAcceleration(state)
        out["q"][k] = [c.getValue(state) for c in coords]
        out["u"][k] = [c.getSpeedValue(state) for c in coords]
        out["udot"][k] = [c.getAccelerationValue(state) for c in coords]
        out["tau"][k] = tau
        lam = state.getMultipliers()
        multipliers.append([lam.get(i) for i in range(lam.size())])
        qerr, uerr = state.getQErr(), state.getUErr()
        position_errors[k] = max((abs(qerr.get(i)) for i in range(qerr.size())), default=0.0)
        velocity_errors[k] = max((abs(uerr.get(i)) for i in range(uerr.size())), default=0.0)
    sizes = [_equations(c) for c in constraints if c.isEnforced(state)]
    out.update(multipliers=np.array(multipliers), position_errors=position_errors, velocity_errors=velocity_errors,
               coordinate_names=np.array([c.getName() for c in coords], dtype=str),
               constraint_names=np.array([c.getName() for c in constraints if c.isEnforced(state)], dtype=str),
               constraint_sizes=np.array(sizes, dtype=int))
    return out


def _equations(constraint):
    kind = constraint.getConcreteClassName()
    return {"CoordinateCouplerConstraint": 1, "PointConstraint": 3, "WeldConstraint": 6}[kind]
