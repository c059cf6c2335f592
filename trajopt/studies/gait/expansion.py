"""A full gait cycle from a half cycle: the half cycle followed by its mirror image.

The mirror image of a solution's table (``Solution.table()``: states, controls, algebraics) maps each
variable by the ``BilateralSymmetry`` (``symmetry.for_variable``); the walking direction's coordinate is shifted by
the half cycle's displacement and the time by its duration. The second half starts after the first frame (the
half cycle's last frame is the mirror image's first when the ends are symmetric).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import block_diag

from trajopt.errors import TrajoptInputError
from trajopt.table import Table


def table_mirror(built, symmetry, labels=None) -> np.ndarray:
    """Signed permutation of ``Solution.table()``'s columns for a ``MuscleDrivenProblem`` (``labels``: keep only
    these columns, e.g. a table without the accelerations)."""
    compiled = built.problem.compile()
    blocks, all_labels = [], []
    for variable in (*compiled.states, *compiled.controls, *compiled.algebraics):
        blocks.append(symmetry.for_variable(variable.name))
        all_labels += list(variable.labels)
    matrix = block_diag(*blocks)
    if labels is None:
        return matrix
    keep = [all_labels.index(label) for label in labels]
    matrix = matrix[np.ix_(keep, keep)]
    if not np.allclose(np.abs(matrix).sum(axis=1), 1.0):
        raise TrajoptInputError("table mirror: the selected columns are not closed under the mirror image")
    return matrix


def full_cycle(half: Table, mirror: np.ndarray, progression: str, name: str = "full_cycle") -> Table:
    """Half cycle then its mirror image (``mirror``: signed permutation of the columns) with the column
    ``progression`` (e.g. ``/jointset/ground_pelvis/pelvis_tx/value``) shifted by the half cycle's displacement."""
    column = half.labels.index(progression)
    second = half.data[1:] @ np.asarray(mirror).T
    second[:, column] += half.data[-1, column] - half.data[0, column]
    duration = half.time[-1] - half.time[0]
    return Table(np.concatenate([half.time, half.time[1:] + duration]), half.labels,
                 np.vstack([half.data, second]), name=name, metadata=half.metadata)
