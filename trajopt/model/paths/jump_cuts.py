"""Length-jump and moment-arm kink surfaces of a muscle path, found without being told where: the cuts
``fit_cell_tree`` splits along.

A wrap object that switches sides makes a muscle's length jump across a surface of its coordinate box, which may
end inside the box where the jump shrinks to 0 (walk3d's psoas, iliacus and gluteus maximus over the three hip
coordinates). ``jump_cuts`` scans lines along each coordinate the muscle crosses through a grid of the others
(``domain_pieces.length_jumps`` on a lengths callable, e.g. trajopt's geometric path of the model, equal to
OpenSim's lengths), measures each jump's size and sign, and keeps as a surface every (coordinate, sign) whose
jumps between ``size`` and ``pocket`` are crossed by at least ``min_fraction`` of the lines; the surface is fitted
as that coordinate = v(the others) of the lowest degree that follows them. The same surface seen from lines along
another coordinate is dropped when the jump points lie on a surface already kept (the coordinate whose lines
cross it most is kept). Jumps of ``pocket`` or more (walk3d glmax1's pockets: 0.22 m longer paths in 0.1 % of
its hip box, the wrap taking the other way round, two jumps of opposite sign a few degrees apart) are no
surface: they are counted in the report, not cut. ``kink_cuts`` finds, the same way, the surfaces where the
moment arm jumps while the length does not (a wrap engaging: walk3d glmax2's hip flexion 104-119 deg, recfem's
patella wrap moving with the hip), which a polynomial smooths over as it smooths a jump.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trajopt.model.paths.domain_pieces import Cut, length_jumps, length_kinks
from trajopt.model.paths.fitting import monomial_exponents, monomials

KINK_STEP = 1e-4  # rad or m: a kink's moment-arm change is measured between slopes this far either side


@dataclass(frozen=True)
class JumpSurface:
    """A kept surface: its ``cut``, the jump sizes along it (m, signed), how many scanned lines cross it
    (``lines`` of ``scanned``) and the largest distance of its jump points from the cut (units of the cut's
    coordinate)."""

    cut: Cut
    smallest: float
    largest: float
    lines: int
    scanned: int
    distance: float


@dataclass(frozen=True)
class JumpScan:
    """What ``jump_cuts`` found for one muscle: the kept ``surfaces`` (their cuts in order) and ``pockets``,
    the number of scanned lines crossing a jump of ``pocket`` m or more (of ``scanned`` lines in all); or
    ``kink_cuts`` (``kind`` "kink", sizes the moment-arm changes)."""

    surfaces: tuple[JumpSurface, ...]
    pockets: int
    scanned: int
    kind: str = "jump"

    @property
    def cuts(self) -> tuple[Cut, ...]:
        return tuple(s.cut for s in self.surfaces)

    def describe(self) -> str:
        parts = [f"{s.cut.coordinate} {'+' if s.largest > 0 else '-'}{abs(s.smallest) * 1e3:.1f}.."
                 f"{abs(s.largest) * 1e3:.{1 if abs(s.largest) < 0.01 else 0}f} mm "
                 f"({s.lines}/{s.scanned} lines, within "
                 f"{np.rad2deg(s.distance):.2f} deg)" for s in self.surfaces]
        if self.pockets:
            parts.append(f"pockets on {self.pockets}/{self.scanned} lines")
        return "; ".join(parts) or f"no {self.kind} surface"


def _grid_lines(coordinates, coordinate: str, ranges: dict, lines: int, step: float) -> np.ndarray:
    """Lines along ``coordinate`` (points ``step`` apart) through a grid of the other coordinates' ranges: at most
    about ``lines`` lines in all, at most 25 per other coordinate."""
    column = coordinates.index(coordinate)
    others = [c for c in coordinates if c != coordinate]
    low, high = ranges[coordinate]
    per = min(max(int(round(lines ** (1.0 / len(others)))), 2), 25) if others else 1
    nodes = np.meshgrid(*[np.linspace(*ranges[c], per) for c in others], indexing="ij")
    grid = np.zeros((per ** len(others), int(np.ceil((high - low) / step)) + 1, len(coordinates)))
    grid[:, :, column] = np.linspace(low, high, grid.shape[1])[None, :]
    for k, c in enumerate(others):
        grid[:, :, coordinates.index(c)] = nodes[k].ravel()[:, None]
    return grid


def _surface(points, coordinates, coordinate: str, max_degree: int, tolerance: float, label: str
             ) -> tuple[Cut, float]:
    """``coordinate`` = v(others) through ``points``, of the lowest degree within ``tolerance``."""
    column = coordinates.index(coordinate)
    others = tuple(c for c in coordinates if c != coordinate)
    if not others:  # a muscle crossing one coordinate: the plane through its jump point
        value = float(np.mean(points[:, column]))
        return Cut.at(coordinate, value, label.strip()), float(np.max(np.abs(points[:, column] - value)))
    x = points[:, [coordinates.index(c) for c in others]]
    degree, exponents, coefficients, error = 0, monomial_exponents(len(others), 0), np.array([np.mean(
        points[:, column])]), float(np.max(np.abs(points[:, column] - np.mean(points[:, column]))))
    while error > tolerance and others and degree < max_degree:
        degree += 1
        candidate = monomial_exponents(len(others), degree)
        if len(candidate) > len(points) // 2:
            break
        exponents = candidate
        coefficients = np.linalg.lstsq(monomials(x, exponents), points[:, column], rcond=None)[0]
        error = float(np.max(np.abs(monomials(x, exponents) @ coefficients - points[:, column])))
    return Cut(coordinate, others, tuple(tuple(int(e) for e in row) for row in exponents),
               tuple(float(c) for c in coefficients), label.strip()), error


def _layers(values: np.ndarray, keep: np.ndarray, gap: float) -> list[np.ndarray]:
    """The ``keep`` jump points split where their ``values`` along the scanned coordinate leave a gap wider than
    ``gap``: surfaces of one sign lying apart (arm26 TRIlong's wrap switches at 41.6 and 70.8 deg shoulder
    elevation) are fitted apart; one slanted surface spans its values without such gaps."""
    rows = np.flatnonzero(keep)
    rows = rows[np.argsort(values[rows])]
    parts = np.split(rows, np.flatnonzero(np.diff(values[rows]) > gap) + 1) if len(rows) else []
    return [np.isin(np.arange(len(values)), part) for part in parts]


def _points_by_line(found: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The points ``length_jumps`` / ``length_kinks`` found on each line, stacked, and each point's line."""
    return np.vstack(found), np.concatenate([np.full(len(points), i) for i, points in enumerate(found)]).astype(int)


def _kept_surfaces(candidates, coordinates, max_degree: int, tolerance: float, same: float, label: str,
                   known=(), within: float = np.inf) -> list[JumpSurface]:
    """The surfaces of ``candidates`` (crossing lines, scanned lines, coordinate, points, signed sizes), most
    crossed first: a candidate whose points lie mostly (half or more) within ``same`` of a kept surface or of a
    ``known`` cut is the same surface seen along another coordinate and dropped; each kept one is fitted as in
    ``_surface`` and kept only when its points lie ``within`` of it."""
    surfaces = []
    for crossing, total, coordinate, points, sizes in sorted(candidates, key=lambda c: -c[0]):
        seen = np.zeros(len(points), dtype=bool)
        for cut in (*known, *(surface.cut for surface in surfaces)):
            seen |= np.abs(points[:, coordinates.index(cut.coordinate)] - cut.value(points, coordinates)) <= same
        if len(coordinates) > 1 and seen.mean() >= 0.5:
            continue
        cut, distance = _surface(points, coordinates, coordinate, max_degree, tolerance, label)
        if distance <= within:
            order = np.argsort(np.abs(sizes))
            surfaces.append(JumpSurface(cut, float(sizes[order[0]]), float(sizes[order[-1]]), crossing, total,
                                        distance))
    return surfaces


def jump_cuts(lengths, coordinates, ranges: dict, lines: int = 625, step: float = np.deg2rad(0.5),
              size: float = 5e-4, pocket: float = 0.1, min_fraction: float = 0.02, max_degree: int = 6,
              tolerance: float = np.deg2rad(0.05), same: float = np.deg2rad(5.0), source: str = "") -> JumpScan:
    """The length-jump surfaces of one muscle over the box ``ranges`` (coordinate -> (low, high)) of its
    ``coordinates``; ``lengths`` maps configurations (samples x ``coordinates``) to lengths (m). Along each
    coordinate: about ``lines`` lines (``step`` apart points); a (coordinate, sign) is a surface when at least
    ``min_fraction`` of its lines cross a jump of that sign between ``size`` and ``pocket`` (m), its jump points
split into layers where they leave gaps wider than ``same`` along the coordinate (``_layers``); each fitted as in
    ``_surface`` (lowest degree within ``tolerance``, at most ``max_degree``). Candidates are taken in order of
    crossing lines; one whose jump points lie mostly (half or more) within ``same`` of a kept surface is the
    same surface seen along another coordinate and dropped. See the module docstring."""
    coordinates = tuple(coordinates)
    candidates, pocket_lines, scanned = [], 0, 0
    for coordinate in coordinates:
        grid = _grid_lines(coordinates, coordinate, ranges, lines, step)
        points, owner = _points_by_line(length_jumps(lengths, grid))
        if len(points) == 0:
            continue
        offset = np.zeros(len(coordinates))
        offset[coordinates.index(coordinate)] = 1e-7
        jumps = np.asarray(lengths(points + offset)) - np.asarray(lengths(points - offset))
        large = np.abs(jumps) >= pocket
        if len(np.unique(owner[large])) > pocket_lines:
            pocket_lines, scanned = len(np.unique(owner[large])), len(grid)
        candidates += _signed_layers(coordinates, coordinate, grid, owner, points, jumps, ~large, size,
                                     min_fraction, same)
    surfaces = _kept_surfaces(candidates, coordinates, max_degree, tolerance, same, f"length jump {source}")
    return JumpScan(tuple(surfaces), pocket_lines, scanned or len(_grid_lines(coordinates, coordinates[0], ranges,
                                                                               lines, step)))


def _signed_layers(coordinates, coordinate: str, grid, owner, points, sizes, usable, size: float,
                   min_fraction: float, same: float, least: int = 1) -> list:
    """Candidates (crossing lines, lines, coordinate, points, sizes) of each sign and layer (``_layers``) of the
    ``usable`` points along ``coordinate`` whose ``sizes`` exceed ``size``, crossed by ``min_fraction`` of the
    ``grid``'s lines and by ``least`` lines or more (``owner``: each point's line)."""
    candidates = []
    for sign in (1.0, -1.0):
        keep = (sizes * sign > size) & usable
        for layer in _layers(points[:, coordinates.index(coordinate)], keep, same):
            crossing = len(np.unique(owner[layer]))
            if crossing >= max(min_fraction * len(grid), least):
                candidates.append((crossing, len(grid), coordinate, points[layer], sizes[layer]))
    return candidates


def kink_cuts(lengths, coordinates, ranges: dict, lines: int = 625, step: float = np.deg2rad(0.5),
              size: float = 2e-3, min_fraction: float = 0.02, max_degree: int = 6,
              tolerance: float = np.deg2rad(0.05), within: float = np.deg2rad(0.5), same: float = np.deg2rad(5.0),
              known=(), source: str = "") -> JumpScan:
    """The moment-arm kink surfaces of one muscle, found as ``jump_cuts`` finds length jumps: along each
    coordinate's lines, where the moment arm about it changes by more than ``size`` (m) while the length does
    not jump (``domain_pieces.length_kinks``: walk3d glmax2's wrap at 104-119 deg hip flexion, recfem's patella
    wrap at 129-139 deg knee moving with the hip). A (coordinate, sign, layer) needs, over several coordinates,
    more crossing lines than coordinates (a kink on 1 of a coarse scan's 4 lines locates no surface: walk3d
    gaslat's, scanned on 4 lines per coordinate). Its surface is kept when its kink points lie ``within`` of it
    (walk3d iliacus' kinks above 60 deg flexion lie up to 0.98 deg off the best degree-6 surface: no surface a
    cell could split along); candidates within ``same`` of a kept surface or of the ``known`` cuts (the muscle's
    jump surfaces) are dropped. The surfaces' sizes are the moment-arm changes (m)."""
    coordinates = tuple(coordinates)
    candidates, scanned = [], 0
    for coordinate in coordinates:
        column = coordinates.index(coordinate)
        grid = _grid_lines(coordinates, coordinate, ranges, lines, step)
        scanned = max(scanned, len(grid))
        points, owner = _points_by_line(length_kinks(lengths, grid, column, size))
        if len(points) == 0:
            continue
        offset = np.zeros(len(coordinates))
        offset[column] = KINK_STEP
        sampled = [np.asarray(lengths(points + k * offset), dtype=float) for k in (-2, -1, 1, 2)]
        # the moment arm after minus before
        changes = -((sampled[3] - sampled[2]) - (sampled[1] - sampled[0])) / KINK_STEP
        candidates += _signed_layers(coordinates, coordinate, grid, owner, points, changes,
                                     np.ones(len(points), dtype=bool), size, min_fraction, same,
                                     1 if len(coordinates) == 1 else len(coordinates) + 1)
    surfaces = _kept_surfaces(candidates, coordinates, max_degree, tolerance, same, f"moment-arm kink {source}",
                              known, within)
    return JumpScan(tuple(surfaces), 0, scanned, "kink")


def scan_configurations(coordinates, ranges: dict, lines: int = 625, step: float = np.deg2rad(0.5)) -> int:
    """How many configurations ``jump_cuts`` evaluates before refining the jumps it finds (its cost)."""
    coordinates = tuple(coordinates)
    return sum(int(np.prod(_grid_lines(coordinates, c, ranges, lines, step).shape[:2])) for c in coordinates)
