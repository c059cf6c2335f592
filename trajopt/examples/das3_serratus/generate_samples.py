"""Regenerate the DAS3 serratus anterior samples committed in this folder (needs OpenSim and the DAS3 model).

DAS3 (das3.osim, GPL-3.0) is only read here, never copied into the project. Steps:
1. humerothoracic elevation and plane of elevation of every frame of ``all_angles.mot`` (the chain
   SC(YZX) AC(YZX) GH(YZY) of DAS3's CustomJoints, all without frame offsets);
2. frames in the scapular plane (plane of elevation 40 ± 15 deg anterior to the frontal plane) with
   elevation <= 90 deg: the shoulder rhythm of abduction in the scapular plane;
3. training: 3000 of those frames drawn at random with Gaussian noise (2 deg) on the six SC and AC angles;
   held-out: 500 more drawn the same way with another seed;
4. OpenSim lengths and moment arms (computeMomentArm about SC_y, SC_z, SC_x, AC_y, AC_z, AC_x) of the middle
   serratus elements serr_ant_5, 6 and 7 at each configuration, and, without noise, at the selected frames
   (``rhythm.csv.gz``, used for the figure).

    python -m trajopt.examples.das3_serratus.generate_samples --model ../shared/models/das3/das3.osim \
        --motion ../shared/models/das3/all_angles.mot
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from trajopt.edge.cli.helptext import description
from trajopt.edge.tools.path_sampling import motion_coordinates, sample_paths

HERE = Path(__file__).resolve().parent
SHOULDER = ("SC_y", "SC_z", "SC_x", "AC_y", "AC_z", "AC_x")
CHAIN = (("Y", "SC_y"), ("Z", "SC_z"), ("X", "SC_x"), ("Y", "AC_y"), ("Z", "AC_z"), ("X", "AC_x"),
         ("Y", "GH_y"), ("Z", "GH_z"), ("Y", "GH_yy"))
MUSCLES = ("serr_ant_5", "serr_ant_6", "serr_ant_7")
SCAPULAR_PLANE = (25.0, 55.0)  # degrees anterior to the frontal plane
NOISE = np.deg2rad(2.0)


def _rotations(axis: str, angles: np.ndarray) -> np.ndarray:
    c, s = np.cos(angles), np.sin(angles)
    one, zero = np.ones_like(angles), np.zeros_like(angles)
    rows = {
        "X": [[one, zero, zero], [zero, c, -s], [zero, s, c]],
        "Y": [[c, zero, s], [zero, one, zero], [-s, zero, c]],
        "Z": [[c, -s, zero], [s, c, zero], [zero, zero, one]],
    }[axis]
    return np.moveaxis(np.array(rows), [0, 1], [-2, -1])


def humerothoracic_angles(angles: np.ndarray, names) -> tuple[np.ndarray, np.ndarray]:
    """Elevation (0 = arm down) and plane of elevation (0 = frontal plane, 90 = forward), degrees."""
    index = {n: i for i, n in enumerate(names)}
    rotation = np.broadcast_to(np.eye(3), (len(angles), 3, 3)).copy()
    for axis, name in CHAIN:
        rotation = rotation @ _rotations(axis, angles[:, index[name]])
    shaft = -rotation[:, :, 1]  # humerus y axis points from the elbow to the head
    elevation = np.degrees(np.arccos(np.clip(-shaft[:, 1], -1.0, 1.0)))
    plane = np.degrees(np.arctan2(shaft[:, 0], shaft[:, 2]))
    return elevation, plane


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trajopt.examples.das3_serratus.generate_samples",
                                     description=description(__doc__))
    parser.add_argument("--model", type=Path, required=True, help="das3.osim (GPL, not in the project)")
    parser.add_argument("--motion", type=Path, required=True, help="all_angles.mot of the DAS3 repository")
    parser.add_argument("--train", type=int, default=3000)
    parser.add_argument("--heldout", type=int, default=500)
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args(argv)

    names = SHOULDER + ("GH_y", "GH_z", "GH_yy")
    motion = motion_coordinates(args.motion, names)
    elevation, plane = humerothoracic_angles(motion, names)
    selected = (plane >= SCAPULAR_PLANE[0]) & (plane <= SCAPULAR_PLANE[1]) & (elevation <= 90.0)
    rhythm = motion[selected][:, :6]
    order = np.argsort(elevation[selected])
    print(f"{selected.sum()} of {len(motion)} frames in the scapular plane, elevation "
          f"{elevation[selected].min():.1f}-{elevation[selected].max():.1f} deg")

    def noisy(count, seed):
        rng = np.random.default_rng(seed)
        return rhythm[rng.integers(0, len(rhythm), count)] + rng.normal(0.0, NOISE, (count, 6))

    args.out.mkdir(parents=True, exist_ok=True)
    for name, q in (("train", noisy(args.train, 1)), ("heldout", noisy(args.heldout, 2)), ("rhythm", rhythm[order])):
        samples = sample_paths(args.model, SHOULDER, q, MUSCLES)
        samples = type(samples)(samples.coordinates, samples.muscles, samples.q, samples.lengths, samples.moment_arms,
                                {m: SHOULDER for m in MUSCLES})
        samples.to_csv(args.out / f"{name}.csv.gz")
        if name == "rhythm":
            np.savetxt(args.out / "rhythm_elevation.csv", elevation[selected][order], fmt="%.4f",
                       header="humerothoracic elevation (deg) of each row of rhythm.csv.gz", comments="# ")
        print(f"wrote {args.out / f'{name}.csv.gz'} ({samples.size} configurations)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
