"""Polynomial muscle-path surrogates: length l(q) as a sum of monomials in the coordinates a muscle crosses.

A ``PolynomialPath`` gives CasADi expressions and named Functions for the length, the lengthening speed
l̇ = (∂l/∂q) q̇ and the moment arms r = -∂l/∂q (the sign OpenSim's ``computeMomentArm`` uses). A
``PolynomialPaths`` is the set for a model, saved to and loaded from JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import casadi
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.model.paths.domain import PathDomain, PathDomainError
from trajopt.model.paths.domain_report import PathsWithDomain

FORMAT = "trajopt.polynomial_paths/1"


@dataclass(frozen=True)
class FitReport:
    """How well a path was fitted: errors in metres, on training and held-out samples (NaN when absent)."""

    terms: int
    training_samples: int
    length_rmse: float
    moment_arm_rmse: float
    heldout_samples: int = 0
    heldout_length_rmse: float = float("nan")
    heldout_moment_arm_rmse: float = float("nan")
    stopped_because: str = ""

    def to_json(self) -> dict:
        return {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in self.__dict__.items()}

    @classmethod
    def from_json(cls, data: dict) -> FitReport:
        return cls(**{k: (float("nan") if v is None else v) for k, v in data.items()})


def _numeric(value) -> bool:
    return not isinstance(value, (casadi.SX, casadi.MX))


@dataclass(frozen=True)
class PolynomialPath:
    """l(q) = Σ_k c_k Π_j q_j^e_kj over ``coordinates`` (names), fitted within ``ranges`` (lower, upper)."""

    muscle: str
    coordinates: tuple[str, ...]
    exponents: tuple[tuple[int, ...], ...]
    coefficients: tuple[float, ...]
    ranges: tuple[tuple[float, float], ...]
    report: FitReport | None = None

    def __post_init__(self):
        n = len(self.coordinates)
        if len(self.exponents) != len(self.coefficients):
            raise TrajoptInputError(
                f"path '{self.muscle}': {len(self.exponents)} exponent rows but {len(self.coefficients)} coefficients"
            )
        for row in self.exponents:
            if len(row) != n or min(row, default=0) < 0:
                raise TrajoptInputError(f"path '{self.muscle}': exponent row {list(row)} does not fit coordinates {n}")
        if len(self.ranges) != n:
            raise TrajoptInputError(f"path '{self.muscle}': {len(self.ranges)} ranges for {n} coordinates")

    # -- symbolic core -------------------------------------------------------------------------
    @cached_property
    def _functions(self) -> tuple[casadi.Function, casadi.Function, casadi.Function]:
        n = len(self.coordinates)
        q = casadi.SX.sym("q", n)
        qdot = casadi.SX.sym("qdot", n)
        length = polynomial_value(q, self.exponents, self.coefficients)
        gradient = casadi.gradient(length, q)
        safe = re.sub(r"\W", "_", self.muscle)
        length_function = casadi.Function(f"{safe}_length", [q], [length], ["q"], ["length"])
        speed_function = casadi.Function(
            f"{safe}_lengthening_speed", [q, qdot], [casadi.dot(gradient, qdot)], ["q", "qdot"], ["lengthening_speed"]
        )
        arms_function = casadi.Function(f"{safe}_moment_arms", [q], [-gradient], ["q"], ["moment_arms"])
        return length_function, speed_function, arms_function

    @property
    def length_function(self) -> casadi.Function:
        """Named Function q -> length."""
        return self._functions[0]

    @property
    def lengthening_speed_function(self) -> casadi.Function:
        """Named Function (q, qdot) -> lengthening_speed."""
        return self._functions[1]

    @property
    def moment_arms_function(self) -> casadi.Function:
        """Named Function q -> moment_arms (= -∂l/∂q, one per coordinate)."""
        return self._functions[2]

    def length(self, q):
        """Length at q (SX, MX, DM or numbers, one value per coordinate)."""
        self._check_range(q)
        return self.length_function(q)

    def lengthening_speed(self, q, qdot):
        """l̇ = ∂l/∂q · q̇."""
        self._check_range(q)
        return self.lengthening_speed_function(q, qdot)

    def moment_arms(self, q):
        """r = -∂l/∂q, a column with one entry per coordinate."""
        self._check_range(q)
        return self.moment_arms_function(q)

    # -- numbers -------------------------------------------------------------------------------
    def outside_training_range(self, q, margin: float = 1e-9) -> np.ndarray:
        """True for each configuration (rows of q, samples x coordinates) outside the training box."""
        values = np.atleast_2d(np.asarray(q, dtype=float))
        if values.shape[1] != len(self.coordinates) and values.shape[0] == len(self.coordinates):
            values = values.T
        lower, upper = np.array(self.ranges).T
        return np.any((values < lower - margin) | (values > upper + margin), axis=1)

    def _check_range(self, q) -> None:
        """Numeric configurations outside the training box are refused (never extrapolated with a warning)."""
        if not _numeric(q):
            return
        values = np.atleast_2d(casadi.DM(q).full().ravel()) if not isinstance(q, np.ndarray) or q.ndim == 1 else q
        outside = self.outside_training_range(values)
        if outside.any():
            row = values[int(np.argmax(outside))]
            lower, upper = np.array(self.ranges).T
            j = int(np.argmax((row < lower - 1e-9) | (row > upper + 1e-9)))
            raise PathDomainError(
                f"polynomial path '{self.muscle}': coordinate '{self.coordinates[j]}' = {row[j]:.6g} is outside "
                f"the range [{lower[j]:.6g}, {upper[j]:.6g}] it was fitted on"
            )

    def evaluate(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Lengths (samples,) and moment arms (samples x coordinates) at many configurations at once (all inside
        the training range; ``length_function`` evaluates anywhere)."""
        values = np.atleast_2d(np.asarray(q, dtype=float))
        if values.shape[1] != len(self.coordinates):
            raise TrajoptInputError(
                f"path '{self.muscle}': configurations have {values.shape[1]} columns, "
                f"expected {len(self.coordinates)} ({', '.join(self.coordinates)})"
            )
        self._check_range(values)
        lengths = self.length_function.map(values.shape[0])(values.T).full().ravel()
        arms = self.moment_arms_function.map(values.shape[0])(values.T).full().T
        return lengths, arms

    # -- JSON ----------------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {
            "muscle": self.muscle,
            "coordinates": list(self.coordinates),
            "exponents": [list(map(int, row)) for row in self.exponents],
            "coefficients": [float(c) for c in self.coefficients],
            "ranges": [[float(a), float(b)] for a, b in self.ranges],
            "report": None if self.report is None else self.report.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict, source: str = "<dict>") -> PolynomialPath:
        try:
            return cls(
                muscle=str(data["muscle"]),
                coordinates=tuple(str(c) for c in data["coordinates"]),
                exponents=tuple(tuple(int(e) for e in row) for row in data["exponents"]),
                coefficients=tuple(float(c) for c in data["coefficients"]),
                ranges=tuple((float(a), float(b)) for a, b in data["ranges"]),
                report=None if data.get("report") is None else FitReport.from_json(data["report"]),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise TrajoptInputError(f"{source}: path entry {data.get('muscle', '?')!r} is malformed: {error}") from None


def polynomial_value(q, exponents, coefficients):
    """Σ_k c_k Π_j q_j^e_kj for a symbolic or numeric column q."""
    total = 0
    for row, coefficient in zip(exponents, coefficients):
        term = coefficient
        for j, power in enumerate(row):
            if power:
                term = term * q[j] ** int(power)
        total = total + term
    return total


class PathsByMuscle(PathsWithDomain):
    """A model's muscle paths keyed by muscle: ``paths["BIClong"]``, iteration in file order, the model's name and
    the domain they were fitted on (if stored)."""

    def __init__(self, paths, model: str = "", domain: PathDomain | None = None):
        self._paths = {path.muscle: path for path in paths}
        self.model = model
        self._domain = domain

    def __getitem__(self, muscle: str):
        try:
            return self._paths[muscle]
        except KeyError:
            raise TrajoptInputError(f"no path for muscle '{muscle}' (have {', '.join(self._paths)})") from None

    def __iter__(self):
        return iter(self._paths.values())

    def __len__(self) -> int:
        return len(self._paths)

    def __contains__(self, muscle) -> bool:
        return muscle in self._paths

    @property
    def muscles(self) -> tuple[str, ...]:
        return tuple(self._paths)

    @property
    def coordinates(self) -> tuple[str, ...]:
        """Union of every path's coordinates, in first-seen order."""
        names: dict[str, None] = {}
        for path in self:
            names.update(dict.fromkeys(path.coordinates))
        return tuple(names)

    # A subclass names its file format, what its files hold (for messages) and its entries' type (from_json).
    FORMAT: str
    DESCRIPTION: str
    ENTRY: type

    def save(self, file) -> None:
        write_paths_file(file, self.FORMAT, self.model, self._domain, [path.to_json() for path in self])

    @classmethod
    def load(cls, file):
        data, domain = read_paths_file(file, cls.FORMAT, cls.DESCRIPTION)
        return cls([cls.ENTRY.from_json(entry, str(file)) for entry in data["paths"]], data.get("model", ""), domain)


class PolynomialPaths(PathsByMuscle):
    """The polynomial paths of a model's muscles: ``paths["BIClong"]``, ``paths.save(file)``,
    ``PolynomialPaths.load(file)``."""

    FORMAT = FORMAT
    DESCRIPTION = "polynomial paths"
    ENTRY = PolynomialPath

    @property
    def domain(self) -> PathDomain:
        """The domain the paths were fitted on (stored in the file; for older files the box of the paths'
        ranges)."""
        if self._domain is not None:
            return self._domain
        ranges: dict[str, list[float]] = {}
        for path in self:
            for name, (low, high) in zip(path.coordinates, path.ranges):
                lo, hi = ranges.get(name, (-np.inf, np.inf))
                ranges[name] = [max(lo, low), min(hi, high)]
        return PathDomain.box(tuple(ranges), np.array(list(ranges.values())).reshape(-1, 2), "paths' ranges")

    def check_domain(self, q, coordinates, times=None, where: str = "motion") -> None:
        """Raise ``PathDomainError`` (coordinate, frame, value) when a row of ``q`` (configurations x
        ``coordinates``) lies outside the domain the paths were fitted on."""
        domain = self.domain
        coordinates = tuple(coordinates)
        missing = [c for c in domain.coordinates if c not in coordinates]
        if missing:
            raise TrajoptInputError(f"{where}: no values for the paths' coordinates {missing}")
        domain.check(q, coordinates, times, where)

    def lengths_and_moment_arms_function(self, coordinates: tuple[str, ...] | None = None) -> casadi.Function:
        """Named Function q -> (lengths (muscles), moment_arms (muscles x coordinates)) over ``coordinates``."""
        coordinates = tuple(coordinates or self.coordinates)
        q = casadi.SX.sym("q", len(coordinates))
        index = {name: i for i, name in enumerate(coordinates)}
        lengths, rows = [], []
        for path in self:
            missing = [c for c in path.coordinates if c not in index]
            if missing:
                raise TrajoptInputError(f"path '{path.muscle}' needs coordinates {missing} not in {list(coordinates)} "
                                        f"(a joint welded, or paths fitted to another model)")
            local = casadi.vertcat(*[q[index[c]] for c in path.coordinates])
            length = path.length_function(local)
            lengths.append(length)
            rows.append(-casadi.jacobian(length, q))
        return casadi.Function(
            "lengths_and_moment_arms",
            [q],
            [casadi.vertcat(*lengths), casadi.vertcat(*rows)],
            ["q"],
            ["lengths", "moment_arms"],
        )



def write_paths_file(file, format_name: str, model: str, domain: PathDomain | None, entries: list) -> None:
    """A muscle-paths JSON file: format, model, domain (if any) and the paths' entries, lists of numbers on one line
    each (a path stays readable: one row per term)."""
    data = {"format": format_name, "model": model}
    if domain is not None:
        data["domain"] = domain.to_json()
    data["paths"] = entries
    text = json.dumps(data, indent=1)
    text = re.sub(r"\[\s*([-+0-9.eE,\s]+?)\s*\]", lambda m: "[" + re.sub(r"\s+", " ", m.group(1)) + "]", text)
    Path(file).parent.mkdir(parents=True, exist_ok=True)
    Path(file).write_text(text + "\n")


def read_paths_file(file, format_name: str, what: str) -> tuple[dict, PathDomain | None]:
    """(data, domain) of a muscle-paths JSON file of `format_name` (one-line TrajoptInputError otherwise)."""
    file = Path(file)
    try:
        data = json.loads(file.read_text())
    except OSError as error:
        raise TrajoptInputError(f"{file}: cannot read {what} ({error.strerror})") from None
    except json.JSONDecodeError as error:
        raise TrajoptInputError(f"{file}: not valid JSON (line {error.lineno}: {error.msg})") from None
    if not isinstance(data, dict) or data.get("format") != format_name:
        raise TrajoptInputError(f"{file}: not a {what} file (expected format '{format_name}')")
    domain = None if data.get("domain") is None else PathDomain.from_json(data["domain"], str(file))
    return data, domain
