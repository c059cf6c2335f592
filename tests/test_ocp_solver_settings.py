"""Every solver setting trajopt offers reaches the analytic optimum of the double integrator and the sliding mass.

The settings are those a user can pass where an ``Ipopt`` goes: the exact and the limited-memory Hessian, the NLP
derivatives built point by point or by nlpsol (expanded or not), the bounds' scaling, the barrier strategy, IPOPT's
inertia-free curvature test, BLAS threads, MUMPS without its MC64 permutation, compiled NLP functions, and mesh
continuation (directly and through each ``SolverRoute``). Analytic optima: the double integrator's rest-to-rest
minimum effort J* = 12 (u* = 6 - 12 t) and the sliding mass's minimum time 2 s (bang-bang: 1 m/s² for 1 s, then
-1 m/s² for 1 s).
"""

import pytest

from ocp_problems import double_integrator, sliding_mass
from trajopt.core.ocp import HermiteSimpson, Hessian, Ipopt, MeshContinuation, SolverRoute, route_solver

TOL = 1e-10
EXACT = 1e-8  # relative: the optimum to IPOPT's tolerance
# The limited-memory Hessian converges linearly: it is asked for 1e-8 and checked to a looser tolerance.
QUASI_NEWTON = 1e-6
LIMITED_MEMORY = Ipopt(tol=1e-8, hessian=Hessian.LIMITED_MEMORY)

# name -> (settings, relative tolerance on the optimum)
SETTINGS = {
    "exact Hessian": (Ipopt(tol=TOL), EXACT),
    "limited-memory Hessian": (LIMITED_MEMORY, QUASI_NEWTON),
    "nlpsol derivatives, expanded": (Ipopt(tol=TOL, point_derivatives=False), EXACT),
    "nlpsol derivatives, not expanded": (Ipopt(tol=TOL, point_derivatives=False, expand=False), EXACT),
    "no scaling from bounds": (Ipopt(tol=TOL, scale_from_bounds=False), EXACT),
    "adaptive barrier": (Ipopt(tol=TOL, options={"mu_strategy": "adaptive",
                                                 "adaptive_mu_globalization": "never-monotone-mode"}), EXACT),
    "curvature test": (Ipopt(tol=TOL, options={"neg_curv_test_tol": 1e-12}), EXACT),
    "first Hessian shift": (Ipopt(tol=TOL, options={"first_hessian_perturbation": 1e-2}), EXACT),
    "BLAS threads left to the library": (Ipopt(tol=TOL, threads=0), EXACT),
    "MUMPS without its MC64 permutation (walk3d-inverse's)": (Ipopt(tol=TOL, options={"mumps_permuting_scaling": 0}),
                                                               EXACT),
    "mesh continuation": (MeshContinuation(Ipopt(tol=TOL)), EXACT),
    "mesh continuation, limited-memory Hessian": (MeshContinuation(LIMITED_MEMORY), QUASI_NEWTON),
    "mesh-continuation route, adaptive coarse mesh": (route_solver(Ipopt(tol=TOL), SolverRoute.MESH_CONTINUATION,
                                                                   {"mu_strategy": "adaptive"}), EXACT),
}
# Compiling C code takes seconds per problem: marked slow.
CASES = [*(pytest.param(*value, id=name) for name, value in SETTINGS.items()),
         pytest.param(Ipopt(tol=TOL, compiled=True), EXACT, id="compiled", marks=pytest.mark.slow)]


@pytest.mark.parametrize(("settings", "tolerance"), CASES)
def test_double_integrator_minimum_effort_is_twelve_under_every_setting(settings, tolerance):
    ocp, *_ = double_integrator()
    # Hermite-Simpson is exact for the cubic optimum on any mesh. (On 16 intervals the limited-memory Hessian's line
    # search gives up 1e-8 (relative) above the optimum, at any tolerance: Error_In_Step_Computation.)
    solution = ocp.solve(HermiteSimpson(intervals=20), settings)
    assert solution.success, solution.status
    assert solution.objective == pytest.approx(12.0, rel=tolerance)


@pytest.mark.parametrize(("settings", "tolerance"), CASES)
def test_sliding_mass_minimum_time_is_two_seconds_under_every_setting(settings, tolerance):
    ocp, *_ = sliding_mass()
    solution = ocp.solve(HermiteSimpson(intervals=20), settings)
    assert solution.success, solution.status
    assert solution.duration == pytest.approx(2.0, rel=tolerance)
