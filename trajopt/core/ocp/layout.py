"""VariableLayout: the one place that owns the flat NLP decision vector.

Each block (states on the grid, controls, parameters, times) is declared once with its shape, bounds,
initial guess and affine scaling; the layout hands back the physical MX expression of the block and
later unpacks a numeric flat vector into named numpy arrays. Nobody else indexes the flat vector.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np


@dataclass(frozen=True)
class Block:
    """A (rows x columns) block of the decision vector, stored column-major, scaled as scale*w + offset."""

    name: str
    rows: int
    columns: int
    start: int
    lower: np.ndarray  # physical units, shape (rows, columns)
    upper: np.ndarray
    guess: np.ndarray
    scale: np.ndarray
    offset: np.ndarray

    @property
    def size(self) -> int:
        return self.rows * self.columns

    @property
    def stop(self) -> int:
        return self.start + self.size


def _as_grid(value, rows: int, columns: int) -> np.ndarray:
    """Broadcast a scalar, a per-row vector or a full matrix to (rows, columns) floats."""
    array = np.asarray(value, dtype=float)
    if array.ndim == 1 and array.size == rows:
        array = array[:, None]
    return np.array(np.broadcast_to(array, (rows, columns)), dtype=float)


def scale_from_bounds(lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scale = range, offset = midpoint where both bounds are finite and distinct; identity elsewhere."""
    finite = np.isfinite(lower) & np.isfinite(upper) & (upper > lower)
    scale, offset = np.ones_like(lower), np.zeros_like(lower)
    scale[finite] = upper[finite] - lower[finite]
    offset[finite] = 0.5 * (upper[finite] + lower[finite])
    return scale, offset


class VariableLayout:
    """Flat decision vector w of an NLP, with bounds, guess and scaling per named block."""

    def __init__(self, scale_from_bounds_enabled: bool = True):
        self._blocks: dict[str, Block] = {}
        self._size = 0
        self._scale_enabled = scale_from_bounds_enabled
        self.w = None  # MX symbol, created by `finalize`

    @property
    def size(self) -> int:
        return self._size

    @property
    def blocks(self) -> dict[str, Block]:
        return dict(self._blocks)

    def add(self, name: str, rows: int, columns: int, lower, upper, guess, scale=None) -> None:
        """Declare a block; bounds/guess/scale broadcast from scalars or per-row vectors."""
        lower = _as_grid(lower, rows, columns)
        upper = _as_grid(upper, rows, columns)
        guess = _as_grid(guess, rows, columns)
        if scale is not None:
            scale = _as_grid(scale, rows, columns)
            offset = np.zeros((rows, columns))
        elif self._scale_enabled:
            scale, offset = scale_from_bounds(lower, upper)
        else:
            scale, offset = np.ones((rows, columns)), np.zeros((rows, columns))
        self._blocks[name] = Block(name, rows, columns, self._size, lower, upper, guess, scale, offset)
        self._size += rows * columns

    def finalize(self) -> ca.MX:
        """Create the flat MX symbol (scaled units) once all blocks are declared."""
        self.w = ca.MX.sym("w", self._size)
        return self.w

    def expression(self, name: str) -> ca.MX:
        """Physical-unit MX matrix of a block, as a function of the scaled flat vector."""
        block = self._blocks[name]
        scaled = ca.reshape(self.w[block.start:block.stop], block.rows, block.columns)
        return scaled * ca.DM(block.scale) + ca.DM(block.offset)

    def _flatten(self, attribute: str, scaled: bool) -> np.ndarray:
        out = np.zeros(self._size)
        for block in self._blocks.values():
            value = getattr(block, attribute)
            if scaled:
                value = (value - block.offset) / block.scale
            out[block.start:block.stop] = value.flatten(order="F")
        return out

    def lower(self) -> np.ndarray:
        return self._flatten("lower", scaled=True)

    def upper(self) -> np.ndarray:
        return self._flatten("upper", scaled=True)

    def guess(self) -> np.ndarray:
        return self._flatten("guess", scaled=True)

    def pack(self, values: dict[str, np.ndarray]) -> np.ndarray:
        """Scaled flat vector from physical block values (missing blocks keep their declared guess)."""
        out = self.guess()
        for name, value in values.items():
            block = self._blocks[name]
            value = _as_grid(value, block.rows, block.columns)
            out[block.start:block.stop] = ((value - block.offset) / block.scale).flatten(order="F")
        return out

    def unpack(self, w_scaled) -> dict[str, np.ndarray]:
        """Physical (rows, columns) arrays of every block from a scaled flat vector."""
        w_scaled = np.asarray(w_scaled, dtype=float).flatten()
        out = {}
        for block in self._blocks.values():
            scaled = w_scaled[block.start:block.stop].reshape((block.rows, block.columns), order="F")
            out[block.name] = scaled * block.scale + block.offset
        return out
