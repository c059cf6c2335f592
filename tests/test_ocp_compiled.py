"""Compiled NLP functions (trajopt.core.ocp.compiled): same solution as CasADi's virtual machine, cached on disk."""

import numpy as np
import pytest
from test_ocp_derivatives import coupled_problem

from trajopt.core.ocp import HermiteSimpson, Ipopt
from trajopt.core.ocp.compiled import c_compiler, compiled_nlp
from trajopt.core.ocp.nlp import transcribe

needs_compiler = pytest.mark.skipif(c_compiler() is None, reason="no C compiler")


@needs_compiler
def test_compiled_and_uncompiled_solves_agree(tmp_path, monkeypatch):
    monkeypatch.setenv("TRAJOPT_CACHE_DIR", str(tmp_path))
    ocp = coupled_problem()
    plain = ocp.solve(HermiteSimpson(12), Ipopt(tol=1e-10))
    compiled = ocp.solve(HermiteSimpson(12), Ipopt(tol=1e-10, compiled=True))
    assert plain.success and compiled.success
    # Same IPOPT path on the same numbers up to rounding: the same optimum to ~1e-10.
    assert compiled.iterations == plain.iterations
    assert abs(compiled.objective - plain.objective) < 1e-10 * max(1.0, abs(plain.objective))
    assert np.max(np.abs(compiled._w - plain._w)) < 1e-8
    assert np.max(np.abs(compiled.lam_g - plain.lam_g)) < 1e-6 * max(1.0, np.max(np.abs(plain.lam_g)))


@needs_compiler
def test_compiled_functions_equal_the_graph_and_are_reused_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRAJOPT_CACHE_DIR", str(tmp_path))
    discrete = transcribe(coupled_problem().compile(), HermiteSimpson(6))
    first = compiled_nlp(discrete)
    second = compiled_nlp(transcribe(coupled_problem().compile(), HermiteSimpson(6)))
    assert first.compiled_now and not second.compiled_now and first.library == second.library
    assert len(list((tmp_path / "compiled").glob("*.so"))) == 1
    derivatives = discrete.derivative_functions()
    rng = np.random.default_rng(3)
    w = discrete.layout.guess() + 0.01 * rng.normal(size=discrete.layout.size)
    lam_g = rng.normal(size=discrete.lower_g.size)
    jacobian = [np.asarray(m.full()) for m in derivatives["jac_g"](w, [])]
    compiled_jacobian = [np.asarray(m.full()) for m in second.functions["nlp_jac_g"](w, [])]
    for ours, theirs in zip(compiled_jacobian, jacobian):
        assert np.allclose(ours, theirs, rtol=1e-13, atol=1e-13)
    hessian = derivatives["hess_lag"](w, [], 0.7, lam_g).full()
    assert np.allclose(second.functions["nlp_hess_l"](w, [], 0.7, lam_g).full(), hessian, rtol=1e-13, atol=1e-12)
    # Another problem structure is another library.
    third = compiled_nlp(transcribe(coupled_problem().compile(), HermiteSimpson(7)))
    assert third.compiled_now and third.library != first.library


def test_without_a_compiler_the_solve_runs_uncompiled(tmp_path, monkeypatch):
    monkeypatch.setenv("TRAJOPT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CC", "no-such-compiler-xyz")
    monkeypatch.setenv("PATH", str(tmp_path))
    ocp = coupled_problem()
    with pytest.warns(UserWarning, match="no C compiler"):
        solution = ocp.solve(HermiteSimpson(6), Ipopt(tol=1e-8, compiled=True))
    assert solution.success
