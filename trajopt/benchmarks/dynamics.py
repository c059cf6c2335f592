"""Benchmark ``trajopt bench dynamics``: time per call of inverse and forward dynamics, trajopt vs
OpenSim, for arm26 and 2D_gait, measured in the same run (OpenSim in its child process).

trajopt is timed three ways on the same random states: one call of the casadi Function from
Python on numpy arrays (includes casadi's Python overhead), one call of the Function mapped over
all states divided by their number (the cost inside an optimizer's evaluation), and the same map
compiled to C (casadi code generation + the system C compiler, -O2) when a compiler is found.
OpenSim: InverseDynamicsSolver.solve and Model.realizeAcceleration after writing q and u (so
kinematics are recomputed each call), forces off. Writes ./trajopt_results/benchmarks/dynamics.json (or --out).
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

import casadi as ca
import numpy as np

from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import COUNT, add_hidden_alias, add_report_out, report_file
from trajopt.model.io.output import create_folder
from trajopt.core.multibody import forward_dynamics, inverse_dynamics
from trajopt.model.io.opensim_reference import opensim_available, run_opensim_task
from trajopt.model.osim import OsimIgnoredWarning, load_osim
from trajopt.benchmarks.timing import seconds_per_call

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = 'inverse/forward dynamics per call, arm26 and 2D_gait: trajopt vs OpenSim'

PROBLEMS = Path(__file__).resolve().parent.parent / "examples"
MODELS = {"arm26": PROBLEMS / "arm26" / "arm26.osim", "gait2d": PROBLEMS / "gait2d" / "2D_gait.osim"}




def _compiled(function: ca.Function, folder: Path) -> ca.Function | None:
    """``function`` compiled to a shared library with casadi's C code generation, or None without gcc."""
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        return None
    generator = ca.CodeGenerator(f"{function.name()}.c", {"with_header": False})
    generator.add(function)
    generator.generate(f"{folder}/")
    source = folder / f"{function.name()}.c"
    library = folder / f"{function.name()}.so"
    subprocess.run([compiler, "-O2", "-fPIC", "-shared", str(source), "-o", str(library)], check=True)
    return ca.external(function.name(), str(library))


def _trajopt_timings(model, q, u, udot, folder: Path | None) -> tuple[dict, np.ndarray]:
    multibody = model.multibody
    count = len(q)
    qs, us, udots = (ca.SX.sym(name, multibody.nq if name == "q" else multibody.nv) for name in ("q", "u", "udot"))
    tau_symbol = ca.SX.sym("tau", multibody.nv)
    inverse = ca.Function("inverse_dynamics_" + model.name.replace(" ", "_").lower(), [qs, us, udots],
                          [inverse_dynamics(multibody, qs, us, udots)], ["q", "u", "udot"], ["tau"])
    forward = ca.Function("forward_dynamics_" + model.name.replace(" ", "_").lower(), [qs, us, tau_symbol],
                          [forward_dynamics(multibody, qs, us, tau_symbol)], ["q", "u", "tau"], ["udot"])
    # Expand to one flat SX graph (what an optimizer would evaluate) before timing.
    inverse, forward = inverse.expand(), forward.expand()
    tau = np.asarray(inverse.map(count)(q.T, u.T, udot.T)).T
    result = {}
    for label, function, arguments in (("inverse_dynamics", inverse, (q, u, udot)),
                                       ("forward_dynamics", forward, (q, u, tau))):
        rows = [tuple(a[k] for a in arguments) for k in range(count)]
        columns = tuple(a.T for a in arguments)
        mapped = function.map(count)
        entry = {
            "python_call_s": seconds_per_call(lambda: [function(*row) for row in rows], count),
            "mapped_s": seconds_per_call(lambda: mapped(*columns), count),
            "sx_nodes": int(function.n_instructions()),
        }
        compiled = None if folder is None else _compiled(mapped, folder)
        if compiled is not None:
            entry["compiled_mapped_s"] = seconds_per_call(lambda: compiled(*columns), count)
        result[label] = entry
    return result, tau


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench dynamics", description=description(__doc__))
    parser.add_argument("--states", type=COUNT, default=200, help="random states per model (default 200)")
    add_report_out(parser)
    add_hidden_alias(parser, "--output", "out", type=Path)
    parser.add_argument("--no-codegen", action="store_true", help="skip the C-compiled variant")
    args = parser.parse_args(argv)
    args.out = report_file(args.out, "dynamics")  # the report file inside the --out folder
    rng = np.random.default_rng(0)
    report = {"machine": platform.platform(), "processor": platform.processor(), "casadi": ca.__version__,
              "states": args.states, "models": {}}
    with tempfile.TemporaryDirectory(prefix="trajopt_bench_") as folder:
        for name, path in MODELS.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", OsimIgnoredWarning)
                model = load_osim(path)
            coordinates = model.spec.coordinates
            low = np.maximum([c.range[0] for c in coordinates], -np.pi)
            high = np.minimum([c.range[1] for c in coordinates], np.pi)
            n = len(coordinates)
            q_osim = rng.uniform(low, high, (args.states, n))
            u_osim = rng.uniform(-5, 5, (args.states, n))
            udot_osim = rng.uniform(-50, 50, (args.states, n))
            names = [c.name for c in coordinates]
            order = [names.index(c) for c in model.multibody.coordinate_names]
            entry = {"nq": model.multibody.nq, "bodies": len(model.multibody.bodies)}
            entry["trajopt"], tau = _trajopt_timings(model, q_osim[:, order], u_osim[:, order],
                                                     udot_osim[:, order], None if args.no_codegen else Path(folder))
            if opensim_available():
                report.setdefault("opensim", run_opensim_task("echo_version", {})["version"])
                reference = run_opensim_task("osim_inverse_dynamics", {"model": str(path), "q": q_osim, "u": u_osim,
                                                                       "udot": udot_osim, "repeat": 5})
                entry["opensim"] = {"inverse_dynamics_s": reference["seconds_inverse_dynamics"],
                                    "forward_dynamics_s": reference["seconds_forward_dynamics"],
                                    "set_state_s": reference["seconds_set_state"]}
                entry["max_abs_tau_difference"] = float(np.abs(tau - reference["tau"][:, order]).max())
            report["models"][name] = entry
            print(f"{name}: {json.dumps(entry, indent=1)}")
    output = Path(args.out)
    create_folder(output.parent)
    output.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {output}")
    return 0
