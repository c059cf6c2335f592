"""Cell trees split first along a muscle's length-jump surfaces: the recipe for muscles one polynomial misses.

Where a wrap object switches sides, a muscle's length jumps across a surface of its coordinate box and no single
polynomial follows it (walk3d's gluteus maximus, iliacus and psoas over the three hip coordinates). The recipe
behind ``trajopt fit-paths --cells`` and the "trajopt cells" rows of ``trajopt run path-fits``:

1. ``search_jump_surfaces``: the muscle's length-jump surfaces, then its moment-arm kink surfaces
   (``trajopt.model.paths.jump_cuts``; walk3d glmax2's and recfem's wraps) on a lengths callable, e.g.
   trajopt's geometric path of the model (``domain_pieces.geometric_lengths``, equal to OpenSim's lengths), on
   fewer lines where the path is costly (walk3d gaslat's two cylinders, arm26's ellipsoids: tens of milliseconds
   per configuration) so that the scan stays within a budget; skipped when even one line per coordinate would not
   (the tree then splits on its own, axis-aligned splits only).
2. ``fit_jump_cells``: a cell tree (``trajopt.model.paths.domain_cells``) on the muscle's training samples, split along
   those surfaces first (jumps, then kinks), its smallest cell ``cell_tree_settings``.
3. ``pocket_rms``: held-out RMS apart from the points more than ``POCKET`` off (walk3d glmax1's pockets, where the
   wrap takes the other way round and OpenSim's path is 0.22 m longer in 0.1 % of the hip box: no cell follows
   them, they are counted apart).

The tree's length jumps across its cuts as OpenSim's path does: for analyses (static optimization, muscle
analysis), not for gradient-based optimal control.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from trajopt.model.paths.domain_cells import CellNode, CellTreePath, TreeSettings, fit_domain_cells
from trajopt.model.paths.domain_pieces import Cut, geometric_lengths, heldout_rms
from trajopt.model.paths.fitting import ACCURATE, StepwiseSettings
from trajopt.model.paths.jump_cuts import JumpScan, jump_cuts, kink_cuts, scan_configurations
from trajopt.model.paths.polynomial import PolynomialPath

POCKET = 0.1  # m: held-out points this far off a fitted path are counted apart (glmax1's pockets)
SCAN_BUDGET = 120.0  # s: a jump scan estimated to take longer is skipped


def cell_tree_settings(coordinates) -> TreeSettings:
    """Smallest cell (fitting rows per coordinate): 50 over one coordinate (vaslat's kink at 138.4 deg knee sits
    in the top 1.6 deg), 300 rows in all over several (chosen on walk3d's muscles); a surface found by the
    search splits a cell with 50 fitting rows a side (recfem's knee kink leaves ~3 % of the samples above it);
    each cell's polynomial grows to degree 7 or 9, whichever validates better (walk3d iliacus' cell below its
    jump surface: degree 9 leaves its samples at a corner of the hip box, 1.19 mm moment-arm RMS on 4,000 fresh
    points against 0.80 mm; degree 7 for all would make tfl miss, 1.06 mm)."""
    return TreeSettings(min_samples=50 if len(coordinates) == 1 else max(300 // len(coordinates), 1),
                        cut_min_samples=50, degrees=(7, 9))


LINES = (625, 256, 125, 64, 32, 16, 8, 4, 2, 1)  # lines per coordinate tried, most first


@dataclass(frozen=True)
class SurfaceSearch:
    """One muscle's jump surfaces (``scan``, with ``lines`` lines per coordinate) and kink surfaces (``kinks``),
    each None when even its smallest scan would exceed the budget: its lengths callable costs
    ``seconds_per_configuration``, the scans take about ``estimate`` s; the search took ``seconds``."""

    muscle: str
    scan: JumpScan | None
    seconds_per_configuration: float
    estimate: float
    lines: int = LINES[0]
    seconds: float = 0.0
    kinks: JumpScan | None = None
    unscanned: str = ""  # why there is no scan other than the budget (no geometric path)

    @property
    def cuts(self) -> tuple[Cut, ...]:
        return tuple(cut for scan in (self.scan, self.kinks) if scan is not None for cut in scan.cuts)

    def describe(self) -> str:
        cost = f"trajopt's geometric path {self.seconds_per_configuration * 1e3:.1f} ms per configuration"
        if self.scan is None:
            return f"not scanned ({self.unscanned or f'{cost}: ~{self.estimate:.0f} s'})"
        kinks = ("; moment-arm kinks not scanned (over the budget)" if self.kinks is None else
                 f"; moment-arm kinks {self.kinks.describe()}" if self.kinks.surfaces else "")
        fewer = f" (scanned on {self.scan.scanned} lines per coordinate: {cost})" if self.lines < LINES[0] else ""
        return self.scan.describe() + kinks + fewer


def search_jump_surfaces(lengths, muscle: str, coordinates, ranges: dict, budget: float = SCAN_BUDGET,
                         probes: int = 200) -> SurfaceSearch:
    """``jump_cuts`` then ``kink_cuts`` of ``muscle`` over the box ``ranges`` (coordinate -> (low, high)) of its
    ``coordinates`` within the ``budget`` (s) at the cost of ``lengths``, timed on ``probes`` random
    configurations: the jump scan on as many lines per coordinate (of ``LINES``) as the budget allows (none when
    even the smallest scan would exceed it), the kink scan on as many as what remains of it allows (on the same
    lines at most)."""
    coordinates = tuple(coordinates)
    box = np.array([ranges[c] for c in coordinates], dtype=float)
    probe = np.random.default_rng(4).uniform(box[:, 0], box[:, 1], (probes, len(coordinates)))
    start = time.perf_counter()
    lengths(probe)
    cost = (time.perf_counter() - start) / probes

    def estimate(lines: int) -> float:
        return cost * scan_configurations(coordinates, ranges, lines)

    fitting = [lines for lines in LINES if estimate(lines) <= budget]
    if not fitting:
        return SurfaceSearch(muscle, None, cost, estimate(LINES[-1]), 0, time.perf_counter() - start)
    scan = jump_cuts(lengths, coordinates, ranges, fitting[0], source=muscle)
    remaining = [lines for lines in fitting if estimate(lines) <= budget - estimate(fitting[0])]
    kinks = kink_cuts(lengths, coordinates, ranges, remaining[0], known=scan.cuts, source=muscle) if remaining \
        else None
    return SurfaceSearch(muscle, scan, cost, estimate(fitting[0]) + (estimate(remaining[0]) if remaining else 0.0),
                         fitting[0], time.perf_counter() - start, kinks)


def fit_jump_cells(samples, search: SurfaceSearch, coordinates, ranges: dict,
                   settings: StepwiseSettings = ACCURATE, progress=None) -> tuple[CellTreePath, float]:
    """The cell tree of ``search.muscle`` over ``coordinates`` on ``samples`` (``PathSamples``), split along the
    search's surfaces first; returns it and its fitting time (s)."""
    muscle = search.muscle
    paths, seconds = fit_domain_cells(samples, settings, ranges=ranges, coordinates={muscle: tuple(coordinates)},
                                      cuts={muscle: search.cuts}, trees={muscle: cell_tree_settings(coordinates)},
                                      progress=progress, muscles=(muscle,))
    return paths[muscle], seconds[muscle]


def jump_cell_trees(osim_model, couplings, samples, crossed: dict, ranges: dict, budget: float = SCAN_BUDGET,
                    settings: StepwiseSettings = ACCURATE, progress=None):
    """For each muscle of ``crossed`` (muscle -> its coordinates), one at a time: its jump surfaces on the model's
    geometric path (``domain_pieces.geometric_lengths``; ``couplings`` as
    ``trajopt.model.musculoskeletal.operators.load_processed``
    returns them) within ``budget`` s, then its tree on ``samples``; yields (``SurfaceSearch``, tree, fitting s).
    ``ranges``: coordinate -> (low, high) of the domain. Without ``osim_model`` (a model trajopt's importer cannot
    read, sampled by OpenSim) no muscle is scanned."""
    for muscle, names in crossed.items():
        if osim_model is None:
            search = SurfaceSearch(muscle, None, 0.0, 0.0, 0, unscanned="no geometric path: trajopt cannot read the "
                                                                        "model")
        else:
            search = search_jump_surfaces(geometric_lengths(osim_model, muscle, names, couplings), muscle, names,
                                          {c: ranges[c] for c in names}, budget)
        if progress is not None:
            progress(f"{muscle} jump surfaces: {search.describe()}")
        yield (search, *fit_jump_cells(samples, search, names, ranges, settings, progress))


def one_cell(path: PolynomialPath) -> CellTreePath:
    """A single polynomial as a cell tree of one leaf (a muscle one polynomial serves, beside cell trees)."""
    return CellTreePath(path.muscle, path.coordinates, (CellNode(piece=0),), (path,))


def pocket_rms(path, samples, pocket: float = POCKET) -> tuple[int, float, float]:
    """How many of ``samples`` lie more than ``pocket`` (m) off ``path``'s length, and ``heldout_rms`` (length,
    moment arm; m) over the others."""
    lengths, _ = path.evaluate(samples.q[:, samples.columns(path.coordinates)])
    far = np.abs(lengths - samples.muscle(path.muscle)[0]) > pocket
    return (int(far.sum()), *heldout_rms(path, samples.subset(np.flatnonzero(~far))))


def domain_box(domain) -> dict:
    """Coordinate -> (low, high) of a ``PathDomain``: its ranges, or for a band the frames ± band clipped to
    the ranges (held-out points of the band lie in it)."""
    box = domain.ranges
    if domain.is_band:
        box = np.column_stack([np.maximum(domain.frames - domain.band[:, 0], domain.ranges[:, 0]).min(axis=0),
                               np.minimum(domain.frames + domain.band[:, 1], domain.ranges[:, 1]).max(axis=0)])
    return {c: (float(box[i, 0]), float(box[i, 1])) for i, c in enumerate(domain.coordinates)}
