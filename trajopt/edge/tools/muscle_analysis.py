"""``trajopt muscle-analysis MODEL.osim MOTION.mot [--paths FILE] --out DIR``: OpenSim's MuscleAnalysis lengths and
moment arms along a motion.

Writes ``DIR/lengths.sto`` (musculotendon lengths, m) and ``DIR/moment_arms_<coordinate>.sto`` (m or
dimensionless, one column per muscle) with OpenSim's ``computeMomentArm`` sign (positive when the muscle's
shortening increases the coordinate). With CoordinateCouplerConstraints the moment arms are about the
independent coordinates along the coupled motion (R C, the generalized-force method); the dependent coordinates
get no file. Paths: ``--paths`` (.json or FunctionBasedPathSet .xml) or the model's geometric paths, wrapped over
cylinders, spheres and ellipsoids as OpenSim computes them, moment arms by OpenSim's generalized-force method
(muscles over tori are straight lines: said on the
terminal).
"""

from __future__ import annotations

import argparse
import numpy as np

from trajopt.edge.cli.options import add_out
from trajopt.errors import TrajoptInputError
from trajopt.model.io import Table, write_sto
from trajopt.model.paths.geometric import GeometricPaths
from trajopt.edge.tools.common import add_model_and_motion, load_tool_input, output_folder
from trajopt.model.paths.files import read_paths

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = "muscle lengths and moment arms along a motion (OpenSim's MuscleAnalysis)"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt muscle-analysis",
                                     description="Muscle lengths and moment arms along a motion "
                                                 "(OpenSim's MuscleAnalysis).")
    add_model_and_motion(parser, loads=False)
    parser.add_argument("--paths", metavar="FILE", help="muscle paths: trajopt .json or OpenSim FunctionBasedPathSet "
                                                        ".xml (default: the model's geometric paths)")
    add_out(parser, "muscle-analysis")
    args = parser.parse_args(argv)
    folder = output_folder(args.out)
    data = load_tool_input(args.model, args.motion)
    if not data.osim.muscles:
        raise TrajoptInputError(f"{args.model}: the model has no muscles, so no muscle lengths or moment arms")
    if args.paths is None:
        # OpenSim's MuscleAnalysis reports computeMomentArm: the generalized-force method on the wrapped path.
        paths = GeometricPaths(data.osim, generalized_force_moment_arms=True)
    else:
        paths = read_paths(args.paths, data.osim)
    mb = data.osim.multibody
    unknown = [m for m in paths.muscles if m not in {s.name for s in data.osim.muscles}]
    if unknown:
        raise TrajoptInputError(f"{args.paths}: paths for muscles the model does not have: {unknown[:5]}")
    if args.paths is None:
        print(f"building the geometric paths of {len(paths.muscles)} muscles (wrapping as OpenSim) ...", flush=True)
    function = paths.lengths_and_moment_arms_function(tuple(mb.coordinate_names))
    q = data.motion.data
    print(f"evaluating {q.shape[0]} frames ...", flush=True)
    lengths, arms = function.map(q.shape[0])(q.T)
    lengths = np.asarray(lengths).T  # (frames, muscles)
    arms = np.asarray(arms).reshape(len(paths.muscles), q.shape[0], mb.nq).transpose(1, 0, 2)  # [R(t0) | R(t1) ...]
    coupling = data.constraints.coupling_matrix(q)  # (frames, nv, independent); identity without couplers
    arms = np.einsum("fmq,fqk->fmk", arms, coupling)
    muscles = tuple(paths.muscles)
    written = [write_sto(folder / "lengths.sto", Table(data.motion.time, muscles, lengths, name="Length"))]
    for k, coordinate in enumerate(data.constraints.independent_speeds):
        written.append(write_sto(folder / f"moment_arms_{coordinate}.sto",
                                 Table(data.motion.time, muscles, arms[:, :, k], name=f"MomentArm_{coordinate}")))
    for note in data.notes:
        print(f"note: {note}")
    for warning in data.warnings:
        print(f"warning: {warning}")
    outside = paths.domain_report(q, tuple(mb.coordinate_names), data.motion.time).warning()
    if outside:  # polynomial surrogates extrapolate there
        print(outside)
    wrapped = list(getattr(paths, "wrapped_muscles", ()))
    if wrapped:
        print(f"note: geometric paths ignore wrap objects; {len(wrapped)} muscle(s) are straight "
              f"lines: {', '.join(wrapped[:6])}")
    print(f"muscle analysis of {len(muscles)} muscles over {q.shape[0]} frames ({data.unit.describe()}): "
          f"{len(written)} files in {folder}")
    return 0
