"""A time series with labelled columns: the type tables are read into (``trajopt.model.io``) and solutions are
returned as (``trajopt.core.ocp.Solution.table``). Numbers only; reading and writing files is ``trajopt.model.io``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

import numpy as np

from trajopt.errors import MotionFileError


@dataclass(frozen=True)
class Table:
    """A time series: ``time`` (n,), ``labels`` (m column names), ``data`` (n, m), header metadata.

    ``in_degrees`` says whether rotational columns hold degrees; ``metadata`` keeps the header's
    key/value pairs as strings; ``source`` is the file the table was read from (if any).
    """

    time: np.ndarray
    labels: tuple[str, ...]
    data: np.ndarray
    in_degrees: bool = False
    name: str = ""
    metadata: Mapping[str, str] = field(default_factory=dict)
    source: str = ""

    def __post_init__(self):
        time = np.array(self.time, dtype=float).reshape(-1)
        data = np.array(self.data, dtype=float).reshape(time.size, -1) if time.size else np.zeros((0, len(self.labels)))
        if data.shape[1] != len(self.labels):
            raise MotionFileError(
                f"{self._where()}: {len(self.labels)} column labels but data has {data.shape[1]} columns"
            )
        time.setflags(write=False)
        data.setflags(write=False)
        object.__setattr__(self, "time", time)
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "labels", tuple(self.labels))
        object.__setattr__(self, "metadata", dict(self.metadata))

    def _where(self) -> str:
        return self.source or f"table '{self.name}'"

    @property
    def num_frames(self) -> int:
        return self.time.size

    def column(self, label: str) -> np.ndarray:
        """The column named ``label``; unknown labels raise ``MotionFileError``."""
        return self.data[:, self._index(label)]

    def select(self, labels: Iterable[str]) -> "Table":
        """A table with only ``labels`` (in that order); unknown labels raise ``MotionFileError``."""
        labels = tuple(labels)
        columns = [self._index(label) for label in labels]
        return Table(self.time, labels, self.data[:, columns], self.in_degrees, self.name, self.metadata, self.source)

    def _index(self, label: str) -> int:
        try:
            return self.labels.index(label)
        except ValueError:
            raise MotionFileError(
                f"{self._where()}: no column '{label}' (columns: {', '.join(self.labels)})"
            ) from None
