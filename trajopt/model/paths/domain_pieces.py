"""Polynomial paths piecewise over the coordinate domain: cells between cut surfaces, one polynomial per cell.

A single polynomial cannot follow a muscle length that jumps or kinks where OpenSim's path changes: a
ConditionalPathPoint that joins the path at a coordinate value (2D_gait's rect_fem and vasti at the knee), a
wrap object that starts or stops wrapping (arm26's BIClong and TRIlong at the shoulder). Here the coordinate box
is cut along such surfaces and each cell gets its own stepwise polynomial (``trajopt.model.paths.fitting``).

A ``Cut`` is the surface q_c = v(q_others), v a polynomial in other coordinates of the muscle (a constant for a
conditional point's range bound). A configuration is above a cut when q_c >= v. The cuts of one muscle share
their coordinate and must not cross inside the domain (layers along that coordinate): cell k is "above exactly
k cuts", so k cuts give k + 1 polynomials. Lengths and moment arms (−∂l/∂q of the cell's polynomial) are
discontinuous across a cut, as OpenSim's path is: fine for frame-by-frame analyses and for motions that stay
on one side, a kink or jump for gradient-based optimal control that crosses it.

Where the cuts come from: ``conditional_point_cuts`` reads a conditional point's range bounds from the model;
``locate_jump_cuts`` finds the length jumps (and cusps) along lines of one coordinate (a scan, then a
refinement on any lengths callable; ``geometric_jump_cuts``: the model's geometric paths) and fits each jump's
points as a polynomial in the other coordinates.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from functools import cached_property

import casadi
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.model.osim.spec import ConditionalPathPoint
from trajopt.model.paths.domain import PathDomain
from trajopt.model.paths.fitting import (StepwiseSettings, crossed_coordinates, fit_polynomial_path, monomial_exponents,
                                         monomials)
from trajopt.model.paths.geometric import CONDITIONAL_RANGE_TOLERANCE, geometric_path
from trajopt.model.paths.polynomial import PathsByMuscle, PolynomialPath, PolynomialPaths, polynomial_value

FORMAT = "trajopt.domain_piecewise_paths/1"


@dataclass(frozen=True)
class Cut:
    """The surface ``coordinate`` = Σ_k c_k Π_j others_j^e_kj (a constant when ``others`` is empty)."""

    coordinate: str
    others: tuple[str, ...] = ()
    exponents: tuple[tuple[int, ...], ...] = ((),)
    coefficients: tuple[float, ...] = (0.0,)
    source: str = ""

    def __post_init__(self):
        if len(self.exponents) != len(self.coefficients) or any(len(e) != len(self.others) for e in self.exponents):
            raise TrajoptInputError(f"cut on '{self.coordinate}': exponents {self.exponents} do not match "
                                    f"coefficients {self.coefficients} and coordinates {self.others}")
        if self.coordinate in self.others:
            raise TrajoptInputError(f"cut on '{self.coordinate}' cannot depend on '{self.coordinate}'")

    @classmethod
    def at(cls, coordinate: str, value: float, source: str = "") -> Cut:
        """The plane q_coordinate = value."""
        return cls(coordinate, (), ((),), (float(value),), source)

    @property
    def coordinates(self) -> tuple[str, ...]:
        return (self.coordinate, *self.others)

    def value(self, q: np.ndarray, names) -> np.ndarray:
        """v(q_others) at configurations ``q`` (samples x ``names``)."""
        q = np.atleast_2d(np.asarray(q, dtype=float))
        names = tuple(names)
        others = q[:, [names.index(c) for c in self.others]] if self.others else np.zeros((len(q), 0))
        return monomials(others, np.array(self.exponents, dtype=int).reshape(len(self.exponents), -1)) @ np.array(
            self.coefficients)

    def above(self, q: np.ndarray, names) -> np.ndarray:
        """True where q_coordinate >= v(q_others)."""
        q = np.atleast_2d(np.asarray(q, dtype=float))
        return q[:, tuple(names).index(self.coordinate)] >= self.value(q, names)

    def above_symbolic(self, q, names):
        """1 where q_coordinate >= v(q_others) for a symbolic column ``q`` over ``names``."""
        names = tuple(names)
        others = casadi.vertcat(*[q[names.index(c)] for c in self.others]) if self.others else casadi.SX(0, 1)
        return q[names.index(self.coordinate)] >= polynomial_value(others, self.exponents, self.coefficients)

    def to_json(self) -> dict:
        return {"coordinate": self.coordinate, "others": list(self.others),
                "exponents": [list(map(int, e)) for e in self.exponents],
                "coefficients": [float(c) for c in self.coefficients], "source": self.source}

    @classmethod
    def from_json(cls, data: dict, source: str = "<dict>") -> Cut:
        try:
            return cls(str(data["coordinate"]), tuple(map(str, data["others"])),
                       tuple(tuple(int(e) for e in row) for row in data["exponents"]),
                       tuple(float(c) for c in data["coefficients"]), str(data.get("source", "")))
        except (KeyError, TypeError, ValueError) as error:
            raise TrajoptInputError(f"{source}: cut {data!r} is malformed: {error}") from None


class PolynomialPieces:
    """What a muscle path made of polynomial ``pieces`` over one coordinate box shares (subclasses give
    ``muscle``, ``coordinates``, the field that places the pieces, ``pieces``, and ``cell(q)``, the piece index
    of each configuration)."""

    # The dataclass field between ``coordinates`` and ``pieces`` that says where each piece holds (also its JSON
    # key) and its entries' type: ("cuts", Cut) for layers, ("nodes", CellNode) for a tree.
    PLACEMENT: tuple[str, type]

    def to_json(self) -> dict:
        field, _ = self.PLACEMENT
        return {"muscle": self.muscle, "coordinates": list(self.coordinates),
                field: [entry.to_json() for entry in getattr(self, field)],
                "pieces": [p.to_json() for p in self.pieces]}

    @classmethod
    def from_json(cls, data: dict, source: str = "<dict>"):
        field, entry = cls.PLACEMENT
        try:
            return cls(str(data["muscle"]), tuple(map(str, data["coordinates"])),
                       tuple(entry.from_json(e, source) for e in data[field]),
                       tuple(PolynomialPath.from_json(p, source) for p in data["pieces"]))
        except (KeyError, TypeError) as error:
            raise TrajoptInputError(f"{source}: path entry {data.get('muscle', '?')!r} is malformed: {error}") from None

    def _check_pieces(self) -> None:
        for piece in self.pieces:
            if piece.coordinates != self.coordinates:
                raise TrajoptInputError(f"path '{self.muscle}': a piece has coordinates {piece.coordinates}, "
                                        f"expected {self.coordinates}")

    @property
    def ranges(self) -> tuple[tuple[float, float], ...]:
        return self.pieces[0].ranges

    @property
    def terms(self) -> int:
        return sum(len(p.coefficients) for p in self.pieces)

    def _named_length(self, q: casadi.SX, length: casadi.SX) -> casadi.Function:
        safe = re.sub(r"\W", "_", self.muscle)
        return casadi.Function(f"{safe}_length", [q], [length], ["q"], ["length"])

    def evaluate(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Lengths (samples,) and moment arms −∂l/∂q (samples x coordinates) of each configuration's piece."""
        q = np.atleast_2d(np.asarray(q, dtype=float))
        cells = self.cell(q)
        lengths, arms = np.empty(len(q)), np.empty(q.shape)
        for k, piece in enumerate(self.pieces):
            rows = cells == k
            if rows.any():
                lengths[rows], arms[rows] = piece.evaluate(q[rows])
        return lengths, arms


@dataclass(frozen=True)
class DomainPiecewisePath(PolynomialPieces):
    """One muscle: polynomial ``pieces[k]`` holds where a configuration is above exactly k of ``cuts``."""

    PLACEMENT = ("cuts", Cut)

    muscle: str
    coordinates: tuple[str, ...]
    cuts: tuple[Cut, ...]
    pieces: tuple[PolynomialPath, ...]

    def __post_init__(self):
        if len(self.pieces) != len(self.cuts) + 1:
            raise TrajoptInputError(f"path '{self.muscle}': {len(self.cuts)} cuts need {len(self.cuts) + 1} "
                                    f"pieces, got {len(self.pieces)}")
        for cut in self.cuts:
            missing = [c for c in cut.coordinates if c not in self.coordinates]
            if missing:
                raise TrajoptInputError(f"path '{self.muscle}': cut on '{cut.coordinate}' uses {missing}, not among "
                                        f"its coordinates {list(self.coordinates)}")
        if len({cut.coordinate for cut in self.cuts}) > 1:
            raise TrajoptInputError(f"path '{self.muscle}': its cuts must share one coordinate (layers along it), "
                                    f"got {sorted({cut.coordinate for cut in self.cuts})}")
        self._check_pieces()

    def cell(self, q: np.ndarray) -> np.ndarray:
        """Cell index (number of cuts below the configuration) of each row of ``q`` (samples x coordinates)."""
        q = np.atleast_2d(np.asarray(q, dtype=float))
        return sum((cut.above(q, self.coordinates).astype(int) for cut in self.cuts), np.zeros(len(q), dtype=int))

    @cached_property
    def length_function(self) -> casadi.Function:
        """Named Function q -> length (the polynomial of the cell q lies in)."""
        q = casadi.SX.sym("q", len(self.coordinates))
        cell = 0
        for cut in self.cuts:
            cell = cell + cut.above_symbolic(q, self.coordinates)
        length = polynomial_value(q, self.pieces[-1].exponents, self.pieces[-1].coefficients)
        for k in range(len(self.pieces) - 2, -1, -1):
            piece = self.pieces[k]
            length = casadi.if_else(cell <= k, polynomial_value(q, piece.exponents, piece.coefficients), length)
        return self._named_length(q, length)



class DomainPiecewisePaths(PathsByMuscle):
    """The domain-piecewise paths of a model's muscles (``trajopt.model.musculoskeletal.MusclePaths``)."""

    FORMAT = FORMAT
    DESCRIPTION = "domain-piecewise paths"
    ENTRY = DomainPiecewisePath

    @property
    def domain(self) -> PathDomain:
        """The domain the paths were fitted on (the box of the paths' ranges when none was stored)."""
        if self._domain is not None:
            return self._domain
        return PolynomialPaths([p.pieces[0] for p in self]).domain

    def check_domain(self, q, coordinates, times=None, where: str = "motion") -> None:
        PolynomialPaths([p.pieces[0] for p in self], self.model, self._domain).check_domain(q, coordinates, times,
                                                                                              where)

    def lengths_and_moment_arms_function(self, coordinates: tuple[str, ...] | None = None) -> casadi.Function:
        """Named Function q -> (lengths (muscles), moment_arms (muscles x coordinates)) over ``coordinates``."""
        coordinates = tuple(coordinates or self.coordinates)
        q = casadi.SX.sym("q", len(coordinates))
        lengths = []
        for path in self:
            missing = [c for c in path.coordinates if c not in coordinates]
            if missing:
                raise TrajoptInputError(f"path '{path.muscle}' needs coordinates {missing} not in {list(coordinates)} "
                                        f"(a joint welded, or paths fitted to another model)")
            lengths.append(path.length_function(casadi.vertcat(*[q[coordinates.index(c)] for c in path.coordinates])))
        lengths = casadi.vertcat(*lengths)
        return casadi.Function("lengths_and_moment_arms", [q], [lengths, -casadi.jacobian(lengths, q)], ["q"],
                               ["lengths", "moment_arms"])



def fit_domain_pieces(samples, cuts: dict, settings: StepwiseSettings, ranges: dict | None = None,
                      coordinates: dict | None = None, model: str = "", progress=None, margin: float = 0.0
                      ) -> tuple[DomainPiecewisePaths, dict]:
    """Fit every muscle of ``samples`` (``PathSamples``), cell by cell along ``cuts`` (muscle -> tuple of
    ``Cut``; muscles without cuts get one polynomial). ``coordinates``: muscle -> coordinates (default
    ``crossed_coordinates`` plus the cuts' coordinates); ``ranges``: coordinate -> (low, high) of the domain
    (default: the samples' extent). ``margin`` (units of the cut coordinate): training samples closer than this
    to a cut are left out (beside a cusp, as arm26's BIClong at -78.4 deg shoulder elevation, −∂l/∂q diverges
    and would dominate the least squares). Returns the paths and each muscle's fitting time (s)."""
    paths, seconds = [], {}
    for muscle in samples.muscles:
        muscle_cuts = tuple(cuts.get(muscle, ()))
        names = (coordinates or {}).get(muscle) or crossed_coordinates(samples, muscle)
        extra = [c for cut in muscle_cuts for c in cut.coordinates if c not in names]
        names = tuple(c for c in samples.coordinates if c in set(names) | set(extra))
        columns = samples.columns(names)
        q = samples.q[:, columns]
        lengths, arms = samples.muscle(muscle)
        extent = [(q[:, i].min(), q[:, i].max()) for i in range(len(names))]
        box = [(ranges or {}).get(c, extent[i]) for i, c in enumerate(names)]
        start = time.perf_counter()
        shell = DomainPiecewisePath(muscle, names, muscle_cuts, tuple(
            PolynomialPath(muscle, names, (), (), tuple(box)) for _ in range(len(muscle_cuts) + 1)))
        cells = shell.cell(q)
        kept = np.ones(len(q), dtype=bool)
        for cut in muscle_cuts:
            kept &= np.abs(q[:, names.index(cut.coordinate)] - cut.value(q, names)) >= margin
        pieces = []
        for k in range(len(muscle_cuts) + 1):
            rows = (cells == k) & kept
            if rows.sum() < 2:
                raise TrajoptInputError(f"path '{muscle}': cell {k} of its cuts holds {int(rows.sum())} samples")
            pieces.append(fit_polynomial_path(muscle, names, q[rows], lengths[rows], arms[rows][:, columns],
                                              settings, None, box))
        paths.append(DomainPiecewisePath(muscle, names, muscle_cuts, tuple(pieces)))
        seconds[muscle] = time.perf_counter() - start
        if progress is not None:
            progress(f"fitted {muscle}: {len(pieces)} cells, {paths[-1].terms} terms ({seconds[muscle]:.2f} s)")
    return DomainPiecewisePaths(paths, model), seconds


def conditional_point_cuts(osim_model, muscle: str, ranges: dict, margin: float = 1e-6) -> tuple[Cut, ...]:
    """Planes at the range bounds of ``muscle``'s ConditionalPathPoints that lie inside ``ranges``
    (coordinate -> (low, high)), widened by OpenSim's tolerance (a point is on the path while low - 1e-5 <= q
    <= high + 1e-5), sorted by coordinate and value; coordinates outside ``ranges`` are ignored."""
    values = {}
    for point in osim_model.muscle(muscle).path.points:
        if not isinstance(point, ConditionalPathPoint):
            continue
        name = point.coordinate.split("/")[-1]
        if name not in ranges:
            continue
        low, high = ranges[name]
        for bound, widen in zip(point.range, (-CONDITIONAL_RANGE_TOLERANCE, CONDITIONAL_RANGE_TOLERANCE)):
            if low + margin < bound + widen < high - margin:
                values.setdefault((name, float(bound) + widen), point.name)
    return tuple(Cut.at(name, value, f"ConditionalPathPoint {point} range bound")
                 for (name, value), point in sorted(values.items()))


def model_cuts(osim_model, crossed: dict, domain: PathDomain, along: str | None = None, progress=None) -> dict:
    """Each muscle's cuts (muscle -> tuple of ``Cut``) in the box ``domain`` over its coordinates ``crossed[muscle]``:
    the range bounds of its ConditionalPathPoints, or, for a muscle without any that crosses ``along``, where its
    geometric path's length jumps along that coordinate (``geometric_jump_cuts``)."""
    ranges = {c: tuple(domain.ranges[i]) for i, c in enumerate(domain.coordinates)}
    cuts = {}
    for muscle, names in crossed.items():
        box = {c: ranges[c] for c in names}
        cuts[muscle] = conditional_point_cuts(osim_model, muscle, box)
        if along in names and not cuts[muscle]:
            if progress is not None:
                progress(f"{muscle}: looking for length jumps along {along} ...")
            cuts[muscle] = geometric_jump_cuts(osim_model, muscle, names, along, box)
    return cuts


def heldout_rms(path: DomainPiecewisePath, samples) -> tuple[float, float]:
    """(length, moment-arm) RMS error of ``path`` at ``samples`` (``PathSamples``; configurations whose values are
    not finite left out)."""
    columns = samples.columns(path.coordinates)
    lengths, arms = path.evaluate(samples.q[:, columns])
    true_lengths, true_arms = samples.muscle(path.muscle)
    ok = np.isfinite(true_lengths) & np.all(np.isfinite(true_arms), axis=1)
    return (float(np.sqrt(np.mean((lengths[ok] - true_lengths[ok]) ** 2))),
            float(np.sqrt(np.mean((arms[ok] - true_arms[ok][:, columns]) ** 2))))


def _deviation(differences: np.ndarray) -> np.ndarray:
    """Each length difference minus the median of its (up to four) neighbours along the last axis."""
    n = differences.shape[-1]
    out = np.zeros_like(differences)
    for k in range(n):
        neighbours = [j for j in (k - 2, k - 1, k + 1, k + 2) if 0 <= j < n]
        out[..., k] = differences[..., k] - np.median(differences[..., neighbours], axis=-1)
    return out


def length_jumps(lengths, lines: np.ndarray, threshold: float = 2.5e-4, refinements: int = 10
                 ) -> list[np.ndarray]:
    """Where the length jumps along each line: ``lines`` (lines x points x coordinates) are configurations in
    order, ``lengths`` maps configurations (samples x coordinates) to lengths (samples,). A step whose length
    change differs from its neighbours' by more than ``threshold`` (m) holds a jump (or a cusp: a continuous
    peak where −∂l/∂q diverges); that step and its two neighbours are narrowed ``refinements`` times to the
    quarter with the largest change. Returns per line the jump configurations (midpoints of the final
    intervals), in line order."""
    lines = np.asarray(lines, dtype=float)
    count, points, k = lines.shape
    values = np.asarray(lengths(lines.reshape(-1, k)), dtype=float).reshape(count, points)
    deviation = np.abs(_deviation(np.diff(values, axis=1)))
    found = []  # (line, start configuration, end configuration)
    for i in range(count):
        flagged = np.flatnonzero(deviation[i] > threshold)
        for j in flagged:  # the most deviating step of each run of neighbouring flagged steps
            if (j - 1 in flagged and deviation[i, j - 1] >= deviation[i, j]) or (
                    j + 1 in flagged and deviation[i, j + 1] > deviation[i, j]):
                continue
            found.append((i, lines[i, max(j - 1, 0)], lines[i, min(j + 2, points - 1)]))
    if not found:
        return [np.zeros((0, k)) for _ in range(count)]
    starts = np.array([f[1] for f in found])
    ends = np.array([f[2] for f in found])
    fractions = np.linspace(0.0, 1.0, 5)
    for _ in range(refinements):
        grid = starts[:, None, :] + fractions[None, :, None] * (ends - starts)[:, None, :]
        steps = np.diff(np.asarray(lengths(grid.reshape(-1, k)), dtype=float).reshape(len(found), 5), axis=1)
        quarter = np.argmax(np.abs(steps), axis=1)
        rows = np.arange(len(found))
        starts, ends = grid[rows, quarter], grid[rows, quarter + 1]
    middles = 0.5 * (starts + ends)
    return [middles[[n for n, f in enumerate(found) if f[0] == i]] for i in range(count)]


def length_kinks(lengths, lines: np.ndarray, column: int, threshold: float = 2e-3, jump_threshold: float = 2.5e-4,
                 refinements: int = 8) -> list[np.ndarray]:
    """Where the moment arm −∂l/∂q about the line's coordinate (``column``) jumps by more than ``threshold`` (m)
    while the length does not (a kink), along each line of ``lines`` (lines x points x coordinates, only
    ``column`` varying, evenly spaced). The slope change at a point is compared with its neighbours'; a kink is
    then placed where the tangent lines of the two sides meet, ``refinements`` times on windows a quarter as
    wide. Returns per line the kink configurations, in line order."""
    lines = np.asarray(lines, dtype=float)
    count, points, k = lines.shape
    h = lines[0, 1, column] - lines[0, 0, column]
    values = np.asarray(lengths(lines.reshape(-1, k)), dtype=float).reshape(count, points)
    steps = np.diff(values, axis=1)
    jumps = np.abs(_deviation(steps)) > jump_threshold
    bends = np.abs(_deviation(np.diff(steps / h, axis=1)))  # at interior points 1..points-2
    found = []  # (line, location along the coordinate)
    for i in range(count):
        flagged = [j for j in np.flatnonzero(bends[i] > threshold)
                   if 2 <= j + 1 <= points - 3 and not jumps[i, max(j - 1, 0):j + 3].any()]
        for j in flagged:  # the largest bend of each run of neighbouring flagged points
            if (j - 1 in flagged and bends[i, j - 1] >= bends[i, j]) or (
                    j + 1 in flagged and bends[i, j + 1] > bends[i, j]):
                continue
            found.append((i, lines[i, j + 1, column]))
    result = [[] for _ in range(count)]
    if not found:
        return [np.zeros((0, k)) for _ in range(count)]
    rows = np.array([f[0] for f in found])
    centres = np.array([f[1] for f in found])
    width = h
    for _ in range(refinements + 1):
        offsets = np.array([-2.0, -1.0, 1.0, 2.0]) * width
        grid = np.repeat(lines[rows, :1, :], 4, axis=1)
        grid[:, :, column] = centres[:, None] + offsets[None, :]
        sampled = np.asarray(lengths(grid.reshape(-1, k)), dtype=float).reshape(len(found), 4)
        left, right = (sampled[:, 1] - sampled[:, 0]) / width, (sampled[:, 3] - sampled[:, 2]) / width
        bend = np.where(np.abs(left - right) > 1e-12, left - right, np.inf)
        # tangent lines l0 + left (t - t1) and l2 + right (t - t2) meet at t
        meet = (sampled[:, 2] - sampled[:, 1] + left * offsets[1] - right * offsets[2]) / bend
        centres = centres + np.clip(np.nan_to_num(meet), -width, width)
        width /= 4.0
    for n, (i, _) in enumerate(found):
        point = lines[i, 0].copy()
        point[column] = centres[n]
        result[i].append(point)
    return [np.array(r).reshape(-1, k) for r in result]


def locate_jump_cuts(lengths, coordinates, coordinate: str, ranges: dict, lines: int = 5, step: float = np.deg2rad(0.5),
                     threshold: float = 2.5e-4, max_degree: int = 4, tolerance: float = 1e-4, source: str = "",
                     kink_threshold: float | None = None) -> tuple[Cut, ...]:
    """Cuts along the length jumps of one muscle in ``coordinate``: ``lines`` lines through the box
    ``ranges`` (coordinate -> (low, high)) in ``coordinate`` (points ``step`` apart), at Latin-hypercube values
    of the other ``coordinates``; each line must cross the same number of jumps (the k-th jumps of all lines
    form cut k, fitted as a polynomial in the other coordinates of degree <= ``max_degree``, grown until the jump
    points are within ``tolerance``). With ``kink_threshold`` (m), kinks (``length_kinks``: the moment arm
    about ``coordinate`` jumps by more) are cut too. ``lengths``: configurations (samples x ``coordinates``)
    -> lengths."""
    coordinates = tuple(coordinates)
    others = tuple(c for c in coordinates if c != coordinate)
    low, high = ranges[coordinate]
    along = np.linspace(low, high, int(np.ceil((high - low) / step)) + 1)
    rng = np.random.default_rng(0)
    at = np.column_stack([ranges[c][0] + (ranges[c][1] - ranges[c][0]) * (rng.permutation(lines) + 0.5) / lines
                          for c in others]) if others else np.zeros((lines, 0))
    grid = np.empty((lines, len(along), len(coordinates)))
    for j, name in enumerate(coordinates):
        grid[:, :, j] = along[None, :] if name == coordinate else at[:, others.index(name)][:, None]
    jumps = length_jumps(lengths, grid, threshold)
    if kink_threshold is not None:
        column = coordinates.index(coordinate)
        kinks = length_kinks(lengths, grid, column, kink_threshold, threshold)
        jumps = [np.vstack([j, b])[np.argsort(np.concatenate([j[:, column], b[:, column]]))]
                 for j, b in zip(jumps, kinks)]
    counts = {len(j) for j in jumps}
    if len(counts) != 1:
        raise TrajoptInputError(f"{source or 'path'}: lines in '{coordinate}' cross {sorted(len(j) for j in jumps)} "
                                f"length jumps; the jumps do not form layers a cut can follow")
    column = coordinates.index(coordinate)
    cuts = []
    for n in range(counts.pop()):
        points = np.array([j[n] for j in jumps])
        values = points[:, column]
        x = points[:, [coordinates.index(c) for c in others]]
        fit, error = None, np.inf
        for degree in range(max_degree + 1):
            exponents = monomial_exponents(len(others), degree) if others else np.zeros((1, 0), dtype=int)
            if len(exponents) > len(points):
                break
            coefficients = np.linalg.lstsq(monomials(x, exponents), values, rcond=None)[0]
            error = float(np.max(np.abs(monomials(x, exponents) @ coefficients - values)))
            fit = (exponents, coefficients)
            if error <= tolerance:
                break
        if error > tolerance:
            raise TrajoptInputError(f"{source or 'path'}: jump {n + 1} in '{coordinate}' is no polynomial of degree "
                                    f"<= {max_degree} in {list(others)} within {tolerance} (off by {error:.3g})")
        exponents, coefficients = fit
        used = others if len(exponents) > 1 else ()  # a constant: the plane q = value
        cuts.append(Cut(coordinate, used, tuple(tuple(int(e) for e in row[:len(used)]) for row in exponents),
                        tuple(float(c) for c in coefficients), f"length jump {source}".strip()))
    return tuple(cuts)


def geometric_lengths(osim_model, muscle: str, coordinates, couplings=()):
    """configurations (samples x ``coordinates``) -> lengths of ``muscle``'s geometric path
    (``trajopt.model.paths.geometric``, OpenSim's wrapping), the model's other coordinates at their defaults, dependent
    coordinates of ``couplings`` following their independent coordinate."""
    model = osim_model.multibody
    coordinates = tuple(coordinates)
    sampled = casadi.SX.sym("q", len(coordinates))
    entries = [casadi.SX(v) for v in model.default_q()]
    for k, name in enumerate(coordinates):
        entries[model.coordinate_index(name)] = sampled[k]
    for coupling in couplings:
        entries[model.coordinate_index(coupling.dependent)] = coupling.value(
            entries[model.coordinate_index(coupling.independent)])
    function = casadi.Function("length", [sampled], [geometric_path(osim_model, muscle).length(
        casadi.vertcat(*entries))])

    def lengths(values: np.ndarray) -> np.ndarray:
        return np.asarray(function.map(len(values))(np.asarray(values, dtype=float).T)).ravel()

    return lengths


def geometric_jump_cuts(osim_model, muscle: str, coordinates, coordinate: str, ranges: dict, lines: int = 3,
                        threshold: float = 2.5e-4, couplings=(), kink_threshold: float | None = None
                        ) -> tuple[Cut, ...]:
    """``locate_jump_cuts`` on the model's own geometric path of ``muscle`` (wrapping as OpenSim computes it,
    ``trajopt.model.paths.geometric``): lines in ``coordinate`` through the box ``ranges``, the model's other
    coordinates at their defaults, dependent coordinates of ``couplings`` (CoordinateCouplerConstraints, as
    ``trajopt.model.musculoskeletal.operators.load_processed`` returns them) following their independent coordinate."""
    lengths = geometric_lengths(osim_model, muscle, coordinates, couplings)
    return locate_jump_cuts(lengths, coordinates, coordinate, ranges, lines, threshold=threshold, source=muscle,
                            kink_threshold=kink_threshold)
