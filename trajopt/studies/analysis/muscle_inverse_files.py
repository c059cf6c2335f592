"""A muscle-driven inverse from files: the model processed by its operators, the coordinates checked against it,
external loads and muscle paths read, EMG columns matched to muscles; what ``trajopt muscle-inverse`` and the
batch tasks build their study with."""

from __future__ import annotations

from trajopt.studies.analysis.couplers import CouplerConstraints
from trajopt.studies.analysis.external_loads_file import read_external_loads
from trajopt.studies.analysis.inverse_goals import EmgTracking
from trajopt.studies.analysis.inverse_tendons import RigidTendons
from trajopt.studies.analysis.muscle_inverse import MuscleDrivenInverse
from trajopt.errors import TrajoptInputError
from trajopt.model.io import MotionProcessor, read_table
from trajopt.model.io.motion_units import CheckedMotion, read_checked_motion, rotational_ranges, translational_ranges
from trajopt.model.musculoskeletal import MusculoskeletalModel
from trajopt.model.musculoskeletal.model_forces import model_applied_forces
from trajopt.model.musculoskeletal.operators import load_processed
from trajopt.model.paths.files import read_paths


def load_inverse(model_file, coordinates_file, operators=(), external_loads=None, paths=None, window=None,
                 tendons=RigidTendons(), goals=()) -> MuscleDrivenInverse:
    """A ``MuscleDrivenInverse`` from files: the model after ``operators``, its couplers as constraints (dependent
    coordinates assembled from the motion), external loads applied, paths from ``read_paths``."""
    return load_checked_inverse(model_file, coordinates_file, operators, external_loads, paths, window, tendons,
                                goals)[0]


def load_checked_inverse(model_file, coordinates_file, operators=(), external_loads=None, paths=None, window=None,
                         tendons=RigidTendons(), goals=()) -> tuple[MuscleDrivenInverse, CheckedMotion]:
    """``load_inverse`` and the motion as read (``trajopt.model.io.motion_units``: the unit its angles were read in and
    caveats about it; implausible angles and non-finite values are refused)."""
    osim, couplings = load_processed(model_file, operators)
    if osim.spec.path_actuators:
        raise TrajoptInputError(f"{osim.spec.file}: PathActuator '{osim.spec.path_actuators[0].name}': the "
                                f"muscle-driven inverse takes muscles and coordinate actuators only (use "
                                "trajopt.studies.prediction.muscle_driven_problem(path_actuators=...) for path "
                                "actuators)")
    # before the paths: bad data fail fast
    checked = read_checked_motion(coordinates_file, rotational_ranges(osim), translations=translational_ranges(osim))
    model = MusculoskeletalModel(osim, read_paths(paths, osim))
    constraints = CouplerConstraints(osim.multibody, couplings)
    motion = MotionProcessor(constraints.assemble(checked.table), window=window)
    loads = None if external_loads is None else read_external_loads(external_loads)
    inverse = MuscleDrivenInverse(model, motion, external_loads=loads, applied_forces=model_applied_forces(osim),
                                  constraints=constraints if couplings else None, tendons=tendons, goals=list(goals))
    return inverse, checked


def emg_goal(path, muscles, weight: float) -> EmgTracking:
    """Track every EMG column named after a model muscle with that muscle's excitation."""
    emg = read_table(path)
    columns = {m: m for m in muscles if m in emg.labels}
    if not columns:
        raise TrajoptInputError(f"{path}: no EMG column is named after a muscle of the model (columns: "
                                f"{list(emg.labels)})")
    return EmgTracking(emg, columns, weight=weight)
