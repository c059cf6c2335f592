"""``trajopt inverse-dynamics MODEL.osim MOTION.mot [--external-loads LOADS.xml] [--cutoff HZ] [--out DIR]``.

OpenSim's InverseDynamicsTool: generalized forces (``<coordinate>_moment`` for rotational coordinates,
``<coordinate>_force`` otherwise) that reproduce the motion with gravity and the external loads, muscles off.
Without ``--cutoff`` the coordinates are not filtered. As OpenSim's tool, the kinematic constraints are not
enforced in the dynamics: the dependent coordinates of couplers get the generalized force their own motion needs.
Writes ``DIR/inverse_dynamics.sto`` (OpenSim's default file name).
"""

from __future__ import annotations

import argparse
from trajopt.studies.analysis.inverse_dynamics import motion_kinematics, solve_inverse_dynamics
from trajopt.edge.cli.options import add_cutoff, add_out, out_folder
from trajopt.errors import TrajoptInputError
from trajopt.studies.analysis.external_loads_file import read_external_loads
from trajopt.model.io import write_sto
from trajopt.model.musculoskeletal.model_forces import model_applied_forces
from trajopt.edge.tools.common import add_model_and_motion, check_cutoff, forces_operators, load_tool_input

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = "inverse dynamics of a motion with external loads (OpenSim's InverseDynamicsTool)"

FILE = "inverse_dynamics.sto"  # the file inside --out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt inverse-dynamics",
                                     description="Inverse dynamics of a motion (OpenSim's InverseDynamicsTool).")
    add_model_and_motion(parser)
    add_cutoff(parser)
    add_out(parser, "inverse-dynamics")
    args = parser.parse_args(argv)
    out = out_folder(args.out, create=False) / FILE
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
        write_sto(out_folder(args.out) / FILE, result.generalized_forces_table())
    except OSError as error:
        raise TrajoptInputError(f"--out {out}: cannot write ({error.strerror})") from None
    print(f"inverse dynamics of {result.times.size} frames "
          f"({'filter: ' + format(cutoff, 'g') + ' Hz' if cutoff else 'no filter'}"
          f"{', external loads: ' + args.external_loads if loads else ''}; {data.unit.describe()}) written to {out}")
    return 0
