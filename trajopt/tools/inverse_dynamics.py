"""``trajopt inverse-dynamics MODEL.osim MOTION.mot [--external-loads LOADS.xml] [--cutoff HZ] --out OUT.sto``.

OpenSim's InverseDynamicsTool: generalized forces (``<coordinate>_moment`` for rotational coordinates,
``<coordinate>_force`` otherwise) that reproduce the motion with gravity and the external loads, muscles off.
Without ``--cutoff`` the coordinates are not filtered. As OpenSim's tool, the kinematic constraints are not
enforced in the dynamics: the dependent coordinates of couplers get the generalized force their own motion needs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from trajopt.analysis.inverse_dynamics import motion_kinematics, solve_inverse_dynamics
from trajopt.errors import TrajoptInputError
from trajopt.analysis.external_loads_file import read_external_loads
from trajopt.io import write_sto
from trajopt.musculoskeletal.model_forces import model_applied_forces
from trajopt.tools.common import add_model_and_motion, check_cutoff, forces_operators, load_tool_input

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = "inverse dynamics of a motion with external loads (OpenSim's InverseDynamicsTool)"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt inverse-dynamics",
                                     description="Inverse dynamics of a motion (OpenSim's InverseDynamicsTool).")
    add_model_and_motion(parser)
    parser.add_argument("--cutoff", type=float, metavar="HZ",
                        help="low-pass filter of the coordinates (OpenSim's: 3rd-order Butterworth); default none")
    parser.add_argument("--out", required=True, help="the .sto file to write")
    args = parser.parse_args(argv)
    out = Path(args.out)
    if out.suffix.lower() not in (".sto", ".mot"):
        raise TrajoptInputError(f"--out {out}: give a .sto file name")
    data = load_tool_input(args.model, args.motion, forces_operators(args))
    cutoff = check_cutoff(args.cutoff, data.motion)
    loads = read_external_loads(args.external_loads) if args.external_loads else None
    kinematics = motion_kinematics(data.motion, cutoff)
    result = solve_inverse_dynamics(data.osim.multibody, kinematics, data.rotational, external_loads=loads,
                                    applied_forces=model_applied_forces(data.osim))
    for note in data.notes:
        print(f"note: {note}")
    for warning in data.warnings:
        print(f"warning: {warning}")
    try:
        write_sto(out, result.generalized_forces_table())
    except OSError as error:
        raise TrajoptInputError(f"--out {out}: cannot write ({error.strerror})") from None
    print(f"inverse dynamics of {result.times.size} frames "
          f"({'filter: ' + format(cutoff, 'g') + ' Hz' if cutoff else 'no filter'}"
          f"{', external loads: ' + args.external_loads if loads else ''}; {data.unit.describe()}) written to {out}")
    return 0
