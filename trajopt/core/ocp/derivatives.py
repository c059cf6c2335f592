"""Exact NLP derivatives assembled point by point: built in milliseconds instead of seconds.

The NLP is f, g = outer(w, Y_1, ..., Y_m) with Y_j = F_j(V_j(w)): SX Functions F_j (dynamics, path,
integrands) mapped over grid points whose inputs V_j are affine in the decision vector w, and an
`outer` MX function that is linear algebra plus the endpoint Function. Differentiating the whole
expanded SX graph (nlpsol's expand=True) costs seconds; here only the small per-point Functions are
differentiated symbolically, and the chain rule is a few sparse products at run time:

    Z = [I; blockdiag_k(dF_j/dv at point k) dV_j/dw ...]        (Jacobian of zeta = (w, Y) with respect to w)
    jac g = d(outer_g)/dzeta Z       (grad f: nlpsol's own reverse sweep through the MX graph)
    hess L = Z' hess_zeta(L_outer) Z + sum_j dV_j/dw' blockdiag_k(hess_v(mu_jk' F_j)) dV_j/dw

with L_outer = lam_f f + lam_g' g as a function of zeta and mu_j = dL_outer/dY_j. The second term is
exact because V_j is affine in w. Entries of v that no decision variable moves (t when the bounds fix the time
window: the grid times are then numbers) are data: F_j is differentiated along the other entries only. Values
equal the expanded graph's to rounding (tests/test_ocp_derivatives.py); an evaluation costs ~1.2x (Hessian)
to ~1.4x (Jacobian) the expanded SX one (2D gait, 50 intervals).
"""

from __future__ import annotations

import casadi as ca
import numpy as np


# How deep `ca.is_equal` compares two terms' input expressions: deep enough to see that the grid-point inputs
# of two terms on the same points are the same slices of w (equal nodes: the same expression, so the same Jacobian).
_SAME_INPUTS_DEPTH = 8


def _constant_jacobian(expression: ca.MX, w: ca.MX) -> ca.DM:
    """d expression / dw of an expression affine in w, as a sparse constant."""
    jacobian = ca.Function("affine_jacobian", [w], [ca.jacobian(ca.vec(expression), w)])
    return jacobian(np.zeros(w.numel()))


def _input_jacobians(mapped, w: ca.MX) -> list[ca.DM]:
    """dV_j/dw of every term; terms evaluated on the same points share one (dynamics, path and integrands of most
    transcriptions)."""
    known: list[tuple[ca.MX, ca.DM]] = []
    jacobians = []
    for term in mapped:
        same = next((jacobian for inputs, jacobian in known
                     if inputs.shape == term.inputs.shape and ca.is_equal(inputs, term.inputs, _SAME_INPUTS_DEPTH)),
                    None)
        if same is None:
            same = _constant_jacobian(term.inputs, w)
            known.append((term.inputs, same))
        jacobians.append(same)
    return jacobians


def _block_diagonal(values: ca.MX, columns: int) -> ca.MX:
    return ca.diagcat(*ca.horzsplit(values, columns))


def _nonzero_block(sparsity: ca.Sparsity, row_offsets, column_offsets, a: int, b: int) -> bool:
    rows, columns = (np.asarray(index) for index in sparsity.get_triplet())
    return bool(np.any((rows >= row_offsets[a]) & (rows < row_offsets[a + 1]) &
                       (columns >= column_offsets[b]) & (columns < column_offsets[b + 1])))


def _times(left: ca.MX, right) -> ca.MX:
    return left if right is None else ca.mtimes(left, right)


def _sum(terms, rows: int, columns: int) -> ca.MX:
    total = ca.MX(rows, columns)
    for term in terms:
        total += term
    return total


def _varying_inputs(input_jacobian: ca.DM, size: int) -> np.ndarray:
    """The entries of a point's input v that depend on the decision vector at some point (rows of dV/dw); the
    others (e.g. t when the time is fixed) are data, along which nothing is differentiated."""
    rows = np.asarray(input_jacobian.sparsity().get_triplet()[0], dtype=int)
    return np.unique(rows % size) if size else np.zeros(0, dtype=int)


def _rows_of(input_jacobian: ca.DM, varying: np.ndarray, size: int, points: int) -> ca.DM:
    """dV/dw restricted to the varying entries of every point's v (point-major, as the block diagonals)."""
    if varying.size == size:
        return input_jacobian
    rows = (np.arange(points)[:, None] * size + varying[None, :]).ravel()
    return input_jacobian[rows.tolist(), :]


def _along(v: ca.SX, varying: np.ndarray) -> ca.SX:
    """The entries of a point's input that are differentiated along."""
    return v if varying.size == v.numel() else v[varying.tolist()]


def _values_and_jacobian(function: ca.Function, varying: np.ndarray) -> ca.Function:
    """v -> (function(v), d function / d v[varying]) in SX, by forward or reverse mode, whichever is shorter."""
    v = ca.SX.sym("v", function.size1_in(0))
    values = function(v)
    candidates = [ca.Function(f"jac_{function.name()}", [v], [values, ca.jacobian(values, _along(v, varying), options)])
                  for options in ({}, {"helper_options": {"ad_weight": 0.0}})]
    return min(candidates, key=lambda candidate: candidate.n_instructions())


def structured_derivatives(w: ca.MX, mapped, outer: ca.Function, hessian: bool = True) -> dict:
    """nlpsol options {"jac_g"[, "hess_lag"]} as MX Functions calling mapped SX derivatives."""
    n_w = w.numel()
    sizes = [term.values.numel() for term in mapped]
    offsets = np.concatenate([[0, n_w], n_w + np.cumsum(sizes)]).astype(int).tolist()
    zeta = ca.MX.sym("zeta", offsets[-1])  # (w, values of each mapped term)
    parts = ca.vertsplit(zeta, offsets)
    cost, constraints = outer(parts[0], *[ca.reshape(part, term.values.shape) for part, term in zip(parts[1:], mapped)])
    zeta_at_w = ca.vertcat(w, *[ca.vec(term.values) for term in mapped])

    chain, input_jacobians, point_values = [None], [], []  # d zeta / d w by block of zeta (None: identity)
    varying_inputs = []
    for term, full_input_jacobian in zip(mapped, _input_jacobians(mapped, w)):
        size, points = term.function.size1_in(0), term.values.size2()
        varying = _varying_inputs(full_input_jacobian, size)
        input_jacobian = _rows_of(full_input_jacobian, varying, size, points)
        input_jacobians.append(input_jacobian)
        varying_inputs.append(varying)
        if term.values.numel() == 0 or varying.size == 0:
            chain.append(ca.DM(term.values.numel(), n_w))
            point_values.append(term.values)
            continue
        term_values, jacobians = _values_and_jacobian(term.function, varying).map(points)(term.inputs)
        point_values.append(term_values)
        chain.append(ca.mtimes(_block_diagonal(jacobians, varying.size), input_jacobian))

    p = ca.MX.sym("p", 0, 1)
    first = ca.Function("outer_jacobian", [zeta], [constraints, ca.jacobian(constraints, zeta)])
    # g from the same per-point sweep as its Jacobian (the values come out of it for free).
    constraint_values, constraint_jacobian = first(ca.vertcat(w, *[ca.vec(value) for value in point_values]))
    blocks = [_nonzero_block(first.sparsity_out(1), [0, constraints.numel()], offsets, 0, b)
              for b in range(len(chain))]
    jacobian = _sum([_times(constraint_jacobian[:, offsets[b]:offsets[b + 1]], chain[b])
                     for b in range(len(chain)) if blocks[b]], constraints.numel(), n_w)
    # The objective gradient is one reverse sweep: nlpsol's own MX gradient is already cheap.
    functions = {"jac_g": ca.Function("nlp_jac_g", [w, p], [constraint_values, jacobian], ["x", "p"],
                                      ["g", "jac_g_x"])}
    if not hessian:
        return functions
    lam_f, lam_g = ca.MX.sym("lam_f"), ca.MX.sym("lam_g", constraints.numel())
    lagrangian = lam_f * cost + ca.dot(lam_g, constraints)
    outer_hessian, outer_gradient = ca.hessian(lagrangian, zeta)
    second = ca.Function("outer_second_order", [zeta, lam_f, lam_g], [outer_hessian, outer_gradient])
    outer_hessian, outer_gradient = second(zeta_at_w, lam_f, lam_g)
    # Only the blocks of the outer Hessian that are structurally nonzero need the chain of their block
    # (e.g. duration x dynamics values); constraints linear in a term's values never differentiate it twice.
    terms = []
    for a in range(len(chain)):
        for b in range(len(chain)):
            if _nonzero_block(second.sparsity_out(0), offsets, offsets, a, b):
                middle = outer_hessian[offsets[a]:offsets[a + 1], offsets[b]:offsets[b + 1]]
                terms.append(_times(middle, chain[b]) if chain[a] is None else
                             ca.mtimes(chain[a].T, _times(middle, chain[b])))
    multipliers = ca.vertsplit(outer_gradient, offsets)
    for term, input_jacobian, varying, mu in zip(mapped, input_jacobians, varying_inputs, multipliers[1:]):
        if term.values.numel() == 0 or varying.size == 0:
            continue
        v = ca.SX.sym("v", term.function.size1_in(0))
        weights = ca.SX.sym("mu", term.values.size1())
        point_hessian = ca.Function(f"hess_{term.function.name()}", [v, weights],
                                    [ca.hessian(ca.dot(weights, term.function(v)), _along(v, varying))[0]])
        hessians = point_hessian.map(term.values.size2())(term.inputs, ca.reshape(mu, term.values.shape))
        terms.append(ca.mtimes([input_jacobian.T, _block_diagonal(hessians, varying.size), input_jacobian]))
    functions["hess_lag"] = ca.Function("nlp_hess_l", [w, p, lam_f, lam_g], [ca.triu(_sum(terms, n_w, n_w))],
                                        ["x", "p", "lam_f", "lam_g"], ["triu_hess_gamma_x_x"])
    return functions
