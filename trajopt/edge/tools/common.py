"""What the OpenSim-style command-line tools share: the model with its couplers, the motion checked against it,
the low-pass cutoff checked against the motion's sampling, and one-line notes on what was adapted."""

from __future__ import annotations

import contextlib
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from trajopt.studies.analysis.couplers import CouplerConstraints
from trajopt.edge.cli.options import out_folder
from trajopt.errors import TrajoptInputError, first_names
from trajopt.model.io import Table
from trajopt.model.io.motion_units import AngleUnit, read_checked_motion, rotational_ranges, translational_ranges
from trajopt.model.io.output import fresh_output
from trajopt.core.ocp.interrupts import raise_if_interrupted
from trajopt.model.musculoskeletal.operators import AddExpressionForces, load_processed


@dataclass
class ToolInput:
    """A model (couplers as constraints) and a motion with exactly its coordinates; ``notes`` say what changed,
    ``unit`` the unit the motion's angles were read in, ``warnings`` doubts about that unit."""

    osim: object
    constraints: CouplerConstraints
    motion: Table
    notes: list = field(default_factory=list)
    unit: AngleUnit | None = None
    warnings: tuple = ()

    @property
    def rotational(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.osim.spec.coordinates if c.motion_type == "rotational")


def load_tool_input(model_file, motion_file, operators=()) -> ToolInput:
    """The model and its motion, as OpenSim's tools take them: columns that are not coordinates (speeds, markers)
    are ignored, coordinates missing from the file keep their default value, dependent coordinates of
    CoordinateCouplerConstraints are assembled from their independent ones. Each of these is a note, as is a
    doubt about the angles' unit is a warning (``trajopt.model.io.motion_units``: implausible angles are refused)."""
    osim, couplings = load_processed(model_file, operators)
    quaternion = [j.name for j in osim.multibody.joints if j.nq != j.nv]
    if quaternion:
        raise TrajoptInputError(f"{model_file}: joints {quaternion} are ball/free joints, whose rotations trajopt "
                                f"represents with a quaternion; the motion tools take models whose coordinates are "
                                f"OpenSim's (a CustomJoint with three rotations, as OpenSim's gait models use)")
    names = osim.multibody.coordinate_names
    checked = read_checked_motion(motion_file, rotational_ranges(osim), translations=translational_ranges(osim))
    table = checked.table
    notes = []
    extra = [label for label in table.labels if label not in names]
    if len(extra) == len(table.labels):  # a motion of another model: every coordinate would sit at its default
        raise TrajoptInputError(f"{motion_file}: none of its columns ({first_names(extra)}) is a coordinate of model "
                                f"{model_file} ({first_names(names)})")
    if extra:
        notes.append(f"{motion_file}: {len(extra)} column(s) that are not coordinates of the model were ignored: "
                     f"{first_names(extra)}")
    defaults = {c.name: c.default_value for c in osim.spec.coordinates}
    missing = [n for n in names if n not in table.labels]
    if missing:
        notes.append(f"{motion_file}: no column for {', '.join(missing)}: held at the default value, as OpenSim does")
    columns = [table.column(n) if n in table.labels else np.full(table.num_frames, defaults[n]) for n in names]
    motion = Table(table.time, tuple(names), np.column_stack(columns), False, table.name, table.metadata, table.source)
    constraints = CouplerConstraints(osim.multibody, couplings)
    if couplings:
        motion = constraints.assemble(motion)
        notes.append("dependent coordinates " + ", ".join(c.dependent for c in couplings)
                     + " computed from their CoordinateCouplerConstraints")
    return ToolInput(osim, constraints, motion, notes, checked.unit, checked.caveats)


def check_cutoff(cutoff, motion: Table, option: str = "--cutoff"):
    """None, or a cutoff frequency strictly between 0 and the motion's Nyquist frequency (one line otherwise)."""
    if cutoff is None:
        return None
    nyquist = 0.5 / float(np.median(np.diff(motion.time)))
    if not (np.isfinite(cutoff) and 0 < cutoff < nyquist):
        raise TrajoptInputError(f"{option} {cutoff:g}: the low-pass cutoff must be > 0 Hz and below the motion's "
                                f"Nyquist frequency {nyquist:.4g} Hz ({motion.source or 'motion'})")
    return float(cutoff)


def add_model_and_motion(parser, loads: bool = True) -> None:
    """The arguments every tool starts with: the model, the motion and (optionally) the external loads."""
    parser.add_argument("model", help="the .osim model")
    parser.add_argument("motion", help="coordinates file (.mot/.sto; degrees or radians as its header says)")
    if loads:
        parser.add_argument("--external-loads", metavar="XML",
                            help="OpenSim ExternalLoads .xml (e.g. ground reactions)")
        add_forces_option(parser)


def add_forces_option(parser) -> None:
    parser.add_argument("--forces", metavar="XML", help="ForceSet .xml whose ExpressionBasedCoordinateForces are added "
                                                        "to the model (e.g. passive joint moments)")


def forces_operators(args) -> list:
    """The model operator that adds ``--forces`` (none without it)."""
    return [AddExpressionForces(args.forces)] if getattr(args, "forces", None) else []


def output_folder(path) -> Path:
    """``--out`` as a created folder (emptied of an earlier trajopt run's files), or one line saying why it
    cannot be (a file name among them: ``trajopt.edge.cli.options.out_folder``)."""
    return fresh_output(out_folder(path, create=False))


class Phases:
    """Progress of a command: a line when each phase starts (time since the run began), flushed at once, so no
    phase runs silently; ``seconds`` keeps each phase's wall time and ``total()`` the run's, for the summary."""

    def __init__(self, prog: str, stream=None):
        self.prog = prog
        self.stream = stream
        self.started = time.perf_counter()
        self.seconds: dict[str, float] = {}

    def total(self) -> float:
        return time.perf_counter() - self.started

    @contextlib.contextmanager
    def phase(self, name: str, detail: str = ""):
        """Announce phase ``name`` (``detail``: what it works on, printed only) and time it."""
        print(f"{self.prog} [{self.total():7.1f} s] {name}{': ' + detail if detail else ''} ...",
              file=self.stream or sys.stdout, flush=True)
        begun = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - begun
        raise_if_interrupted()  # a Ctrl-C a CasADi call swallowed during the phase

    def describe(self) -> str:
        """'X s for the whole run (phase a s, phase b s, ...)' for summary.md."""
        parts = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self.seconds.items())
        return f"{self.total():.1f} s for the whole run ({parts})"
