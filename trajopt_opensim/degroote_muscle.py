"""OpenSim reference values of one DeGrooteFregly2016Muscle (curves, forces, equilibrium, activation rate).

The muscle spans a slider: its origin is the ground origin and its insertion the origin of a
body that slides along ground x, so the musculotendon length is the slider position and the
lengthening speed its speed. Request (flat; all optional except the muscle properties):

- muscle properties named as OpenSim's (``max_isometric_force`` ... ``fiber_damping``,
  ``ignore_passive_fiber_force``), and ``tendon_compliance``: ``"rigid"`` or ``"elastic"``;
- ``lengths``, ``speeds``, ``activations``: states at which to report forces (elastic: after
  ``model.equilibrateMuscles``); ``excitations``: also report d(activation)/dt;
- ``curve_*`` arrays: points at which to evaluate the muscle's curve methods;
- ``residual_*`` arrays: inputs of ``calcEquilibriumResidual``.
"""

import numpy as np
import opensim

PROPERTIES = (
    "max_isometric_force",
    "optimal_fiber_length",
    "tendon_slack_length",
    "pennation_angle_at_optimal",
    "max_contraction_velocity",
    "tendon_strain_at_one_norm_force",
    "passive_fiber_strain_at_one_norm_force",
    "active_force_width_scale",
    "fiber_damping",
    "activation_time_constant",
    "deactivation_time_constant",
)


def _build(request):
    model = opensim.Model()
    model.setName("degroote_slider")
    body = opensim.Body("slider_body", 1.0, opensim.Vec3(0), opensim.Inertia(0.01))
    model.addBody(body)
    joint = opensim.SliderJoint("slider", model.getGround(), body)
    model.addJoint(joint)
    muscle = opensim.DeGrooteFregly2016Muscle()
    muscle.setName("muscle")
    for name in PROPERTIES:
        if name in request:
            getattr(muscle, f"set_{name}")(float(request[name]))
    muscle.set_ignore_passive_fiber_force(bool(request.get("ignore_passive_fiber_force", False)))
    muscle.set_ignore_tendon_compliance(str(request.get("tendon_compliance", "rigid")) == "rigid")
    muscle.addNewPathPoint("origin", model.getGround(), opensim.Vec3(0))
    muscle.addNewPathPoint("insertion", body, opensim.Vec3(0))
    model.addForce(muscle)
    model.finalizeConnections()
    return model, joint, muscle


def _curves(muscle, request):
    cls = opensim.DeGrooteFregly2016Muscle
    table = {
        "curve_normalized_tendon_length": (
            ("tendon_force_multiplier", muscle.calcTendonForceMultiplier),
            ("tendon_force_multiplier_derivative", muscle.calcTendonForceMultiplierDerivative),
        ),
        "curve_normalized_tendon_force": (("tendon_force_length_inverse", muscle.calcTendonForceLengthInverseCurve),),
        "curve_normalized_fiber_length": (
            ("passive_force_multiplier", muscle.calcPassiveForceMultiplier),
            ("passive_force_multiplier_derivative", muscle.calcPassiveForceMultiplierDerivative),
            ("active_force_length_multiplier", muscle.calcActiveForceLengthMultiplier),
            ("active_force_length_multiplier_derivative", muscle.calcActiveForceLengthMultiplierDerivative),
        ),
        "curve_normalized_fiber_velocity": (("force_velocity_multiplier", cls.calcForceVelocityMultiplier),),
        "curve_force_velocity_multiplier": (("force_velocity_inverse", cls.calcForceVelocityInverseCurve),),
    }
    result = {}
    for key, methods in table.items():
        if key in request:
            points = np.atleast_1d(np.asarray(request[key], dtype=float))
            for name, method in methods:
                result[name] = np.array([method(float(x)) for x in points])
    return result


def _states(model, joint, muscle, request):
    lengths = np.atleast_1d(np.asarray(request["lengths"], dtype=float))
    speeds = np.atleast_1d(np.asarray(request.get("speeds", np.zeros_like(lengths)), dtype=float))
    activations = np.atleast_1d(np.asarray(request["activations"], dtype=float))
    elastic = not muscle.get_ignore_tendon_compliance()
    names = (
        "tendon_force",
        "active_fiber_force",
        "passive_fiber_force",
        "fiber_damping_force",
        "fiber_length",
        "fiber_velocity",
        "pennation_angle",
        "length",
        "lengthening_speed",
    )
    out = {f"state_{name}": np.zeros(len(lengths)) for name in names}
    if elastic:
        out["state_normalized_tendon_force"] = np.zeros(len(lengths))
    state = model.initSystem()
    coordinate = joint.getCoordinate()
    for i, (length, speed, activation) in enumerate(zip(lengths, speeds, activations)):
        coordinate.setValue(state, float(length), False)
        coordinate.setSpeedValue(state, float(speed))
        muscle.setActivation(state, float(activation))
        model.realizeVelocity(state)
        if elastic:
            model.equilibrateMuscles(state)
        model.realizeDynamics(state)
        out["state_tendon_force"][i] = muscle.getTendonForce(state)
        out["state_active_fiber_force"][i] = muscle.getActiveFiberForce(state)
        out["state_passive_fiber_force"][i] = muscle.getPassiveFiberElasticForce(state)
        out["state_fiber_damping_force"][i] = muscle.getPassiveFiberDampingForce(state)
        out["state_fiber_length"][i] = muscle.getFiberLength(state)
        out["state_fiber_velocity"][i] = muscle.getFiberVelocity(state)
        out["state_pennation_angle"][i] = muscle.getPennationAngle(state)
        out["state_length"][i] = muscle.getLength(state)
        out["state_lengthening_speed"][i] = muscle.getLengtheningSpeed(state)
        if elastic:
            out["state_normalized_tendon_force"][i] = muscle.getNormalizedTendonForce(state)
    return out


def _activation_rates(model, muscle, request):
    activations = np.atleast_1d(np.asarray(request["rate_activations"], dtype=float))
    excitations = np.atleast_1d(np.asarray(request["rate_excitations"], dtype=float))
    state = model.initSystem()
    rates = np.zeros(len(activations))
    for i, (activation, excitation) in enumerate(zip(activations, excitations)):
        muscle.setActivation(state, float(activation))
        controls = model.updControls(state)
        muscle.setControls(opensim.Vector(1, float(excitation)), controls)
        model.setControls(state, controls)
        model.realizeAcceleration(state)
        rates[i] = muscle.getStateVariableDerivativeValue(state, "activation")
    return {"activation_rate": rates}


def run(request):
    model, joint, muscle = _build(request)
    model.initSystem()
    result = {name: getattr(muscle, f"get_{name}")() for name in PROPERTIES}
    result["ignore_passive_fiber_force"] = bool(muscle.get_ignore_passive_fiber_force())
    result.update(_curves(muscle, request))
    if "lengths" in request:
        result.update(_states(model, joint, muscle, request))
    if "rate_activations" in request:
        result.update(_activation_rates(model, muscle, request))
    if "residual_lengths" in request:
        keys = ("lengths", "speeds", "activations", "normalized_tendon_forces", "normalized_tendon_force_derivatives")
        inputs = [np.atleast_1d(np.asarray(request[f"residual_{key}"], dtype=float)) for key in keys]
        result["equilibrium_residual"] = np.array(
            [muscle.calcEquilibriumResidual(*(float(x) for x in row)) for row in zip(*inputs)]
        )
    return result
