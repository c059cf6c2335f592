"""Inverse dynamics of a motion file: generalized forces and joint reaction loads per frame.

Kinematics come from the motion's coordinates as OpenSim prepares them (``trajopt.model.io.signals``):
optional 3rd-order Butterworth low-pass (``cutoff_frequency`` in Hz, ``None``: no filter) after
reflective padding, then natural quintic splines. Speeds are the spline's first derivative.
Accelerations are either its second derivative (``InverseDynamicsTool``) or, with
``speed_spline_accelerations=True``, the derivative of a quintic spline through the speeds at the
frames: what OpenSim's AnalyzeTool + StaticOptimization use (``GCVSplineSet(5, states)``).

Joint reactions are the loads each joint's parent applies to its child body (moment about the
child joint frame's origin), from the motion and gravity alone: ``joint_reaction_loads`` without
applied body loads. They include the generalized force each joint transmits about its free
axes, i.e. the inverse-dynamics force acting as a joint motor.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import casadi as ca
import numpy as np

from trajopt.studies.analysis.external_loads_file import external_loads_from
from trajopt.errors import MotionFileError, TrajoptInputError
from trajopt.model.io import Table, motion_processor, write_sto
from trajopt.core.multibody import BodyAxes, ReactionAxes, inverse_dynamics, joint_reaction_loads
from trajopt.model.io.signals import coordinate_splines, natural_spline
from trajopt.model.musculoskeletal.model_forces import model_applied_forces


@dataclass(frozen=True)
class MotionKinematics:
    """Coordinates, speeds and accelerations (frames x coordinates) at ``times``."""

    times: np.ndarray
    coordinate_names: tuple[str, ...]
    q: np.ndarray
    u: np.ndarray
    udot: np.ndarray
    source: str = ""


def read_model_motion(motion, coordinate_names, rotational) -> Table:
    """A motion (file path, ``Table`` in radians or ``MotionProcessor``: its source, unfiltered and whole) with
    exactly the model's coordinate columns, checked.

    Raises ``MotionFileError`` naming every missing column, or the first non-finite value.
    """
    table = motion_processor(motion).table(rotational)
    where = table.source or table.name or "motion"
    missing = [c for c in coordinate_names if c not in table.labels]
    if missing:
        raise MotionFileError(f"{where}: missing coordinate columns {missing} (columns: {list(table.labels)})")
    table = table.select(coordinate_names)
    bad = np.argwhere(~np.isfinite(table.data))
    if bad.size:
        row, column = bad[0]
        raise MotionFileError(f"{where}: column '{table.labels[column]}' is {table.data[row, column]} "
                              f"at row {row} (time {table.time[row]})")
    if table.num_frames < 4:
        raise MotionFileError(f"{where}: {table.num_frames} frames; need at least 4 to differentiate")
    if np.any(np.diff(table.time) <= 0):
        row = int(np.argmax(np.diff(table.time) <= 0)) + 1
        raise MotionFileError(f"{where}: time does not increase at row {row} (time {table.time[row]})")
    return table


def motion_kinematics(
    table: Table,
    cutoff_frequency: float | None = None,
    speed_spline_accelerations: bool = False,
    window: tuple[float, float] | None = None,
) -> MotionKinematics:
    """q, u, udot at the frames OpenSim's tools report in ``window`` (t0, t1) (default: the motion's first and
    last times; the filtered grid's frames when filtering)."""
    splines = coordinate_splines(table, cutoff_frequency)
    start, final = (table.time[0], table.time[-1]) if window is None else window
    times = splines.output_times(start, final)
    q = splines.evaluate(times, 0)
    u = splines.evaluate(times, 1)
    if speed_spline_accelerations:
        grid = splines.frame_times
        udot = natural_spline(grid, splines.evaluate(grid, 1))(times, nu=1).reshape(times.size, -1)
    else:
        udot = splines.evaluate(times, 2)
    return MotionKinematics(times, tuple(table.labels), q, u, udot, table.source)


def processed_kinematics(motion, coordinate_names, rotational, speed_spline_accelerations: bool = False,
                         assemble=None) -> MotionKinematics:
    """``motion_kinematics`` of ``motion`` (file, ``Table`` or ``MotionProcessor``) with the processor's filter and
    window; ``assemble(table) -> table`` completes the columns first (e.g. couplers' dependent coordinates)."""
    processor = motion_processor(motion)
    table = read_model_motion(processor, coordinate_names, rotational)
    if assemble is not None:
        table = assemble(table)
    return motion_kinematics(table, processor.cutoff_frequency, speed_spline_accelerations, processor.window)


def _per_frame_function(multibody, expressed_in) -> ca.Function:
    q = ca.SX.sym("q", multibody.nq)
    u = ca.SX.sym("u", multibody.nv)
    udot = ca.SX.sym("udot", multibody.nv)
    external = ca.SX.sym("external_wrenches", 6 * len(multibody.bodies))
    wrenches = ca.reshape(external, 6, len(multibody.bodies))
    tau = inverse_dynamics(multibody, q, u, udot, wrenches)
    forces, moments = joint_reaction_loads(multibody, q, u, udot, wrenches, expressed_in=expressed_in)
    return ca.Function("motion_inverse_dynamics", [q, u, udot, external], [tau, ca.vec(forces), ca.vec(moments)],
                       ["q", "u", "udot", "external_wrenches"],
                       ["generalized_forces", "reaction_forces", "reaction_moments"])


@dataclass(frozen=True)
class InverseDynamicsResult:
    """Per frame: generalized forces (frames x speeds) and joint reactions (frames x joints x 3)."""

    kinematics: MotionKinematics
    speed_names: tuple[str, ...]
    generalized_force_labels: tuple[str, ...]
    generalized_forces: np.ndarray
    joint_names: tuple[str, ...]
    child_bodies: tuple[str, ...]
    reaction_forces: np.ndarray
    reaction_moments: np.ndarray
    expressed_in: ReactionAxes | BodyAxes

    @property
    def times(self) -> np.ndarray:
        return self.kinematics.times

    def generalized_forces_table(self) -> Table:
        """OpenSim's ID column names: ``<coordinate>_moment`` (rotational) or ``_force``."""
        return Table(self.times, self.generalized_force_labels, self.generalized_forces, name="Inverse Dynamics")

    def reactions_table(self) -> Table:
        """OpenSim JointReaction-style labels ``<joint>_on_<child>_in_<frame>_fx ... _mz``."""
        labels, columns = [], []
        for k, (joint, child) in enumerate(zip(self.joint_names, self.child_bodies)):
            for kind, values in (("f", self.reaction_forces), ("m", self.reaction_moments)):
                for axis in range(3):
                    labels.append(f"{joint}_on_{child}_in_{self.expressed_in.label}_{kind}{'xyz'[axis]}")
                    columns.append(values[:, k, axis])
        return Table(self.times, tuple(labels), np.column_stack(columns), name="Joint Reactions")

    def write(self, folder, prefix: str = "inverse_dynamics") -> list[Path]:
        """``<prefix>_generalized_forces`` and ``<prefix>_joint_reactions`` as .sto."""
        folder = Path(folder)
        written = []
        for name, table in (("generalized_forces", self.generalized_forces_table()),
                            ("joint_reactions", self.reactions_table())):
            written.append(write_sto(folder / f"{prefix}_{name}.sto", table))
        return written


def check_motion_fits(multibody, kinematics: MotionKinematics) -> None:
    """Refuse ``kinematics`` whose columns are not ``multibody``'s coordinates, or a model with quaternion joints
    (its speeds are not the coordinates' rates)."""
    if multibody.nq != multibody.nv:
        raise TrajoptInputError(
            f"model '{multibody.name}' has quaternion joints (nq={multibody.nq}, nv={multibody.nv}): "
            "convert the motion's speeds first (trajopt.core.multibody.convert_ball_joint_motion)")
    if tuple(kinematics.coordinate_names) != tuple(multibody.coordinate_names):
        raise TrajoptInputError(f"kinematics columns {list(kinematics.coordinate_names)} are not the model's "
                                f"coordinates {list(multibody.coordinate_names)}")


def generalized_forces(multibody, kinematics: MotionKinematics) -> np.ndarray:
    """(frames, nv) generalized forces of the motion without external loads or joint reactions: one mapped call of
    the inverse dynamics' wrench variant (zero wrenches, the Function the external loads' forces use too)."""
    check_motion_fits(multibody, kinematics)
    no_wrenches = np.zeros((6, len(multibody.bodies) * kinematics.times.size))
    return np.asarray(inverse_dynamics(multibody, kinematics.q.T, kinematics.u.T, kinematics.udot.T, no_wrenches),
                      dtype=float).T


def solve_inverse_dynamics(multibody, kinematics: MotionKinematics, rotational=(),
                           expressed_in: ReactionAxes | BodyAxes = ReactionAxes.GROUND, external_loads=None,
                           applied_forces=None) -> InverseDynamicsResult:
    """Generalized forces and joint reactions at every frame of ``kinematics`` (one mapped call), with
    ``external_loads`` (``trajopt.studies.analysis.external_loads.ExternalLoads`` or the path of its OpenSim .xml)
    applied when given. ``applied_forces`` (anything with ``generalized_forces(kinematics)`` -> (frames, nv), e.g. the
    model's passive force elements as ``trajopt.model.musculoskeletal.model_forces.ModelForces``): generalized
    forces the model applies itself, taken off the result (as OpenSim's ID tool does with non-muscle forces);
    the joint reactions are those of the whole generalized force."""
    check_motion_fits(multibody, kinematics)
    external_loads = external_loads_from(external_loads)
    n = kinematics.times.size
    nb = len(multibody.bodies)
    external = np.zeros((6 * nb, n)) if external_loads is None else external_loads.wrenches(
        multibody, kinematics.times, kinematics.q).transpose(1, 2, 0).reshape(6 * nb, n, order="F")
    function = _per_frame_function(multibody, expressed_in).map(n)
    tau, forces, moments = (np.asarray(x) for x in function(kinematics.q.T, kinematics.u.T, kinematics.udot.T,
                                                              external))
    if applied_forces is not None:
        tau = tau - np.asarray(applied_forces.generalized_forces(kinematics)).T
    joints = multibody.joints
    rotational = set(rotational)
    labels = tuple(f"{name}_{'moment' if name in rotational else 'force'}" for name in multibody.speed_names)
    return InverseDynamicsResult(
        kinematics=kinematics,
        speed_names=tuple(multibody.speed_names),
        generalized_force_labels=labels,
        generalized_forces=tau.T,
        joint_names=tuple(j.name for j in joints),
        child_bodies=tuple(j.child.body for j in joints),
        reaction_forces=forces.T.reshape(n, len(joints), 3),
        reaction_moments=moments.T.reshape(n, len(joints), 3),
        expressed_in=expressed_in,
    )


def motion_inverse_dynamics(
    osim,
    motion,
    external_loads=None,
    speed_spline_accelerations: bool = False,
    expressed_in: ReactionAxes | BodyAxes = ReactionAxes.GROUND,
) -> InverseDynamicsResult:
    """Inverse dynamics of ``motion`` (file, radians ``Table`` or ``MotionProcessor``: filter and window) for an
    ``OsimModel``, with ``external_loads`` (an ExternalLoads .xml file or ``ExternalLoads``, e.g. from
    ``read_external_loads``) applied when given."""
    external_loads = external_loads_from(external_loads)
    applied = model_applied_forces(osim)
    rotational = tuple(c.name for c in osim.spec.coordinates if c.motion_type == "rotational")
    multibody = osim.multibody
    kinematics = processed_kinematics(motion, multibody.coordinate_names, rotational, speed_spline_accelerations)
    return solve_inverse_dynamics(multibody, kinematics, rotational, expressed_in, external_loads, applied)
