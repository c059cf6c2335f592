"""Model operators, as Moco's ModelProcessor: small objects that edit a parsed model before it is built.

Each operator has ``apply(spec) -> spec`` on a ``trajopt.osim.spec.ModelSpec`` and is applied in order by
``process(spec, operators)`` or ``load_processed(path, operators)``::

    osim, couplings = load_processed("subject_walk_scaled.osim", [
        WeldJoints(("mtp_r", "mtp_l")), AddResiduals(250.0, 50.0, 1.0),
        DeGrooteMuscles(ignore_passive_fiber_force=True, active_force_width_scale=1.5), AddReserves(1.0)])

- ``WeldJoints``: the joints become welds; their coordinates disappear (ModOpReplaceJointsWithWelds).
- ``DeGrooteMuscles``: every muscle becomes a DeGrooteFregly2016Muscle with the parameters OpenSim's
  ``replaceMuscles`` gives it (``trajopt.musculoskeletal.degroote_parameters``), optionally without passive
  fiber force and with a scaled active force-length width (ModOpReplaceMusclesWithDeGrooteFregly2016,
  ModOpIgnorePassiveFiberForcesDGF, ModOpScaleActiveFiberForceCurveWidthDGF). Tendon compliance is chosen
  where the muscles are used (rigid in static optimization; ``RigidTendons``/``ElasticTendons`` in inverse).
- ``AddResiduals``: actuators on the coordinates of the joints whose parent is ground (ModOpAddResiduals).
- ``AddReserves``: an actuator on every unlocked, independent coordinate that has none (ModOpAddReserves).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trajopt.errors import ModelFileError
from trajopt.osim import spec as osim_spec

GROUND_FRAMES = ("ground", "/ground")


def _is_ground(frame: str, model_spec) -> bool:
    if frame in GROUND_FRAMES:
        return True
    offset = next((f for f in model_spec.frames if f.name == frame or frame.endswith("/" + f.name)), None)
    return offset is not None and offset.parent in GROUND_FRAMES


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
        return dataclasses.replace(model_spec, joints=joints, coordinate_actuators=actuators)


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
        from trajopt.musculoskeletal import degroote_parameters

        muscles = []
        for muscle in model_spec.muscles:
            p = degroote_parameters(muscle)
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
    that is not the dependent one of a coupler and has no actuator yet. Named ``reserve_jointset_<joint>_<coordinate>``."""

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


def process(model_spec, operators=()):
    """``model_spec`` after each operator in turn."""
    for operator in operators:
        model_spec = operator.apply(model_spec)
    return model_spec


def load_processed(path: str | Path, operators=()):
    """(OsimModel, couplings): the .osim after ``operators``; enforced CoordinateCouplerConstraints come back as
    ``trajopt.paths.moment_arms.CoordinateCoupling`` (the multibody model keeps their coordinates free)."""
    from trajopt.osim.build import FrameResolver, build_multibody, contact_geometry
    from trajopt.osim.load import OsimModel
    from trajopt.osim.parser import parse_osim
    from trajopt.paths.moment_arms import couplings_from_osim

    model_spec = process(parse_osim(path), operators)
    couplings = couplings_from_osim(model_spec)
    free = dataclasses.replace(model_spec, constraints=tuple(dataclasses.replace(c, enforced=False)
                                                             for c in model_spec.constraints))
    frames = FrameResolver(free)
    spheres, half_spaces = contact_geometry(free, frames)
    return OsimModel(spec=free, multibody=build_multibody(free), frames=frames,
                     markers={m.name: frames.point(m.frame, m.location) for m in free.markers},
                     contact_spheres=spheres, contact_half_spaces=half_spaces), couplings
