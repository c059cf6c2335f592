"""Whether a motion stays where its muscle paths hold, in numbers: how many frames leave the paths' domain, the
coordinate that leaves it farthest, by how much and when.

``path_domain_report(domain, q, coordinates, times)`` measures it for any ``PathDomain``; ``PathsWithDomain`` gives
a paths class with a ``domain`` property the two members ``trajopt.model.musculoskeletal.MusclePaths`` asks for
(``domain_report`` and ``domain_bounds``). Paths without a declared domain (OpenSim's function-based paths) report
"domain not declared" and bound nothing; paths that hold everywhere (geometric) report every frame inside.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trajopt.model.paths.domain import PathDomain

# Values this close outside the domain count as inside (rad or m): IPOPT relaxes bounds by about 1e-8 of their size
# (bound_relax_factor), so a solution on the domain's edge sits a few 1e-8 beyond it.
DOMAIN_MARGIN = 1e-6


@dataclass(frozen=True)
class PathDomainReport:
    """A motion against its paths' domain. ``frames_outside`` of ``frames``; ``worst_coordinate`` lies
    ``worst_excess`` (its units: rad or m) outside, at value ``worst_value`` and frame ``worst_frame`` (time
    ``worst_time`` when times were given); ``declared`` False when the paths declare no domain (nothing checked)."""

    domain: str
    declared: bool
    frames: int
    frames_outside: int = 0
    worst_coordinate: str | None = None
    worst_excess: float = 0.0
    worst_value: float | None = None
    worst_frame: int | None = None
    worst_time: float | None = None

    @property
    def inside(self) -> bool:
        """Every frame lies inside a declared domain (False also when nothing could be checked)."""
        return self.declared and self.frames_outside == 0

    def sentence(self) -> str:
        """One line for a summary, whatever the outcome."""
        if not self.declared:
            return f"muscle paths' {self.domain}: the motion could not be checked against it"
        if not self.frames_outside:
            return f"all {self.frames} frames inside the muscle paths' domain ({self.domain})"
        when = "" if self.worst_time is None else f" at t = {self.worst_time:.4g} s"
        return (f"{self.frames_outside} of {self.frames} frames outside the muscle paths' domain (extrapolated); "
                f"worst: '{self.worst_coordinate}' = {self.worst_value:.6g}, {self.worst_excess:.4g} beyond it{when} "
                f"({self.domain})")

    def warning(self) -> str | None:
        """The one-line warning to print, or None when the solution stays inside (or nothing was declared)."""
        if not self.declared or not self.frames_outside:
            return None
        return f"warning: {self.sentence()}"

    def to_json(self) -> dict:
        return {"domain": self.domain, "declared": self.declared, "frames": self.frames,
                "frames_outside": self.frames_outside, "worst_coordinate": self.worst_coordinate,
                "worst_excess": self.worst_excess, "worst_value": self.worst_value, "worst_frame": self.worst_frame,
                "worst_time": self.worst_time}


def path_domain_report(domain: PathDomain, q, coordinates=None, times=None) -> PathDomainReport:
    """Rows of ``q`` (configurations x ``coordinates``, default the domain's) against ``domain``."""
    values = np.atleast_2d(np.asarray(q, dtype=float))
    frames = len(values)
    if not domain.declared or not domain.coordinates:
        return PathDomainReport(domain.describe(), domain.declared, frames)
    excess = domain.excess(values, coordinates)
    outside = domain.outside(values, coordinates, margin=DOMAIN_MARGIN)
    if not outside.any():
        return PathDomainReport(domain.describe(), True, frames)
    excess = np.where(outside[:, None], excess, 0.0)
    frame, j = np.unravel_index(int(np.argmax(excess)), excess.shape)
    columns = domain.columns(values, coordinates)
    return PathDomainReport(domain.describe(), True, frames, int(outside.sum()), domain.coordinates[j],
                            float(excess[frame, j]), float(columns[frame, j]), int(frame),
                            None if times is None else float(np.asarray(times, dtype=float)[frame]))


class PathsWithDomain:
    """``domain_report`` and ``domain_bounds`` of paths from their ``domain`` property (a ``PathDomain``)."""

    domain: PathDomain

    def domain_report(self, q, coordinates, times=None) -> PathDomainReport:
        """Rows of ``q`` (configurations x ``coordinates``) against the paths' domain."""
        return path_domain_report(self.domain, q, coordinates, times)

    def domain_bounds(self, coordinates) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) per name of ``coordinates``: the box holding the paths' domain; -inf/inf elsewhere."""
        return self.domain.bounds_over(coordinates)


def print_path_domain_warning(report: PathDomainReport) -> PathDomainReport:
    """Print the report's one-line warning when the motion leaves the domain; returns the report."""
    line = report.warning()
    if line is not None:
        print(line, flush=True)
    return report
