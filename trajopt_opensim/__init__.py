"""OpenSim-side tasks for trajopt, run in a separate process.

OpenSim's Python wheel bundles its own build of libcasadi, which is ABI-incompatible with
the casadi wheel trajopt uses; the two cannot be loaded into one interpreter. Every use of
OpenSim (validation, path sampling, benchmarks) therefore runs here, in a child process that
imports opensim and numpy but never casadi or trajopt.

Each task is a module ``trajopt_opensim.<task>`` with a ``run(request: dict) -> dict``
function. ``trajopt.model.io.opensim_reference.run_opensim_task`` starts the child with
``python -m trajopt_opensim <task> request.npz result.npz``.
"""
