"""Coordinate bounds intersected with the box of the muscle paths' domain, so that a predictive problem cannot leave
the configurations its fitted paths hold on.

Fitted surrogates (polynomial paths) extrapolate outside their domain without any sign in the dynamics: a solver
then exploits lengths and moment arms nobody fitted. ``muscle_driven_problem`` therefore bounds the coordinates by
``MuscleDrivenModel.path_domain_bounds`` by default; coordinates the domain does not restrict keep their bounds.
A fixed initial or final value outside the domain is refused, naming the coordinate, rather than left infeasible.
"""

from __future__ import annotations

import numpy as np

from trajopt.errors import TrajoptInputError

OPT_OUT = "muscle_driven_problem(..., bound_by_path_domain=False) keeps the given bounds"


def _per_coordinate(value, count: int) -> np.ndarray:
    return np.array(np.broadcast_to(np.asarray(value, dtype=float), (count,)))


def intersected_bounds(bounds, domain, names, what: str) -> tuple[np.ndarray, np.ndarray] | None:
    """``bounds`` (None: free, or (lower, upper): numbers or one per coordinate) intersected with ``domain``
    ((lower, upper) arrays, -inf/inf where free); None stays None when the domain restricts nothing. Refuses an
    empty intersection naming the coordinate (``what``: which bounds, for the message)."""
    count = len(names)
    domain_lower, domain_upper = (np.asarray(b, dtype=float) for b in domain)
    if bounds is None:
        if not (np.isfinite(domain_lower).any() or np.isfinite(domain_upper).any()):
            return None
        lower, upper = np.full(count, -np.inf), np.full(count, np.inf)
    else:
        lower, upper = (_per_coordinate(b, count) for b in bounds)
    lower, upper = np.maximum(lower, domain_lower), np.minimum(upper, domain_upper)
    empty = np.flatnonzero(lower > upper)
    if empty.size:
        j = int(empty[0])
        raise TrajoptInputError(f"{what} of '{names[j]}' ({bounds[0] if np.ndim(bounds[0]) == 0 else bounds[0][j]}, "
                                f"{bounds[1] if np.ndim(bounds[1]) == 0 else bounds[1][j]}) do not meet the muscle "
                                f"paths' domain [{domain_lower[j]:.6g}, {domain_upper[j]:.6g}]; {OPT_OUT}")
    return lower, upper


def check_fixed_value(value, domain, names, what: str) -> None:
    """Refuse a fixed value (number or one per coordinate) outside ``domain``, naming the coordinate."""
    values = _per_coordinate(value, len(names))
    domain_lower, domain_upper = (np.asarray(b, dtype=float) for b in domain)
    outside = np.flatnonzero((values < domain_lower - 1e-9) | (values > domain_upper + 1e-9))
    if outside.size:
        j = int(outside[0])
        raise TrajoptInputError(f"{what} '{names[j]}' = {values[j]:.6g} lies outside the muscle paths' domain "
                                f"[{domain_lower[j]:.6g}, {domain_upper[j]:.6g}]; {OPT_OUT}")
