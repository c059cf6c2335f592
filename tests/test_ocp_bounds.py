"""active_bounds on Moco's sliding mass: minimum time is bang-bang (force at +10 N then -10 N, t_f = 2 s)."""

import pytest

from trajopt.core.ocp import FinalTime, Free, HermiteSimpson, Ipopt, Problem
from trajopt.core.ocp.bounds import active_bounds


def sliding_mass(duration):
    ocp = Problem(duration=duration)
    x = ocp.state("position", bounds=(0.0, 1.0), initial=0.0, final=1.0)
    v = ocp.state("speed", bounds=(-100.0, 100.0), initial=0.0, final=0.0)
    force = ocp.control("force", bounds=(-10.0, 10.0))
    ocp.set_derivative(x, v)
    ocp.set_derivative(v, force / 10.0)
    ocp.minimize(FinalTime())
    return ocp.solve(HermiteSimpson(20), Ipopt(tol=1e-8))


def test_bang_bang_controls_are_on_both_bounds_and_nothing_else_is():
    solution = sliding_mass(Free(0.0, 10.0))
    assert solution.success and solution.duration == pytest.approx(2.0, abs=1e-6)
    found = {(b.name, b.side) for b in active_bounds(solution)}
    # position starts at 0 and ends at 1 (its bounds) but those points are pinned: not listed.
    assert found == {("force", "lower"), ("force", "upper")}


def test_a_final_time_bound_that_decides_the_answer_is_listed():
    solution = sliding_mass(Free(2.5, 10.0))
    bounds = active_bounds(solution)
    duration = [b for b in bounds if b.name == "duration"]
    assert len(duration) == 1 and duration[0].side == "lower" and duration[0].bound == 2.5
    assert "duration at its lower bound 2.5" in str(duration[0])
