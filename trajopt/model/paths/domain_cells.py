"""Polynomial paths over cells bounded in several coordinates: a tree of cuts of the coordinate box, one
polynomial per leaf.

``trajopt.model.paths.domain_pieces`` cuts a muscle's box in layers along one coordinate. Where a muscle's path
changes on surfaces that end inside the domain (walk3d's gluteus maximus, iliacus and psoas wrap around
cylinders and ellipsoids over three hip coordinates: lines along hip flexion cross 0, 1 or 2 length jumps) no
layer follows them. Here the box is split recursively, each split a ``Cut`` (a plane q_c = value) of one cell,
while a cell's polynomial misses the accuracy targets on validation samples, so cells shrink where the path
is hard to follow (around jump surfaces and wrap switches) and stay large elsewhere.

``CellTreePath`` is the muscle's tree: ``nodes[0]`` is the root, a node either splits (its ``cut``, the node
below it and the node above it) or is a leaf holding ``pieces[piece]``. Lengths are nested ``if_else`` between
the leaves' polynomials (``length_function``), moment arms −∂l/∂q of the leaf's polynomial; discontinuous
across splits, as ``DomainPiecewisePath`` is across cuts. ``DomainCellPaths`` holds a model's trees and is a
``MusclePaths`` (``DomainPiecewisePaths``' functions, its own file format).

``fit_cell_tree`` grows a tree from training samples: they are split once into fitting and validation rows
(the validation rows decide the splits and never enter a fit); a leaf is split along the coordinate and at the
position (quantiles of its samples, refined) whose two sides (a quick least-squares polynomial each) predict the
validation rows best; when the tree is grown, every leaf is refitted on all its training rows (``ACCURATE``
stepwise, ``trajopt.model.paths.fitting``). Axis-aligned splits follow jumps across planes of one coordinate and
kinks; a slanted jump surface of tens of mm they only stair-step. ``trajopt.model.paths.jump_cuts`` locates such
surfaces on a lengths callable (e.g. trajopt's geometric path, equal to OpenSim's) even where they end inside the
box, and ``fit_cell_tree(..., cuts=...)`` splits along them first (walk3d psoas_r: 2 cells meet the targets).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from functools import cached_property

import casadi
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.model.paths.domain_pieces import Cut, DomainPiecewisePaths, PolynomialPieces
from trajopt.model.paths.fitting import (ACCURATE, StepwiseSettings, crossed_coordinates, fit_polynomial_path,
                                         monomial_derivatives, monomial_exponents, monomials)
from trajopt.model.paths.polynomial import PolynomialPath, polynomial_value

FORMAT = "trajopt.domain_cell_paths/1"


@dataclass(frozen=True)
class CellNode:
    """A split (``cut``, index of the node ``below`` it and of the node ``above`` it) or a leaf (``piece``)."""

    cut: Cut | None = None
    below: int = -1
    above: int = -1
    piece: int = -1

    @property
    def is_leaf(self) -> bool:
        return self.cut is None

    def to_json(self) -> dict:
        if self.is_leaf:
            return {"piece": self.piece}
        return {"cut": self.cut.to_json(), "below": self.below, "above": self.above}

    @classmethod
    def from_json(cls, data: dict, source: str = "<dict>") -> CellNode:
        try:
            if "piece" in data:
                return cls(piece=int(data["piece"]))
            return cls(Cut.from_json(data["cut"], source), int(data["below"]), int(data["above"]))
        except (KeyError, TypeError, ValueError) as error:
            raise TrajoptInputError(f"{source}: cell node {data!r} is malformed: {error}") from None


@dataclass(frozen=True)
class CellTreePath(PolynomialPieces):
    """One muscle: a tree of ``nodes`` (root first) whose leaves hold polynomial ``pieces``."""

    PLACEMENT = ("nodes", CellNode)

    muscle: str
    coordinates: tuple[str, ...]
    nodes: tuple[CellNode, ...]
    pieces: tuple[PolynomialPath, ...]

    def __post_init__(self):
        leaves = sorted(n.piece for n in self.nodes if n.is_leaf)
        if leaves != list(range(len(self.pieces))):
            raise TrajoptInputError(f"path '{self.muscle}': leaves hold pieces {leaves}, expected each of the "
                                    f"{len(self.pieces)} pieces once")
        reached = [0]
        for k in reached:  # every node reached once from the root: a tree
            node = self.nodes[k]
            if not node.is_leaf:
                if not (0 < node.below < len(self.nodes) and 0 < node.above < len(self.nodes)):
                    raise TrajoptInputError(f"path '{self.muscle}': node {k} points to missing nodes")
                missing = [c for c in node.cut.coordinates if c not in self.coordinates]
                if missing:
                    raise TrajoptInputError(f"path '{self.muscle}': node {k}'s cut uses {missing}, not among its "
                                            f"coordinates {list(self.coordinates)}")
                reached += [node.below, node.above]
        if sorted(reached) != list(range(len(self.nodes))):
            raise TrajoptInputError(f"path '{self.muscle}': its nodes do not form a tree from node 0")
        self._check_pieces()

    def cell(self, q: np.ndarray) -> np.ndarray:
        """Piece index of the leaf each row of ``q`` (samples x coordinates) lies in."""
        q = np.atleast_2d(np.asarray(q, dtype=float))
        node = np.zeros(len(q), dtype=int)
        while True:
            splitting = np.array([not self.nodes[k].is_leaf for k in node])
            if not splitting.any():
                return np.array([self.nodes[k].piece for k in node])
            for k in np.unique(node[splitting]):
                rows = node == k
                cut = self.nodes[k].cut
                node[rows] = np.where(cut.above(q[rows], self.coordinates), self.nodes[k].above, self.nodes[k].below)

    @cached_property
    def length_function(self) -> casadi.Function:
        """Named Function q -> length (the polynomial of the leaf q lies in)."""
        q = casadi.SX.sym("q", len(self.coordinates))

        def value(k: int):
            node = self.nodes[k]
            if node.is_leaf:
                piece = self.pieces[node.piece]
                return polynomial_value(q, piece.exponents, piece.coefficients)
            return casadi.if_else(node.cut.above_symbolic(q, self.coordinates), value(node.above), value(node.below))

        return self._named_length(q, value(0))



class DomainCellPaths(DomainPiecewisePaths):
    """The cell-tree paths of a model's muscles (``trajopt.model.musculoskeletal.MusclePaths``)."""

    FORMAT = FORMAT
    DESCRIPTION = "domain cell-tree paths"
    ENTRY = CellTreePath


@dataclass(frozen=True)
class TreeSettings:
    """How ``fit_cell_tree`` grows a tree: split a cell while its validation RMS exceeds ``length_target`` or
    ``moment_arm_target`` (m), it holds at least twice ``min_samples`` (per coordinate of the muscle) fitting
    rows and is shallower than ``max_depth``; ``validation``: fraction of the training samples kept for these
    decisions; ``probe_degree``: degree of the quick per-side least squares that chooses the split coordinate
    and position among the ``split_quantiles`` of the cell's fitting rows (each side keeping ``min_samples``),
    the position then refined ``refinements`` times on a grid a quarter as wide.
    ``outlier`` (m): samples whose length is further
    than this from a first polynomial over the whole box are left out of all fits and decisions (walk3d's
    glmax1 has pockets, 0.1 % of its hip box, where OpenSim's path is 0.22 m longer than around them: no
    polynomial cell of a few hundred samples follows them, and one such sample spoils a cell's fit). A cell's
    polynomial has at most (its samples) / ``samples_per_term`` terms. A given cut splits a cell when each side
    holds ``cut_min_samples`` fitting rows (default: a split's ``min_samples`` per coordinate); a kink surface
    near the end of a coordinate's range leaves few samples beyond it (walk3d recfem's, ~3 %). With ``degrees``,
    a cell's polynomial is fitted with each as the highest degree (``StepwiseSettings.max_degree``) and the one
    whose validation RMS (relative to the targets) is lower is kept."""

    length_target: float = 0.5e-3
    moment_arm_target: float = 1e-3
    validation: float = 0.25
    min_samples: int = 50  # per coordinate: 50 for a knee muscle (walk3d vaslat's kink), 150 over the hip
    max_depth: int = 8
    probe_degree: int = 3
    split_quantiles: tuple[float, ...] = (0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875)
    refinements: int = 3
    outlier: float | None = 0.1
    samples_per_term: int = 4
    seed: int = 0
    cut_min_samples: int | None = None  # fitting rows each side of a given cut needs; None: as a split's sides
    degrees: tuple[int, ...] = ()  # highest degrees a cell's polynomial tries (validation picks); (): the settings'


def _rms(path: PolynomialPath, q, lengths, arms) -> tuple[float, float]:
    if len(q) == 0:
        return 0.0, 0.0
    predicted, predicted_arms = path.evaluate(q)
    return float(np.sqrt(np.mean((predicted - lengths) ** 2))), float(np.sqrt(np.mean((predicted_arms - arms) ** 2)))


def _probe(q, lengths, arms, degree: int, qv, lv, av) -> float:
    """Validation sum of squares (length + moment arms) of a full least-squares polynomial of ``degree``."""
    if len(qv) == 0:
        return 0.0
    exponents = monomial_exponents(q.shape[1], degree)
    while len(exponents) * 2 > len(q) * (1 + q.shape[1]) and degree > 1:
        degree -= 1
        exponents = monomial_exponents(q.shape[1], degree)

    def design(x):
        return np.vstack([monomials(x, exponents)]
                         + [-monomial_derivatives(x, exponents, j) for j in range(x.shape[1])])

    coefficients = np.linalg.lstsq(design(q), np.concatenate([lengths, arms.T.ravel()]), rcond=None)[0]
    residual = design(qv) @ coefficients - np.concatenate([lv, av.T.ravel()])
    return float(residual @ residual)


def fit_cell_tree(muscle: str, coordinates, q, lengths, arms, box, settings: StepwiseSettings = ACCURATE,
                  tree: TreeSettings = TreeSettings(), progress=None, cuts=()) -> CellTreePath:
    """Grow a cell tree for one muscle: ``q`` (samples x ``coordinates``), lengths (samples,), moment arms
    (samples x coordinates), ``box`` the domain (coordinates x (low, high)). See the module docstring.
    ``cuts`` (``Cut``, e.g. located length jumps) split the box first, in order, on every side that holds
    enough samples; the tree grows from the cells between them."""
    coordinates = tuple(coordinates)
    q, lengths = np.asarray(q, dtype=float), np.asarray(lengths, dtype=float)
    arms = np.asarray(arms, dtype=float).reshape(len(q), -1)
    finite = np.isfinite(lengths) & np.all(np.isfinite(arms), axis=1)
    q, lengths, arms = q[finite], lengths[finite], arms[finite]
    is_validation = np.random.default_rng(tree.seed).random(len(q)) < tree.validation
    box = np.asarray(box, dtype=float)
    if tree.outlier is not None:
        first = fit_polynomial_path(muscle, coordinates, q[~is_validation], lengths[~is_validation],
                                    arms[~is_validation], settings, None, box)
        kept = np.abs(first.evaluate(q)[0] - lengths) <= tree.outlier
        q, lengths, arms, is_validation = q[kept], lengths[kept], arms[kept], is_validation[kept]
        if progress is not None and not kept.all():
            progress(f"{muscle}: {int((~kept).sum())} samples further than {tree.outlier * 1e3:.0f} mm from a "
                     f"first polynomial left out")
    least = tree.min_samples * len(coordinates)
    cut_least = least if tree.cut_min_samples is None else tree.cut_min_samples
    leaves = []  # (node index, cell box, rows)
    nodes: list[CellNode | None] = []

    def cell_fit(rows, cell_box, degree=None) -> PolynomialPath:
        cap = max(int(rows.sum()) // tree.samples_per_term, 1)
        capped = replace(settings, max_terms=min(settings.max_terms or cap, cap))
        if degree is not None:
            capped = replace(capped, max_degree=degree, degree=min(capped.degree, degree))
        return fit_polynomial_path(muscle, coordinates, q[rows], lengths[rows], arms[rows], capped, None, cell_box)

    def grow(cell_box, rows, depth: int, pending=()) -> int:
        index = len(nodes)
        nodes.append(None)
        fit, check = rows & ~is_validation, rows & is_validation
        for k, cut in enumerate(pending):
            side = cut.above(q, coordinates)
            if min((fit & side).sum(), (fit & ~side).sum()) >= cut_least:
                below = grow(cell_box, rows & ~side, depth + 1, pending[k + 1:])
                above = grow(cell_box, rows & side, depth + 1, pending[k + 1:])
                nodes[index] = CellNode(cut, below, above)
                return index
        chosen = None
        for degree in tree.degrees or (None,):  # the highest degree whose fit validates best
            candidate = cell_fit(fit, cell_box, degree)
            errors = _rms(candidate, q[check], lengths[check], arms[check])
            worst = max(errors[0] / tree.length_target, errors[1] / tree.moment_arm_target)
            if chosen is None or worst < chosen[0]:
                chosen = (worst, candidate, errors, degree)
        _, piece, (length_rms, arm_rms), degree = chosen
        met = length_rms <= tree.length_target and arm_rms <= tree.moment_arm_target
        if progress is not None:
            progress(f"{muscle}: depth {depth}, {int(fit.sum())} + {int(check.sum())} samples, "
                     f"{len(piece.coefficients)} terms, validation {length_rms * 1e3:.3f} / {arm_rms * 1e3:.3f} mm")
        if met or depth >= tree.max_depth or fit.sum() < 2 * least:
            leaves.append((index, cell_box, rows, degree))
            return index

        def score(j: int, position: float) -> float:
            side = q[:, j] >= position
            if not (cell_box[j, 0] < position < cell_box[j, 1]) or min(
                    (fit & side).sum(), (fit & ~side).sum()) < least:
                return np.inf
            return sum(_probe(q[fit & s], lengths[fit & s], arms[fit & s], tree.probe_degree, q[check & s],
                              lengths[check & s], arms[check & s]) for s in (side, ~side))

        best = None
        for j in range(len(coordinates)):
            for position in np.quantile(q[fit, j], tree.split_quantiles):
                value = score(j, float(position))
                if np.isfinite(value) and (best is None or value < best[0]):
                    best = (value, j, float(position))
        if best is not None:  # refine the position between its neighbouring candidates
            _, j, position = best
            step = float(np.diff(np.quantile(q[fit, j], tree.split_quantiles)).max())
            for _ in range(tree.refinements):
                for candidate in np.linspace(position - step, position + step, 9):
                    value = score(j, float(candidate))
                    if value < best[0]:
                        best = (value, j, float(candidate))
                position, step = best[2], step / 4
        if best is None:
            leaves.append((index, cell_box, rows, degree))
            return index
        _, j, position = best
        below_box, above_box = cell_box.copy(), cell_box.copy()
        below_box[j, 1] = above_box[j, 0] = position
        below = grow(below_box, rows & (q[:, j] < position), depth + 1)
        above = grow(above_box, rows & (q[:, j] >= position), depth + 1)
        nodes[index] = CellNode(Cut.at(coordinates[j], position, "cell split"), below, above)
        return index

    grow(box, np.ones(len(q), dtype=bool), 0, tuple(cuts))
    pieces = []
    for index, cell_box, rows, degree in leaves:  # refit on all training rows of the leaf (fitting + validation)
        nodes[index] = CellNode(piece=len(pieces))
        pieces.append(cell_fit(rows, cell_box, degree))
    return CellTreePath(muscle, coordinates, tuple(nodes), tuple(pieces))


def fit_domain_cells(samples, settings: StepwiseSettings = ACCURATE, tree: TreeSettings = TreeSettings(),
                     ranges: dict | None = None, coordinates: dict | None = None, model: str = "", progress=None,
                     cuts: dict | None = None, trees: dict | None = None, muscles=None
                     ) -> tuple[DomainCellPaths, dict]:
    """``fit_cell_tree`` for every muscle of ``samples`` (``PathSamples``); ``coordinates``: muscle ->
    coordinates (default ``crossed_coordinates``), ``ranges``: coordinate -> (low, high) of the domain (default
    the samples' extent), ``cuts``: muscle -> its ``Cut``s to split along first (e.g. ``jump_cuts(...).cuts``),
    ``trees``: muscle -> its own ``TreeSettings`` (default ``tree``), ``muscles``: which (default all). Returns
    the paths and each muscle's fitting time (s)."""
    paths, seconds = [], {}
    for muscle in muscles or samples.muscles:
        names = tuple((coordinates or {}).get(muscle) or crossed_coordinates(samples, muscle))
        columns = samples.columns(names)
        q = samples.q[:, columns]
        lengths, arms = samples.muscle(muscle)
        box = [(ranges or {}).get(c, (q[:, i].min(), q[:, i].max())) for i, c in enumerate(names)]
        start = time.perf_counter()
        paths.append(fit_cell_tree(muscle, names, q, lengths, arms[:, columns], box, settings,
                                   (trees or {}).get(muscle, tree), progress, tuple((cuts or {}).get(muscle, ()))))
        seconds[muscle] = time.perf_counter() - start
        if progress is not None:
            progress(f"fitted {muscle}: {len(paths[-1].pieces)} cells, {paths[-1].terms} terms "
                     f"({seconds[muscle]:.1f} s)")
    return DomainCellPaths(paths, model), seconds
