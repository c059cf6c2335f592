"""OpenSim's forces and forward dynamics on states of Moco's example3DWalking model as trajopt's walk3d
prediction processes it (trajopt/examples/walk3d/prediction.py), built here with OpenSim's own operators.

Model: ``model`` (.osim, pelvis CustomJoint kept) without the CoordinateCouplerConstraints driving a coordinate of
``weld_joints``, through a ModelProcessor: ModOpReplaceJointsWithWelds (``weld_joints``),
ModOpIgnoreTendonCompliance, ModOpReplaceMusclesWithDeGrooteFregly2016,
ModOpIgnorePassiveFiberForcesDGF (``ignore_passive_fiber_force``), ModOpScaleActiveFiberForceCurveWidthDGF
(``active_force_width_scale``), ModOpReplacePathsWithFunctionBasedPaths (``function_based_paths``); then the
ExpressionBasedCoordinateForces of ``expression_forces`` (addForce) and of ``extra_expression_forces``
(rows name, coordinate, expression), the ContactGeometrySet ``contact_geometry``
(addContactGeometry; ContactSpheres moved by ``sphere_offset`` in their frames) and the ForceSet ``contact_forces``
(SmoothSphereHalfSpaceForces, addComponent), as Moco's example3DWalking adds them, and a CoordinateActuator
``<coordinate>_actuator`` on each of ``actuated_coordinates`` (``actuator_optimal_force``, controls within
±``actuator_bound``).

States: coordinate_names (n), q and u (N x n: the .osim's coordinates and their rates), muscle_names (m),
activations (N x m); controls: actuator_names, controls (N x actuators: excitations of muscles, controls of
actuators); optional udot (N x n) for OpenSim's inverse dynamics.

Result per state: contact_names, contact_records (N x 12 x contacts: getRecordValues), tendon_forces (N x m),
accelerations (N x n: realizeAcceleration), and with udot: inverse_dynamics_residual (N x n:
InverseDynamicsSolver.solve with the model's forces applied: the generalized forces missing for udot).
"""

import numpy as np
import opensim

from trajopt_opensim._model_state import append_degroote_curve_and_path_operators, mobility_indices, vector


def _without_couplers_of(model, joints):
    """Remove the CoordinateCouplerConstraints whose dependent coordinate belongs to ``joints`` (a weld leaves
    them nothing to couple; ModOpReplaceJointsWithWelds alone fails on them) and the CoordinateActuators of their
    coordinates (nothing left to drive; they fail on a missing coordinate), as trajopt's WeldJoints does."""
    gone = set()
    for name in joints:
        joint = model.getJointSet().get(name)
        gone |= {joint.get_coordinates(i).getName() for i in range(joint.numCoordinates())}
    constraints = model.updConstraintSet()
    for i in reversed(range(constraints.getSize())):
        coupler = opensim.CoordinateCouplerConstraint.safeDownCast(constraints.get(i))
        if coupler is not None and coupler.getDependentCoordinateName() in gone:
            constraints.remove(i)
    forces = model.updForceSet()
    for i in reversed(range(forces.getSize())):
        actuator = opensim.CoordinateActuator.safeDownCast(forces.get(i))
        if actuator is not None and actuator.get_coordinate() in gone:
            forces.remove(i)
    return model


def _processed(request):
    joints = [str(name) for name in np.atleast_1d(request.get("weld_joints", []))]
    processor = opensim.ModelProcessor(_without_couplers_of(opensim.Model(str(request["model"])), joints))
    welds = opensim.StdVectorString()
    for name in joints:
        welds.append(name)
    if len(welds):
        processor.append(opensim.ModOpReplaceJointsWithWelds(welds))
    compliant = bool(request.get("tendon_compliance", False))
    if not compliant:
        processor.append(opensim.ModOpIgnoreTendonCompliance())
    processor.append(opensim.ModOpReplaceMusclesWithDeGrooteFregly2016())
    if compliant:
        processor.append(opensim.ModOpUseImplicitTendonComplianceDynamicsDGF())
    append_degroote_curve_and_path_operators(processor, request)
    model = processor.process()
    for name, stiffness in zip(np.atleast_1d(request.get("tendon_stiffness_muscles", [])),
                               np.atleast_1d(request.get("tendon_stiffness", []))):
        muscle = opensim.DeGrooteFregly2016Muscle.safeDownCast(model.updForceSet().get(str(name)))
        muscle.set_tendon_strain_at_one_norm_force(tendon_strain_at_stiffness(float(stiffness)))
    return model


# DeGrooteFregly2016Muscle's tendon force-length curve c1 exp(kT (l̃T - c2)) - c3 (opensim-core
# OpenSim/Actuators/DeGrooteFregly2016Muscle.h): kT = ln((1 + c3) / c1) / (1 + strain - c2).
TENDON_C1, TENDON_C2, TENDON_C3 = 0.200, 1.0, 0.200


def tendon_strain_at_stiffness(stiffness):
    """The tendon_strain_at_one_norm_force that gives OpenSim's tendon curve the stiffness kT."""
    return float(np.log((1.0 + TENDON_C3) / TENDON_C1) / stiffness + TENDON_C2 - 1.0)


def build_model(request):
    opensim.Logger.setLevelString("error")
    opensim.Logger.removeFileSink()
    model = _processed(request)
    if request.get("expression_forces"):
        added = opensim.ForceSet(str(request["expression_forces"]))
        for i in range(added.getSize()):
            model.addForce(added.get(i).clone())
    for name, coordinate, expression in np.atleast_2d(request.get("extra_expression_forces", np.empty((0, 3)))):
        force = opensim.ExpressionBasedCoordinateForce(str(coordinate), str(expression))
        force.setName(str(name))
        model.addForce(force)
    offset = np.asarray(request.get("sphere_offset", (0.0, 0.0, 0.0)), dtype=float)
    geometry = opensim.ContactGeometrySet(str(request["contact_geometry"]))
    for i in range(geometry.getSize()):
        item = geometry.get(i).clone()
        sphere = opensim.ContactSphere.safeDownCast(item)
        if sphere is not None:
            location = sphere.get_location()
            sphere.set_location(opensim.Vec3(*(location.get(k) + offset[k] for k in range(3))))
        model.addContactGeometry(item)
    contact_forces = opensim.ForceSet(str(request["contact_forces"]))
    for i in range(contact_forces.getSize()):
        model.addComponent(contact_forces.get(i).clone())
    for name in np.atleast_1d(request.get("actuated_coordinates", [])):
        actuator = opensim.CoordinateActuator(str(name))
        actuator.setName(f"{name}_actuator")
        actuator.setOptimalForce(float(request["actuator_optimal_force"]))
        actuator.setMinControl(-float(request.get("actuator_bound", 1.0)))
        actuator.setMaxControl(float(request.get("actuator_bound", 1.0)))
        model.addForce(actuator)
    model.finalizeConnections()
    return model


def run(request):
    model = build_model(request)
    state = model.initSystem()
    index = mobility_indices(model, state)  # CoordinateSet order -> Simbody's u order
    all_names = [model.getCoordinateSet().get(i).getName() for i in range(model.getCoordinateSet().getSize())]
    names = [str(n) for n in np.atleast_1d(request["coordinate_names"])]
    if sorted(names) != sorted(all_names):
        raise ValueError(f"coordinate_names {names} are not the processed model's coordinates {all_names}")
    coordinates = [model.getCoordinateSet().get(n) for n in names]
    muscles = [opensim.Muscle.safeDownCast(model.getComponent(f"/forceset/{n}"))
               for n in np.atleast_1d(request["muscle_names"])]
    contacts = [c for c in (opensim.SmoothSphereHalfSpaceForce.safeDownCast(x) for x in model.getComponentsList())
                if c is not None]
    actuators = [opensim.Actuator.safeDownCast(model.getComponent(f"/forceset/{n}"))
                 for n in np.atleast_1d(request["actuator_names"])]
    q, u, activations, controls = (np.atleast_2d(np.asarray(request[k], dtype=float))
                                   for k in ("q", "u", "activations", "controls"))
    udot = request.get("udot")
    compliant, tendon_states = None, None
    if "normalized_tendon_forces" in request:
        compliant = [opensim.DeGrooteFregly2016Muscle.safeDownCast(m) for m in muscles]
        tendon_states = [np.atleast_2d(np.asarray(request[key], dtype=float)) for key in
                         ("normalized_tendon_forces", "normalized_tendon_force_derivatives")]
    solver = opensim.InverseDynamicsSolver(model)
    count, n, nu = q.shape[0], len(names), state.getNU()
    order = [all_names.index(name) for name in names]
    result = {"contact_records": np.zeros((count, 12, len(contacts))), "tendon_forces": np.zeros((count, len(muscles))),
              "accelerations": np.zeros((count, n)), "inverse_dynamics_residual": np.zeros((count, n))}
    equilibrium = np.zeros((count, len(muscles)))
    for k in range(count):
        for coordinate, value, speed in zip(coordinates, q[k], u[k]):
            coordinate.setValue(state, float(value), False)
            coordinate.setSpeedValue(state, float(speed))
        for muscle, activation in zip(muscles, activations[k]):
            muscle.setActivation(state, float(activation))
        if compliant is not None:
            for muscle, force, rate in zip(compliant, tendon_states[0][k], tendon_states[1][k]):
                muscle.setNormalizedTendonForce(state, float(force))
                muscle.setDiscreteVariableValue(state, "implicitderiv_normalized_tendon_force", float(rate))
        model.realizeVelocity(state)
        model_controls = model.updControls(state)
        model_controls.setToZero()
        for actuator, value in zip(actuators, controls[k]):
            actuator.addInControls(opensim.Vector(1, float(value)), model_controls)
        model.setControls(state, model_controls)
        model.realizeAcceleration(state)
        result["accelerations"][k] = [c.getAccelerationValue(state) for c in coordinates]
        for j, contact in enumerate(contacts):
            values = contact.getRecordValues(state)
            result["contact_records"][k, :, j] = [values.get(i) for i in range(12)]
        result["tendon_forces"][k] = [m.getTendonForce(state) for m in muscles]
        if compliant is not None:
            equilibrium[k] = [m.getImplicitResidualNormalizedTendonForce(state) for m in compliant]
        if udot is not None:
            by_set = np.zeros(n)
            by_set[order] = np.asarray(udot[k], dtype=float)
            residual = solver.solve(state, vector(by_set, index, nu))
            result["inverse_dynamics_residual"][k] = [residual.get(int(index[1][i])) for i in order]
    if compliant is not None:
        result["equilibrium_residual"] = equilibrium
    result["contact_names"] = np.array([c.getName() for c in contacts], dtype=str)
    dgf = [opensim.DeGrooteFregly2016Muscle.safeDownCast(m) for m in muscles]
    for key, get in (("tendon_strain", "get_tendon_strain_at_one_norm_force"),
                     ("passive_fiber_strain", "get_passive_fiber_strain_at_one_norm_force"),
                     ("fiber_damping", "get_fiber_damping"),
                     ("active_force_width_scale", "get_active_force_width_scale"),
                     ("ignore_passive_fiber_force", "get_ignore_passive_fiber_force"),
                     ("ignore_tendon_compliance", "get_ignore_tendon_compliance")):
        result[f"muscle_{key}"] = np.array([float(getattr(m, get)()) for m in dgf])
    return result
