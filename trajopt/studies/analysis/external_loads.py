"""External loads (measured ground reactions) as OpenSim's ExternalLoads / ExternalForce apply them.

An ``ExternalForce`` pushes on ``body`` with a force (and optionally a point of application and a torque)
sampled in time. Force, point and torque are expressed in ``ground`` or in a body's frame, as the .xml says.
As OpenSim's ``ExternalForce``, each component is interpolated with an interpolating natural cubic spline
(``GCVSpline`` of degree 3; piecewise linear for 2 or 3 samples, constant for 1). Without a point the force
acts at the body's origin.

``ExternalLoads.generalized_forces(multibody, kinematics)`` gives, per frame, the generalized forces the
loads apply (Jᵀ w), so that inverse dynamics of the motion with the loads is ``ID(q, u, u̇) − that``;
``ExternalLoads.wrenches(...)`` the body wrenches (ground axes, moment about the body origin, as
``trajopt.core.multibody.point_force``) for tools that take wrenches. The .xml reader is
``trajopt.studies.analysis.external_loads_file.read_external_loads``.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody import body_pose, inverse_dynamics
from trajopt.core.multibody.kinematics import cached_function
from trajopt.model.io.signals import natural_spline

GROUND = "ground"


@dataclass(frozen=True)
class ExternalForce:
    """One ExternalForce: samples (frames x 3) of force, point (or None) and torque (or None) at ``times``."""

    name: str
    body: str
    force_expressed_in: str
    point_expressed_in: str
    times: np.ndarray
    force: np.ndarray
    point: np.ndarray | None = None
    torque: np.ndarray | None = None

    def interpolate(self, values: np.ndarray, times: np.ndarray) -> np.ndarray:
        """OpenSim's ExternalForce interpolation of ``values`` (samples x 3) at ``times``."""
        samples = self.times.size
        if samples == 1:
            return np.repeat(values[:1], times.size, axis=0)
        if samples <= 3:
            return np.column_stack([np.interp(times, self.times, values[:, i]) for i in range(3)])
        return natural_spline(self.times, values, degree=3)(times)


@dataclass(frozen=True)
class ExternalLoads:
    """External forces applied to a model; ``source`` names the file they came from (for messages)."""

    forces: tuple[ExternalForce, ...]
    source: str = ""
    data_file: str = ""

    def check_covers(self, times) -> None:
        """Every force's samples span ``times`` (to 1e-6 s): OpenSim's spline would extrapolate them (one line
        naming the file, both time ranges and the force otherwise)."""
        times = np.asarray(times, dtype=float)
        if times.size == 0:
            return
        first, last = float(times.min()), float(times.max())
        for force in self.forces:
            low, high = float(force.times[0]), float(force.times[-1])
            if first < low - 1e-6 or last > high + 1e-6:
                data = f" (data file {self.data_file})" if self.data_file else ""
                raise TrajoptInputError(f"{self.source or 'external loads'}{data}: ExternalForce '{force.name}' has "
                                        f"data for t = {low:g}..{high:g} s but the motion needs t = {first:g}.."
                                        f"{last:g} s: the loads do not cover the motion (no extrapolation); give a "
                                        f"time window inside the loads' range")

    def check(self, multibody) -> None:
        """Every body named exists in the model (one line naming the file, force and body otherwise)."""
        known = {b.name for b in multibody.bodies} | {GROUND}
        for force in self.forces:
            for role, body in (("applied_to_body", force.body), ("force_expressed_in_body", force.force_expressed_in),
                               ("point_expressed_in_body", force.point_expressed_in)):
                if body not in known:
                    raise TrajoptInputError(f"{self.source or 'external loads'}: ExternalForce '{force.name}' "
                                            f"{role} '{body}' is not a body of model '{multibody.name}'")
            if force.body == GROUND:
                raise TrajoptInputError(f"{self.source or 'external loads'}: ExternalForce '{force.name}' is "
                                        f"applied to ground, which does not move the model")

    def wrenches(self, multibody, times, q) -> np.ndarray:
        """(frames, 6, bodies) body wrenches in ground axes: moment about each body's origin, then force."""
        self.check(multibody)
        self.check_covers(times)
        times = np.asarray(times, dtype=float)
        q = np.atleast_2d(np.asarray(q, dtype=float))
        pose = _poses_function(multibody)
        nb = len(multibody.bodies)
        result = np.zeros((times.size, 6, nb))
        rotations, origins = pose.map(times.size)(q.T)
        rotations = np.asarray(rotations).reshape(3 * nb, 3, times.size, order="F")
        origins = np.asarray(origins).reshape(3, nb, times.size, order="F")
        names = [b.name for b in multibody.bodies]
        for force in self.forces:
            k = names.index(force.body)
            f = _to_ground(force.interpolate(force.force, times), force.force_expressed_in, names, rotations)
            torque = np.zeros_like(f) if force.torque is None else _to_ground(
                force.interpolate(force.torque, times), force.force_expressed_in, names, rotations)
            origin = origins[:, k, :].T
            if force.point is None:
                point = origin
            else:
                point = _to_ground(force.interpolate(force.point, times), force.point_expressed_in, names, rotations,
                                   origins)
            result[:, :3, k] += np.cross(point - origin, f) + torque
            result[:, 3:, k] += f
        return result

    def generalized_forces(self, multibody, kinematics) -> np.ndarray:
        """(frames, nv) generalized forces Jᵀ w of the loads at the frames of ``kinematics``."""
        wrenches = self.wrenches(multibody, kinematics.times, kinematics.q)
        function = _applied_function(multibody).map(kinematics.times.size)
        values = function(kinematics.q.T, wrenches.transpose(1, 2, 0).reshape(6 * len(multibody.bodies), -1,
                                                                                order="F"))
        return np.asarray(values).T


@dataclass(frozen=True)
class AppliedExternalLoads:
    """``ExternalLoads`` bound to a model: the ``AppliedForces`` of ``trajopt.studies.analysis.muscle_inverse``."""

    loads: ExternalLoads
    multibody: object

    def generalized_forces(self, kinematics) -> np.ndarray:
        return self.loads.generalized_forces(self.multibody, kinematics)

    def wrenches(self, kinematics) -> np.ndarray:
        return self.loads.wrenches(self.multibody, kinematics.times, kinematics.q)


def _to_ground(values, frame, names, rotations, origins=None):
    """Vectors (frames x 3) given in ``frame`` axes into ground axes (points also shifted by the origin)."""
    if frame == GROUND:
        return values
    k = names.index(frame)
    rotation = rotations[3 * k:3 * k + 3]  # (3, 3, frames)
    vectors = np.einsum("ijf,fj->fi", rotation, values)
    return vectors if origins is None else vectors + origins[:, k, :].T


def _poses_function(multibody) -> ca.Function:
    def build(model):
        q = ca.SX.sym("q", model.nq)
        poses = [body_pose(model, q, b.name) for b in model.bodies]
        return ca.Function("body_poses", [q], [ca.vertcat(*[p[0] for p in poses]), ca.horzcat(*[p[1] for p in poses])])

    return cached_function(multibody, "external_loads_body_poses", build)


def _applied_function(multibody) -> ca.Function:
    """(q, wrenches) -> Jᵀ w = ID(q, 0, 0, 0) − ID(q, 0, 0, w): the loads' generalized forces."""

    def build(multibody):
        q = ca.SX.sym("q", multibody.nq)
        flat = ca.SX.sym("wrenches", 6 * len(multibody.bodies))
        zero = ca.SX.zeros(multibody.nv)
        wrenches = ca.reshape(flat, 6, len(multibody.bodies))
        # Both terms through the wrench variant of the inverse dynamics: one Function to build, not two.
        no_wrenches = ca.SX.zeros(6, len(multibody.bodies))
        tau = inverse_dynamics(multibody, q, zero, zero, no_wrenches) - inverse_dynamics(multibody, q, zero, zero,
                                                                                           wrenches)
        return ca.Function("external_generalized_forces", [q, flat], [tau], ["q", "wrenches"], ["generalized_forces"])

    return cached_function(multibody, "external_loads_generalized_forces", build)
