"""Model operators, as Moco's ModelProcessor: small objects that edit a parsed model before it is built.

Each operator has ``apply(spec) -> spec`` on a ``trajopt.model.osim.spec.ModelSpec`` and is applied in order by
``process(spec, operators)`` or ``load_processed(path, operators)``::

    osim, couplings = load_processed("subject_walk_scaled.osim", [
        WeldJoints(("mtp_r", "mtp_l")), AddResiduals(250.0, 50.0, 1.0),
        DeGrooteMuscles(ignore_passive_fiber_force=True, active_force_width_scale=1.5), AddReserves(1.0)])

- ``WeldJoints``: the joints become welds; their coordinates disappear (ModOpReplaceJointsWithWelds).
- ``DeGrooteMuscles``: every muscle becomes a DeGrooteFregly2016Muscle with the parameters OpenSim's
  ``replaceMuscles`` gives it (``trajopt.model.musculoskeletal.degroote_parameters``), optionally without passive
  fiber force and with a scaled active force-length width (ModOpReplaceMusclesWithDeGrooteFregly2016,
  ModOpIgnorePassiveFiberForcesDGF, ModOpScaleActiveFiberForceCurveWidthDGF). Tendon compliance is chosen
  where the muscles are used (rigid in static optimization; ``RigidTendons``/``ElasticTendons`` in inverse).
- ``AddResiduals``: actuators on the coordinates of the joints whose parent is ground (ModOpAddResiduals).
- ``AddReserves``: an actuator on every unlocked, independent coordinate that has none (ModOpAddReserves).
- ``FreeJointInQuaternions``: a ground joint becomes a FreeJoint (unit quaternion + translations).
- ``AddCoordinateActuators``: an actuator on each named coordinate.
- ``AddContactGeometry``: contact spheres, half spaces and smooth sphere-half-space forces from ``.xml`` sets.
- ``AddExpressionForces``: the ExpressionBasedCoordinateForces of a ForceSet .xml (passive joint moments).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trajopt.errors import ModelFileError
from trajopt.model.musculoskeletal.model import degroote_parameters
from trajopt.model.osim import spec as osim_spec
from trajopt.model.osim.build import FrameResolver, build_multibody, contact_geometry
from trajopt.model.osim.expression_forces import read_expression_forces
from trajopt.model.osim.load import OsimModel
from trajopt.model.osim.parse_forces import parse_contact_geometry, parse_smooth_contact
from trajopt.model.osim.parser import parse_osim
from trajopt.model.osim.xml_reader import Reader, members, read_xml
from trajopt.model.paths.moment_arms import couplings_from_osim

GROUND_FRAMES = ("ground", "/ground")


def _is_ground(frame: str, model_spec) -> bool:
    if frame in GROUND_FRAMES:
        return True
    offset = next((f for f in model_spec.frames if f.name == frame or frame.endswith("/" + f.name)), None)
    return offset is not None and offset.parent in GROUND_FRAMES


def ground_coordinates(model_spec) -> tuple[str, ...]:
    """The coordinates of the joints whose parent is ground (a pelvis' six): where residual actuators act."""
    return tuple(c.name for joint in model_spec.joints if _is_ground(joint.parent_frame, model_spec)
                 for c in joint.coordinates)


@dataclass(frozen=True)
class WeldJoints:
    """Replace the named joints with welds (their coordinates are removed from the model)."""

    joints: tuple[str, ...]

    def apply(self, model_spec):
        names = {j.name for j in model_spec.joints}
        missing = [n for n in self.joints if n not in names]
        if missing:
            raise ModelFileError(f"{model_spec.file}: WeldJoints: no joint {missing} in the model")
        joints = tuple(osim_spec.WeldJoint(j.name, j.parent_frame, j.child_frame, ()) if j.name in self.joints else j
                       for j in model_spec.joints)
        gone = {c.name for j in model_spec.joints if j.name in self.joints for c in j.coordinates}
        actuators = tuple(a for a in model_spec.coordinate_actuators if a.coordinate not in gone)
        # A coupler whose dependent coordinate is welded has nothing left to couple.
        constraints = tuple(c for c in model_spec.constraints if c.dependent_coordinate not in gone)
        kept_gone = [c.name for c in constraints if set(c.independent_coordinates) & gone]
        if kept_gone:
            raise ModelFileError(f"{model_spec.file}: WeldJoints: coupler(s) {kept_gone} drive a coordinate from a "
                                 f"welded one; weld the coupled joint too")
        return dataclasses.replace(model_spec, joints=joints, coordinate_actuators=actuators, constraints=constraints)


@dataclass(frozen=True)
class DeGrooteMuscles:
    """Every muscle as a DeGrooteFregly2016Muscle (OpenSim's replaceMuscles mapping)."""

    ignore_passive_fiber_force: bool = False
    active_force_width_scale: float = 1.0

    def __post_init__(self):
        if not (np.isfinite(self.active_force_width_scale) and self.active_force_width_scale >= 1.0):
            raise ModelFileError(f"DeGrooteMuscles: active_force_width_scale must be >= 1, got "
                                 f"{self.active_force_width_scale!r}")

    def apply(self, model_spec):
        muscles = []
        for muscle in model_spec.muscles:
            p = degroote_parameters(muscle, source=model_spec.file)
            parameters = osim_spec.DeGrooteFregly2016Parameters(
                active_force_width_scale=p.active_force_width_scale * self.active_force_width_scale,
                fiber_damping=p.fiber_damping,
                passive_fiber_strain_at_one_norm_force=p.passive_fiber_strain_at_one_norm_force,
                tendon_strain_at_one_norm_force=p.tendon_strain_at_one_norm_force,
                ignore_passive_fiber_force=p.ignore_passive_fiber_force or self.ignore_passive_fiber_force)
            muscles.append(dataclasses.replace(muscle, model="DeGrooteFregly2016Muscle", parameters=parameters))
        return dataclasses.replace(model_spec, muscles=tuple(muscles))


@dataclass(frozen=True)
class AddResiduals:
    """Residual actuators on the coordinates of joints attached to ground: optimal force per motion type,
    controls within ±bound (None: unbounded). Named ``residual_jointset_<joint>_<coordinate>``."""

    rotational_optimal_force: float
    translational_optimal_force: float
    bound: float | None = None

    def apply(self, model_spec):
        bound = np.inf if self.bound is None else float(self.bound)
        added = []
        for joint in model_spec.joints:
            if not _is_ground(joint.parent_frame, model_spec):
                continue
            for c in joint.coordinates:
                force = self.translational_optimal_force if c.motion_type == "translational" else \
                    self.rotational_optimal_force
                name = f"residual_jointset_{joint.name}_{c.name}"
                added.append(osim_spec.CoordinateActuator(name, c.name, float(force), -bound, bound, True,
                                                          f"/forceset/{name}"))
        return dataclasses.replace(model_spec, coordinate_actuators=model_spec.coordinate_actuators + tuple(added))


@dataclass(frozen=True)
class AddReserves:
    """A reserve actuator (optimal force, controls within ±bound, None: unbounded) on every unlocked coordinate
    that is not the dependent one of a coupler and has no actuator yet. Named
    ``reserve_jointset_<joint>_<coordinate>``."""

    optimal_force: float
    bound: float | None = None

    def apply(self, model_spec):
        bound = np.inf if self.bound is None else float(self.bound)
        dependent = {c.dependent_coordinate for c in model_spec.constraints if c.enforced}
        actuated = {a.coordinate for a in model_spec.coordinate_actuators if a.applies_force}
        added = tuple(osim_spec.CoordinateActuator(f"reserve_jointset_{c.joint}_{c.name}", c.name,
                                                   float(self.optimal_force), -bound, bound, True,
                                                   f"/forceset/reserve_jointset_{c.joint}_{c.name}")
                      for c in model_spec.coordinates
                      if not c.locked and c.name not in dependent and c.name not in actuated)
        return dataclasses.replace(model_spec, coordinate_actuators=model_spec.coordinate_actuators + added)


@dataclass(frozen=True)
class AddExpressionForces:
    """Append the ExpressionBasedCoordinateForces of a ForceSet .xml (e.g. Moco's 3D walking example's
    ``subject_walk_scaled_ExpressionBasedCoordinateForceSet.xml``); their coordinates must be in the model."""

    path: str | Path

    def apply(self, model_spec):
        forces = read_expression_forces(self.path)
        if not forces:  # another kind of file (e.g. the ExternalLoads .xml): nothing would be added
            raise ModelFileError(f"{self.path}: no ExpressionBasedCoordinateForce in the file (a ForceSet .xml of "
                                 f"them is expected)")
        names = {c.name for c in model_spec.coordinates}
        for force in forces:
            if force.coordinate not in names:
                raise ModelFileError(f"{force.source}: ExpressionBasedCoordinateForce '{force.name}': coordinate "
                                     f"'{force.coordinate}' is not in model {model_spec.file}")
        return dataclasses.replace(model_spec, expression_forces=model_spec.expression_forces + forces)


def process(model_spec, operators=()):
    """``model_spec`` after each operator in turn."""
    for operator in operators:
        model_spec = operator.apply(model_spec)
    return model_spec


def load_processed(path: str | Path, operators=()):
    """(OsimModel, couplings): the .osim after ``operators``; enforced CoordinateCouplerConstraints come back as
    ``trajopt.model.paths.moment_arms.CoordinateCoupling`` (the multibody model keeps their coordinates free)."""
    model_spec = process(parse_osim(path), operators)
    closed = [c.name for c in model_spec.body_constraints if c.enforced]
    if closed:
        raise ModelFileError(f"{model_spec.file}: PointConstraint/WeldConstraint {closed} (closed loops) are enforced: "
                             f"the OpenSim-style tools take CoordinateCouplerConstraints only; use load_osim(path, "
                             f"constraints=True) and trajopt.core.multibody.constraints")
    couplings = couplings_from_osim(model_spec)
    free = dataclasses.replace(model_spec, constraints=tuple(dataclasses.replace(c, enforced=False)
                                                             for c in model_spec.constraints))
    frames = FrameResolver(free)
    spheres, half_spaces = contact_geometry(free, frames)
    return OsimModel(spec=free, multibody=build_multibody(free), frames=frames,
                     markers={m.name: frames.point(m.frame, m.location) for m in free.markers},
                     contact_spheres=spheres, contact_half_spaces=half_spaces), couplings


@dataclass(frozen=True)
class FreeJointInQuaternions:
    """Replace a ground joint (e.g. the pelvis's CustomJoint with 3 rotations and x, y, z translations) by a FreeJoint:
    a unit quaternion and the same translations (same frames), free of gimbal lock.

    Exact only when the joint's translations are the identity functions of its translation coordinates along the
    parent's x, y, z axes; anything else is an error naming the joint. Its three rotation coordinates disappear
    (trajopt's quaternion replaces them), and so do actuators on them. Coordinates of the free joint keep the
    translations' names; ``trajopt.studies.gait.guess.free_joint_motion`` converts a motion's angles to the quaternion.
    """

    joint: str

    def apply(self, model_spec):
        found = [j for j in model_spec.joints if j.name == self.joint]
        if not found:
            raise ModelFileError(f"{model_spec.file}: FreeJointInQuaternions: no joint '{self.joint}'")
        joint = found[0]
        if not _is_ground(joint.parent_frame, model_spec):
            raise ModelFileError(f"{model_spec.file}: FreeJointInQuaternions: joint '{self.joint}' is not on ground")
        if isinstance(joint, osim_spec.FreeJoint):
            return model_spec
        translations = getattr(joint, "spatial_transform", ())[3:6]
        by_name = {c.name: c for c in joint.coordinates}
        coordinates = []
        for k, axis in enumerate(translations):
            function = axis.function
            identity = isinstance(function, osim_spec.LinearFunction) and function.slope == 1.0 and \
                function.intercept == 0.0
            if len(axis.coordinates) != 1 or not identity or not np.allclose(axis.axis, np.eye(3)[k]):
                raise ModelFileError(f"{model_spec.file}: FreeJointInQuaternions: joint '{self.joint}' "
                                     f"{axis.name} is not the identity along the parent's {'xyz'[k]} axis")
            coordinates.append(by_name[axis.coordinates[0]])
        if len(coordinates) != 3:
            raise ModelFileError(f"{model_spec.file}: FreeJointInQuaternions: joint '{self.joint}' "
                                 f"({type(joint).__name__}) has no x, y, z translation axes")
        rotations = tuple(osim_spec.Coordinate(f"{self.joint}_r{a}", self.joint, "rotational", 0.0, 0.0,
                                               (-np.pi, np.pi), False, False, False) for a in "xyz")
        free = osim_spec.FreeJoint(joint.name, joint.parent_frame, joint.child_frame, rotations + tuple(coordinates))
        gone = {c.name for c in joint.coordinates} - {c.name for c in coordinates}
        return dataclasses.replace(
            model_spec, joints=tuple(free if j.name == self.joint else j for j in model_spec.joints),
            coordinate_actuators=tuple(a for a in model_spec.coordinate_actuators if a.coordinate not in gone))


@dataclass(frozen=True)
class AddContactGeometry:
    """Add the ContactSpheres/ContactHalfSpaces of a ContactGeometrySet ``.xml`` and the SmoothSphereHalfSpaceForces of
    a ForceSet ``.xml`` (Moco's example3DWalking: ``model.addContactGeometry``, ``model.addComponent``), spheres
    moved by ``sphere_offset`` (in their frames; the example raises them 2 cm). Either file may hold both kinds
    (sets side by side under one root), and ``forces_file`` may be None. Geometry paths are
    ``/contactgeometryset/<name>``, forces ``/<name>``."""

    geometry_file: str
    forces_file: str | None = None
    sphere_offset: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def apply(self, model_spec):
        kinds = {"ContactSphere": ("contact_geometry", "/contactgeometryset", parse_contact_geometry),
                 "ContactHalfSpace": ("contact_geometry", "/contactgeometryset", parse_contact_geometry),
                 "SmoothSphereHalfSpaceForce": ("contact_forces", "", parse_smooth_contact)}
        added = {"contact_geometry": [], "contact_forces": []}
        known_frames = {"ground", *(b.name for b in model_spec.bodies), *(f.name for f in model_spec.frames)}
        for file in (f for f in (self.geometry_file, self.forces_file) if f is not None):
            reader = Reader(str(file))
            root = read_xml(file)
            sets = [root] if root.tag.endswith("Set") else [child for child in root if child.tag.endswith("Set")]
            for set_element in sets:
                for element, where in members(set_element, f"{set_element.tag}"):
                    if element.tag not in kinds:
                        raise ModelFileError(f"{file}: {where}: unsupported element '{element.tag}' here (contact "
                                             f"files hold ContactSphere, ContactHalfSpace, SmoothSphereHalfSpaceForce)")
                    key, owner, parse = kinds[element.tag]
                    added[key].append(parse(reader, element, owner, where))
                    frame = added[key][-1].frame if key == "contact_geometry" else None
                    if frame is not None and frame.rstrip("/").rsplit("/", 1)[-1] not in known_frames:
                        raise ModelFileError(f"{file}: {where}: frame '{frame}' is not a body or frame of model "
                                             f"{model_spec.file}")
        offset = np.asarray(self.sphere_offset, dtype=float)
        geometry = tuple(dataclasses.replace(g, location=tuple(np.asarray(g.location) + offset))
                         if isinstance(g, osim_spec.ContactSphere) else g for g in added["contact_geometry"])
        return dataclasses.replace(model_spec, contact_geometry=model_spec.contact_geometry + geometry,
                                   contact_forces=model_spec.contact_forces + tuple(added["contact_forces"]))


@dataclass(frozen=True)
class AddCoordinateActuators:
    """A CoordinateActuator on each named coordinate (optimal force, controls within ±bound), named
    ``<coordinate>_actuator`` (Moco's example3DWalking adds these to the toes)."""

    coordinates: tuple[str, ...]
    optimal_force: float
    bound: float = 1.0

    def apply(self, model_spec):
        known = {c.name for c in model_spec.coordinates}
        missing = [c for c in self.coordinates if c not in known]
        if missing:
            raise ModelFileError(f"{model_spec.file}: AddCoordinateActuators: no coordinate {missing}")
        added = tuple(osim_spec.CoordinateActuator(f"{c}_actuator", c, float(self.optimal_force), -self.bound,
                                                   self.bound, True, f"/forceset/{c}_actuator")
                      for c in self.coordinates)
        return dataclasses.replace(model_spec, coordinate_actuators=model_spec.coordinate_actuators + added)
