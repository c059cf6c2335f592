"""The "trajopt cells" rows of ``trajopt run path-fits`` for walk3d (cases ``walk3d-cells``,
``walk3d-band-cells``): added to a walk3d case already in OUT/cases.json without redoing its other rows.

The muscles that miss the targets with trajopt's one polynomial (the case's "trajopt" row) get a cell tree
(``trajopt.paths.domain_cells``) on a larger training sample (the case's training configurations plus fresh
ones, another seed, ``--cells-samples`` in all), split first along their length-jump surfaces, found
automatically on trajopt's geometric path of the model (``trajopt.paths.jump_cuts``; it equals OpenSim's
lengths). The other muscles keep that one polynomial: their entries are the "trajopt" row's. Scored on the
case's own held-out samples (so the rows compare) and on ``--cells-heldout`` fresh configurations (a third
seed): a few hundred points say little about the 0.1 %-volume pockets of glmax1.
"""

from __future__ import annotations

import time

import numpy as np

from trajopt.osim.operators import load_processed
from trajopt.paths.domain_cells import TreeSettings, fit_domain_cells
from trajopt.paths.domain_pieces import geometric_lengths, heldout_rms
from trajopt.paths.fitting import ACCURATE
from trajopt.paths.jump_cuts import jump_cuts, scan_configurations
from trajopt.paths.samples import PathSamples

POCKET = 0.1  # m: fresh held-out points this far off the cells are counted apart (glmax1's pockets)


def tree_settings(coordinates) -> TreeSettings:
    """Smallest cell (fitting rows per coordinate): 50 over one coordinate (vaslat's kink at 138.4 deg knee sits
    in the top 1.6 deg), 300 rows in all over several (measured on branch `cells`, issue 12)."""
    return TreeSettings(min_samples=50 if len(coordinates) == 1 else max(300 // len(coordinates), 1))


def _merge(first: PathSamples, second: PathSamples, muscles) -> PathSamples:
    rows = [first.muscles.index(m) for m in muscles], [second.muscles.index(m) for m in muscles]
    return PathSamples(first.coordinates, tuple(muscles), np.vstack([first.q, second.q]),
                       np.vstack([first.lengths[:, rows[0]], second.lengths[:, rows[1]]]),
                       np.concatenate([first.moment_arms[:, rows[0]], second.moment_arms[:, rows[1]]]),
                       first.crosses)


def run_cells(saved: dict, model, domain, train: PathSamples, heldout: PathSamples, sampler, samples: int,
              fresh: int, targets: tuple[float, float], muscles=None, scan_budget: float = 120.0, progress=print,
              checkpoint=None) -> tuple[dict, dict]:
    """The "trajopt cells" entry of one saved case (``saved``: its cases.json entry, with the "trajopt" row) as
    ``Scores`` fields plus "cells" details; ``train``/``heldout``: the case's own samples. A muscle whose jump scan
    would take more than ``scan_budget`` s (its geometric path's cost) is fitted without cuts. Muscles are
    fitted one at a time; ``checkpoint(scores, details)`` is called after each (the entry so far)."""
    row = saved["trajopt"]
    failing = [m for m in row["length"] if row["length"][m] > targets[0] or row["arm"][m] > targets[1]]
    muscles = list(muscles or failing)
    coordinates = domain.coordinates
    start = time.perf_counter()
    extra = sampler.sample(coordinates, domain.sample(max(samples - train.size, 0), 2), muscles)
    large = sampler.sample(coordinates, domain.sample(fresh, 3), muscles)
    sampling = time.perf_counter() - start
    cells_train = _merge(train, extra, muscles)
    progress(f"cells: {cells_train.size} training + {large.size} fresh held-out configurations for "
             f"{', '.join(muscles)} ({sampling:.0f} s)")
    box = domain.ranges
    if domain.is_band:  # the band's bounding box (frames ± band, clipped to the ranges): held-out points lie in it
        box = np.column_stack([np.maximum(domain.frames - domain.band[:, 0], domain.ranges[:, 0]).min(axis=0),
                               np.minimum(domain.frames + domain.band[:, 1], domain.ranges[:, 1]).max(axis=0)])
    ranges = {c: tuple(box[i]) for i, c in enumerate(coordinates)}
    crossed = {m: tuple(saved["crossed"][m]) for m in muscles}
    osim, couplings = load_processed(model)
    start = time.perf_counter()
    scans, surfaces = {}, {}
    for muscle in muscles:
        names = crossed[muscle]
        box = {c: ranges[c] for c in names}
        lengths = geometric_lengths(osim, muscle, names, couplings)
        probe = time.perf_counter()
        lengths(domain.sample(200, 4)[:, [coordinates.index(c) for c in names]])
        cost = (time.perf_counter() - probe) / 200
        estimate = cost * scan_configurations(names, box)
        if estimate > scan_budget:  # walk3d gaslat: 22 ms per configuration, the scan would take ~5 min
            surfaces[muscle] = (f"not scanned (trajopt's geometric path {cost * 1e3:.1f} ms "
                                f"per configuration: ~{estimate:.0f} s)")
        else:
            scans[muscle] = jump_cuts(lengths, names, box, source=muscle)
            surfaces[muscle] = scans[muscle].describe()
        progress(f"cells: {muscle} jump surfaces: {surfaces[muscle]}")
    locating = time.perf_counter() - start
    scores = {key: dict(row[key]) for key in ("length", "arm", "terms")}
    details = {"muscles": [], "train": cells_train.size, "fresh_heldout": large.size, "sampling_seconds": sampling,
               "locating_seconds": locating, "seconds": {}, "surfaces": {}, "cells": {}, "fresh": {}, "pockets": {}}
    earlier = saved.get("cells", {})
    if "trajopt cells" in saved and earlier.get("train") == cells_train.size:  # keep other muscles' earlier cells
        for key in ("length", "arm", "terms"):
            scores[key].update({m: saved["trajopt cells"][key][m] for m in earlier["muscles"] if m not in muscles})
        details["muscles"] = [m for m in earlier["muscles"] if m not in muscles]
        for key in ("seconds", "surfaces", "cells", "fresh", "pockets"):
            details[key] = {m: v for m, v in earlier.get(key, {}).items() if m in details["muscles"]}
    entry = None
    for muscle in muscles:  # one at a time: ``checkpoint`` keeps each finished muscle
        paths, seconds = fit_domain_cells(cells_train, ACCURATE, ranges=ranges, coordinates={muscle: crossed[muscle]},
                                          cuts={muscle: scans[muscle].cuts} if muscle in scans else {},
                                          trees={muscle: tree_settings(crossed[muscle])}, progress=progress,
                                          muscles=(muscle,))
        path = paths[muscle]
        scores["length"][muscle], scores["arm"][muscle] = heldout_rms(path, heldout)
        scores["terms"][muscle] = path.terms
        details["muscles"].append(muscle)
        details["seconds"][muscle] = seconds[muscle]
        details["fresh"][muscle] = heldout_rms(path, large)
        lengths, arms = path.evaluate(large.q[:, large.columns(path.coordinates)])
        true_lengths, true_arms = large.muscle(muscle)
        far = np.abs(lengths - true_lengths) > POCKET
        details["pockets"][muscle] = (int(far.sum()), float(np.sqrt(np.mean((lengths - true_lengths)[~far] ** 2))),
                                      float(np.sqrt(np.mean((arms - true_arms[:, large.columns(path.coordinates)])[
                                          ~far] ** 2))))
        details["cells"][muscle] = len(path.pieces)
        details["surfaces"][muscle] = surfaces[muscle]
        progress(f"cells: {muscle}: {len(path.pieces)} cells, {path.terms} terms, held-out {heldout.size}: "
                 f"{scores['length'][muscle] * 1e3:.3f} / {scores['arm'][muscle] * 1e3:.3f} mm, {large.size}: "
                 f"{details['fresh'][muscle][0] * 1e3:.3f} / {details['fresh'][muscle][1] * 1e3:.3f} mm "
                 f"({seconds[muscle]:.0f} s)")
        done = details["muscles"]
        fresh_meets = sum(a <= targets[0] and b <= targets[1] for a, b in details["fresh"].values())
        chosen = (f"the {len(failing)} muscles missing the targets with one polynomial" if set(done) | set(
            muscles) == set(failing) else f"{', '.join(sorted(set(done) | set(muscles)))} ({len(failing)} miss the "
                                          f"targets with one polynomial)")
        unfinished = (f" (fitted {len(done)} of them; the others keep one polynomial)"
                      if len(set(done)) < len(set(done) | set(muscles)) else "")
        note = (f"cells for {chosen}{unfinished} ({cells_train.size} training samples: the case's + fresh); the "
                f"others keep their one polynomial (trajopt row); surfaces found in {locating:.0f} s; on "
                f"{large.size} fresh held-out {fresh_meets}/{len(done)} of these meet the targets (per-muscle table)")
        entry = {**{k: dict(v) for k, v in scores.items()}, "seconds": float(sum(details["seconds"].values())),
                 "note": note}, details
        if checkpoint is not None:
            checkpoint(*entry)
    return entry
