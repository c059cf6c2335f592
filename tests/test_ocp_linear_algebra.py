"""Threads and linear-solver settings under IPOPT (trajopt.core.ocp.linear_algebra)."""

import pytest

from ocp_problems import double_integrator
from trajopt.errors import TrajoptInputError
from trajopt.core.ocp import HermiteSimpson, Ipopt
from trajopt.core.ocp.linear_algebra import (MUMPS_OPTIONS, blas_threads, hsl_library, linear_solver_options,
                                             set_blas_threads)


def test_mumps_uses_metis_and_a_100_percent_memory_margin_unless_overridden():
    options = Ipopt().nlpsol_options(warm=False)["ipopt"]
    assert options["linear_solver"] == "mumps"
    assert options["mumps_pivot_order"] == 5 and options["mumps_mem_percent"] == 100
    assert Ipopt(options={"mumps_pivot_order": 7}).nlpsol_options(warm=False)["ipopt"]["mumps_pivot_order"] == 7
    assert linear_solver_options("mumps") == {"linear_solver": "mumps", **MUMPS_OPTIONS}


def test_blas_threads_are_one_during_the_solve_and_restored_after():
    if blas_threads() is None:
        pytest.skip("this casadi has no OpenBLAS")
    previous = set_blas_threads(2)
    try:
        seen = []
        settings = Ipopt(tol=1e-8)
        with settings.threads_set():
            seen.append(blas_threads())
        assert seen == [1] and blas_threads() == 2
        ocp, *_ = double_integrator()
        assert ocp.solve(HermiteSimpson(10), settings).objective == pytest.approx(12.0, rel=1e-6)
        assert blas_threads() == 2
    finally:
        set_blas_threads(previous)
    with pytest.raises(TrajoptInputError, match="threads"):
        Ipopt(threads=-1)


def test_hsl_solvers_need_the_users_library():
    if hsl_library() is not None:
        assert linear_solver_options("ma57")["hsllib"] == hsl_library()
    else:
        with pytest.raises(TrajoptInputError, match="libhsl"):
            Ipopt(linear_solver="ma57").nlpsol_options(warm=False)
