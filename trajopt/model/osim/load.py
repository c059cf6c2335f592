"""``load_osim(path)``: an OpenSim 4 model file as a trajopt multibody model plus its forces."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from trajopt.errors import ModelFileError, TrajoptInputError
from trajopt.core.multibody.model import Model
from trajopt.model.osim import spec
from trajopt.model.osim.build import (
    BodyPoint,
    ContactHalfSpaceOnBody,
    build_constraints,
    enforced_constraint_names,
    ContactSphereOnBody,
    FrameResolver,
    build_multibody,
    contact_geometry,
)
from trajopt.model.osim.parser import parse_osim


@dataclass(frozen=True, eq=False)
class OsimModel:
    """What trajopt made of one .osim file.

    ``multibody`` is the rigid-body model (q, u in its tree order); ``spec`` is everything the
    file says (muscles with their paths and parameters, actuators, contact forces, constraints),
    with frames given as OpenSim paths; ``point`` resolves such a frame path to a body point.
    """

    spec: spec.ModelSpec
    multibody: Model
    frames: FrameResolver
    markers: dict[str, BodyPoint]
    contact_spheres: tuple[ContactSphereOnBody, ...]
    contact_half_spaces: tuple[ContactHalfSpaceOnBody, ...]
    constraints: tuple = ()

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def muscles(self) -> tuple[spec.Muscle, ...]:
        return self.spec.muscles

    @property
    def coordinate_actuators(self) -> tuple[spec.CoordinateActuator, ...]:
        return self.spec.coordinate_actuators

    @property
    def contact_forces(self) -> tuple[spec.SmoothSphereHalfSpaceForce, ...]:
        return self.spec.contact_forces

    def marker(self, name: str) -> BodyPoint:
        """Marker ``name`` as a point on its body."""
        if name not in self.markers:
            raise TrajoptInputError(f"{self.spec.file}: no marker '{name}' (markers: {sorted(self.markers)})")
        return self.markers[name]

    def muscle(self, name: str) -> spec.Muscle:
        for muscle in self.spec.muscles:
            if muscle.name == name:
                return muscle
        raise TrajoptInputError(f"{self.spec.file}: no muscle '{name}' "
                                f"(muscles: {[m.name for m in self.spec.muscles]})")

    def point(self, frame: str, location) -> BodyPoint:
        """A location given in the OpenSim frame ``frame`` (e.g. a path point's) as a body point."""
        return self.frames.point(frame, location)


def load_osim(path: str | Path, constraints: bool = False) -> OsimModel:
    """Read an OpenSim 4 ``.osim`` file (OpenSim need not be installed).

    Raises `trajopt.errors.ModelFileError` naming the element and its path for anything trajopt
    cannot represent; warns (`OsimIgnoredWarning`) listing optional elements it ignored. A model with
    enforced constraints (CoordinateCouplerConstraint, PointConstraint, WeldConstraint) is refused
    unless ``constraints``: then ``OsimModel.constraints`` holds them for the constrained dynamics of
    ``trajopt.core.multibody.constraints`` (the caller enforces them).
    """
    model_spec = parse_osim(path)
    enforced = enforced_constraint_names(model_spec)
    if enforced and not constraints:
        listed = "; ".join(f"{kind}(s) {names}" for kind, names in enforced.items())
        raise ModelFileError(f"{model_spec.file}: {listed} are enforced: load it with load_osim(path, "
                             f"constraints=True) for constrained dynamics (trajopt.core.multibody.constraints) or with "
                             "trajopt.model.musculoskeletal.operators.load_processed (couplers only), which the "
                             "inverse dynamics, static optimization, muscle-driven inverse and muscle analysis tools "
                             "use")
    frames = FrameResolver(model_spec)
    spheres, half_spaces = contact_geometry(model_spec, frames)
    return OsimModel(
        spec=model_spec,
        multibody=build_multibody(model_spec),
        frames=frames,
        markers={m.name: frames.point(m.frame, m.location) for m in model_spec.markers},
        contact_spheres=spheres,
        contact_half_spaces=half_spaces,
        constraints=build_constraints(model_spec, frames) if constraints else (),
    )
