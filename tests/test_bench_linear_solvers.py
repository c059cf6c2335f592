"""``trajopt bench linear-solvers``: reading MUMPS's and IPOPT's own reports, and one child run checked against
what IPOPT's algorithm and the KKT matrix's inertia say it must have done."""

from pathlib import Path

import pytest

from trajopt.benchmarks.linear_solvers import markdown, mumps_counters, run, summarize_counters

DATA = Path(__file__).parent / "data" / "mumps_ipopt_output.txt"


def test_counters_read_mumps_and_ipopt_reports():
    found = mumps_counters(DATA.read_text())
    assert found["factorization_s"] == [0.0161]
    assert found["operations"] == [7.407e7]
    assert found["factor_entries"] == [554621]
    assert found["largest_front"] == [242]
    assert found["delayed_pivots"] == [770]
    assert found["negative_pivots"] == [2449]
    assert found["solve_s"] == [0.0018]
    assert found["ipopt_total_s"] == 0.078  # the wall figure, not the CPU one
    assert found["ipopt_total_cpu_s"] == 0.070 and found["function_evaluations_cpu_s"] == 0.005
    assert found["linear_system_cpu_s"] == 0.0
    assert found["linear_system_s"] == 0.0
    assert found["function_evaluations_s"] == 0.005
    summary = summarize_counters(found, iterations=0)
    assert summary["factorizations"] == 1 and summary["gflops"] == pytest.approx(7.407e7 / 16.1e6)


def test_child_run_matches_ipopt_and_the_kkt_inertia():
    """At max_iter 0 IPOPT factors one matrix, [I Jᵀ; J 0] for its least-squares multiplier estimate; with J of
    full rank its inertia has exactly one negative eigenvalue per constraint. 2D gait, 25 intervals, 51 grid
    points: 38 x 2 x 25 defects + 10 x 51 dynamics residuals + 39 end, symmetry and speed rows = 2449 constraints;
    (38 states + 19 controls + 10 accelerations) x 51 + duration + initial time = 3419 variables."""
    result = run({"intervals": 25, "max_iter": 0, "compiled": False})
    assert "error" not in result, result.get("error")
    assert result["factorizations"] == 1
    assert result["negative_pivots_first"] == 2449 == result["kkt_rows"] - 3419
    assert result["factorization_total_s"] <= result["child_wall_s"]
    text = markdown({"loadavg_start": 0.0, "hsl_library": None, "where_the_time_goes": result,
                     "scaling": [result], "solvers": [result]})
    assert "No HSL library" in text


def test_a_failed_run_is_one_line_and_bad_options_exit_2(capsys):
    """An HSL solver without libhsl: the child's one-line error (naming libhsl) becomes the run's row, and the
    report still renders; an unknown solver or a one-interval mesh is argparse's one-line error."""
    from trajopt.benchmarks.linear_solvers import main
    from trajopt.core.ocp.linear_algebra import hsl_library

    result = run({"intervals": 25, "max_iter": 0, "compiled": False, "linear_solver": "ma57"})
    if hsl_library() is None:
        assert "needs the HSL library (libhsl)" in result["error"] and "\n" not in result["error"]
        text = markdown({"loadavg_start": 0.0, "hsl_library": None, "where_the_time_goes": result,
                         "scaling": [result], "solvers": [result]})
        assert "gait2d 25 ma57: failed (" in text and "| ma57 | failed: " in text
    else:
        assert result["status"] == "Maximum_Iterations_Exceeded" and result["factorizations"] == 0
    for argv, message in ((["--solvers", "superlu"], "invalid choice: 'superlu'"),
                          (["--intervals", "1"], "need --intervals >= 2")):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2 and message in capsys.readouterr().err


def test_orderings_change_the_fill_not_the_inertia():
    """``--orderings``: MUMPS reports using the ordering asked for, and a symmetric permutation changes the factors'
    fill, never the inertia (Sylvester's law): every ordering finds one negative pivot per constraint of the 2D gait
    at 25 intervals (2449, as above); the full-solve table places objectives against METIS's."""
    from trajopt.benchmarks.linear_solvers import ordering_options, relative_to

    results = {name: run({"intervals": 25, "max_iter": 0, "compiled": False, "options": ordering_options(name)})
               for name in ("amd", "metis")}
    for name, result in results.items():
        assert "error" not in result, result.get("error")
        assert result["ordering_used"] == name
        assert result["negative_pivots_first"] == 2449
    assert results["amd"]["factor_entries_max"] != results["metis"]["factor_entries_max"]
    assert ordering_options("metis-no-scalings") == {"mumps_permuting_scaling": 0, "mumps_scaling": 0,
                                                     "mumps_pivot_order": 5}
    assert relative_to(1.000002, 1.0) == "+2.0e-06" and relative_to(1.0, None) == "–"
