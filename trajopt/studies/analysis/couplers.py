"""CoordinateCouplerConstraints as holonomic constraints of a prescribed motion: φ(q) = q_d − s f(q_i) = 0.

``CouplerConstraints(multibody, couplings)`` gives the constraint Jacobian along the speeds, G (rows: one
per coupler; +1 at the dependent coordinate, −s f'(q_i) at the independent one) for ``MuscleDrivenInverse``
(its multipliers λ add Gᵀλ to the generalized-force balance), and ``assemble(table)`` sets each dependent
column of a motion from its independent one, as OpenSim assembles a states trajectory before prescribing it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trajopt.model.io import Table
from trajopt.core.multibody.constraints import CoordinateCoupler


@dataclass(frozen=True)
class CouplerConstraints:
    multibody: object
    couplings: tuple

    @property
    def count(self) -> int:
        return len(self.couplings)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f"{c.dependent}_coupler" for c in self.couplings)

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """(frames, couplers, nv)."""
        q = np.atleast_2d(np.asarray(q, dtype=float))
        mb = self.multibody
        result = np.zeros((q.shape[0], self.count, mb.nv))
        for k, c in enumerate(self.couplings):
            independent = q[:, mb.coordinate_index(c.independent)]
            slope = np.array([float(c.function.derivative(x)) for x in independent])
            result[:, k, mb.speed_index(c.dependent)] = 1.0
            result[:, k, mb.speed_index(c.independent)] -= c.scale * slope
        return result

    @property
    def independent_speeds(self) -> tuple[str, ...]:
        """The speeds left free by the couplers (every speed but the dependent ones), in model order."""
        dependent = {c.dependent for c in self.couplings}
        return tuple(n for n in self.multibody.speed_names if n not in dependent)

    def coupling_matrix(self, q: np.ndarray) -> np.ndarray:
        """(frames, nv, independent) C with u = C u_independent along the constraints (G C = 0): the coupling
        matrix of the generalized-force method; Cᵀ τ are the forces about the independent coordinates."""
        q = np.atleast_2d(np.asarray(q, dtype=float))
        mb = self.multibody
        free = self.independent_speeds
        result = np.zeros((q.shape[0], mb.nv, len(free)))
        for k, name in enumerate(free):
            result[:, mb.speed_index(name), k] = 1.0
        for c in self.couplings:  # in file order; a chain of couplers needs its independent one first
            independent = q[:, mb.coordinate_index(c.independent)]
            slope = np.array([c.scale * float(c.function.derivative(x)) for x in independent])
            result[:, mb.speed_index(c.dependent), :] += slope[:, None] * result[:, mb.speed_index(c.independent), :]
        return result

    def as_multibody(self) -> tuple:
        """The couplings as ``trajopt.core.multibody.constraints.CoordinateCoupler`` objects (OpenSim's
        φ = scale f(q_i) − q_d), for constrained forward/inverse dynamics. Their Jacobian is −1 times ``jacobian``."""
        return tuple(CoordinateCoupler(f"{c.dependent}_coupler", c.dependent, c.independent, c.function, c.scale)
                     for c in self.couplings)

    def assemble(self, table: Table) -> Table:
        """``table`` with every dependent coordinate's column computed from its independent one."""
        data = table.data.copy()
        labels = list(table.labels)
        for c in self.couplings:
            if c.independent in labels and c.dependent in labels:
                values = table.column(c.independent)
                data[:, labels.index(c.dependent)] = [float(c.value(x)) for x in values]
        return Table(table.time, table.labels, data, table.in_degrees, table.name, table.metadata, table.source)
