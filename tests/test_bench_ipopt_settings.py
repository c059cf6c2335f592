"""The IPOPT settings study's bookkeeping (trajopt bench ipopt-settings): which runs count as the same optimum."""

from trajopt.bench.ipopt_settings import markdown, summarize


def _run(objective, success=True, iterations=10, speed=1.2, intervals=50):
    status = "Solve_Succeeded" if success else "Maximum_Iterations_Exceeded"
    return {"intervals": intervals, "speed": speed, "status": status, "success": success,
            "iterations": iterations, "objective": objective, "ipopt_s": 1.0, "ms_per_iteration": 100.0, "loadavg": 0.0}


def test_other_optimum_and_failures_are_counted_against_the_default():
    runs = {"default": {"meshes": [_run(0.1341455)], "speeds": [_run(0.05, speed=0.8), _run(0.15, speed=1.3),
                                                                 _run(0.2, speed=1.5)]},
            "mu-init": {"meshes": [_run(0.1341505, iterations=7)],
                             "speeds": [_run(0.0500009, speed=0.8), _run(0.17, success=False, speed=1.3),
                                        _run(0.1996, speed=1.5)]}}
    rows = summarize(runs, [50], [0.8, 1.3, 1.5])
    tuned = rows[1]
    assert tuned["meshes"][0]["same_optimum"] is False  # 5e-6 above the default's objective: another optimum
    assert abs(tuned["meshes"][0]["objective_difference"] - 5e-6) < 1e-12
    assert tuned["speeds_converged"] == 2 and tuned["speeds_failed"] == [1.3]
    assert tuned["speeds_other_optimum"] == [1.5]  # 0.8 differs by 9e-7: the same optimum; 1.3 failed
    assert tuned["speeds_lower_objective"] == [1.5] and tuned["sweep_iterations"] == 30
    table = markdown(rows, [50], [0.8, 1.3, 1.5])
    assert "2/3 (failed at 1.3 m/s)" in table and "| 1.5 (lower objective at 1) |" in table
