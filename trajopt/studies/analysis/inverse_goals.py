"""Extra goals beyond Moco's effort: electromyography tracking, in the inverse, prediction and tracking.

A goal here is a small object with ``goal(variables) -> ocp.Goal``, given a built ``MuscleDrivenInverse``'s symbols
(``MuscleInverseVariables``), so it can refer to excitations, activations or muscle forces, and
``motion_goal(built) -> ocp.Goal`` on a ``trajopt.studies.prediction.MuscleDrivenProblem`` (as
``trajopt.studies.analysis.reaction_goal.JointReactionGoal``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.model.io.motion_units import check_normalized_emg
from trajopt.core.ocp import LinearInterpolation, Tracking


@dataclass(frozen=True)
class EmgTracking:
    """Moco's ``MocoControlTrackingGoal`` on muscle excitations: weight · ∫ Σ (e_m − s_c EMG_c(t))² dt.

    ``emg``: a ``trajopt.model.io.Table`` of normalized EMG; ``columns``: muscle name -> EMG column tracked by its
    excitation; ``scales``: EMG column -> factor (e.g. peak levels from Perry and Burnfield 2010, as Moco's
    example: soleus 0.77, gastrocnemius 0.87, tibialis_anterior 0.37); ``weight``: Moco's example uses 50.
    The EMG is interpolated linearly in time.
    """

    emg: object
    columns: dict
    scales: dict = field(default_factory=dict)
    weight: float = 50.0

    def __post_init__(self):
        where = getattr(self.emg, "source", "") or "EMG table"
        missing = sorted({c for c in self.columns.values() if c not in self.emg.labels})
        if missing:
            raise TrajoptInputError(f"{where}: no EMG column {missing} (columns: {list(self.emg.labels)})")
        unknown = sorted(set(self.scales) - set(self.columns.values()))
        if unknown:
            raise TrajoptInputError(f"{where}: EMG scale given for column(s) {unknown} that no muscle tracks")
        if not (np.isfinite(self.weight) and self.weight > 0):
            raise TrajoptInputError(f"EmgTracking weight must be a finite number > 0, got {self.weight!r}")
        check_normalized_emg(self.emg, sorted(set(self.columns.values())))

    def reference(self, muscle: str) -> np.ndarray:
        """The scaled EMG the muscle's excitation tracks, at the table's times."""
        column = self.columns[muscle]
        return self.emg.column(column) * float(self.scales.get(column, 1.0))

    def rows(self, muscle_names) -> list[int]:
        """The tracked muscles' positions in ``muscle_names`` (the model's order)."""
        names = list(muscle_names)
        unknown = sorted(set(self.columns) - set(names))
        if unknown:
            raise TrajoptInputError(f"EmgTracking: muscle(s) {unknown} are not in the model")
        return [names.index(m) for m in self.columns]

    def goal(self, variables):
        """The goal on a built ``MuscleDrivenInverse``: its excitations track the scaled EMG."""
        rows = self.rows(variables.muscle_names)
        reference = np.column_stack([self.reference(m) for m in self.columns])
        # Only the samples around the grid enter the (piecewise-linear) reference: same values, smaller graph.
        times = np.asarray(self.emg.time)
        grid = variables.data.times
        first = max(int(np.searchsorted(times, grid[0], side="right")) - 1, 0)
        last = min(int(np.searchsorted(times, grid[-1], side="left")) + 1, times.size)
        return Tracking(variables.excitations[rows], LinearInterpolation(times[first:last], reference[first:last]),
                        weights=self.weight)

    def motion_goal(self, built) -> Tracking:
        """The goal on a ``trajopt.studies.prediction.MuscleDrivenProblem`` (prediction,
        ``MuscleDrivenTracking(goals=...)``): its muscle controls (excitations, or activations when they are the
        controls) track the scaled EMG."""
        rows = self.rows(built.model.muscle_names)
        reference = np.column_stack([self.reference(m) for m in self.columns])
        return Tracking(built.muscle_controls[rows], LinearInterpolation(self.emg.time, reference),
                        weights=self.weight)
