"""The "trajopt cells" rows of ``trajopt run path-fits`` for walk3d (cases ``walk3d-cells``,
``walk3d-band-cells``): added to a walk3d case already in OUT/cases.json without redoing its other rows.

The muscles that miss the targets with trajopt's one polynomial (the case's "trajopt" row) get a cell tree
on a larger training sample (the case's training configurations plus fresh ones, another seed,
``--cells-samples`` in all), split first along their length-jump surfaces, found automatically on trajopt's
geometric path of the model (it equals OpenSim's lengths): ``trajopt.model.paths.jump_cells``, the recipe of
``trajopt fit-paths --cells``. The fitted trees are kept in OUT/<case>_cells.json (the tools' ``--paths``
format). The other muscles keep that one polynomial: their entries are the "trajopt" row's. Scored on the
case's own held-out samples (so the rows compare) and on ``--cells-heldout`` fresh configurations (a third
seed): a few hundred points say little about the 0.1 %-volume pockets of glmax1.
"""

from __future__ import annotations

import time

from trajopt.model.musculoskeletal.operators import load_processed
from trajopt.model.paths.domain_pieces import heldout_rms
from trajopt.model.paths.jump_cells import domain_box, jump_cell_trees, pocket_rms
from trajopt.model.paths.samples import PathSamples


def run_cells(saved: dict, model, domain, train: PathSamples, heldout: PathSamples, sampler, samples: int,
              fresh: int, targets: tuple[float, float], muscles=None, progress=print, checkpoint=None
              ) -> tuple[dict, dict]:
    """The "trajopt cells" entry of one saved case (``saved``: its cases.json entry, with the "trajopt" row) as
    ``Scores`` fields plus "cells" details; ``train``/``heldout``: the case's own samples. Muscles are fitted one
    at a time (``trajopt.model.paths.jump_cells``); ``checkpoint(scores, details, path)`` is called after each (the
    entry so far and the muscle's fitted cell tree)."""
    row = saved["trajopt"]
    failing = [m for m in row["length"] if row["length"][m] > targets[0] or row["arm"][m] > targets[1]]
    muscles = list(muscles or failing)
    coordinates = domain.coordinates
    start = time.perf_counter()
    extra = sampler.sample(coordinates, domain.sample(max(samples - train.size, 0), 2), muscles)
    large = sampler.sample(coordinates, domain.sample(fresh, 3), muscles)
    sampling = time.perf_counter() - start
    cells_train = train.stacked(extra, muscles)
    progress(f"cells: {cells_train.size} training + {large.size} fresh held-out configurations for "
             f"{', '.join(muscles)} ({sampling:.0f} s)")
    ranges = domain_box(domain)
    scores = {key: dict(row[key]) for key in ("length", "arm", "terms")}
    details = {"muscles": [], "train": cells_train.size, "fresh_heldout": large.size, "sampling_seconds": sampling,
               "locating_seconds": 0.0, "seconds": {}, "surfaces": {}, "cells": {}, "fresh": {}, "pockets": {}}
    earlier = saved.get("cells", {})
    if "trajopt cells" in saved and earlier.get("train") == cells_train.size:  # keep other muscles' earlier cells
        for key in ("length", "arm", "terms"):
            scores[key].update({m: saved["trajopt cells"][key][m] for m in earlier["muscles"] if m not in muscles})
        details["muscles"] = [m for m in earlier["muscles"] if m not in muscles]
        for key in ("seconds", "surfaces", "cells", "fresh", "pockets"):
            details[key] = {m: v for m, v in earlier.get(key, {}).items() if m in details["muscles"]}
    entry = None
    trees = jump_cell_trees(*load_processed(model), cells_train, {m: tuple(saved["crossed"][m]) for m in muscles},
                            ranges, progress=lambda line: progress(f"cells: {line}"))
    for search, path, seconds in trees:  # one at a time: ``checkpoint`` keeps each finished muscle
        muscle = search.muscle
        details["locating_seconds"] += search.seconds
        scores["length"][muscle], scores["arm"][muscle] = heldout_rms(path, heldout)
        scores["terms"][muscle] = path.terms
        details["muscles"].append(muscle)
        details["seconds"][muscle] = seconds
        details["fresh"][muscle] = heldout_rms(path, large)
        details["pockets"][muscle] = pocket_rms(path, large)
        details["cells"][muscle] = len(path.pieces)
        details["surfaces"][muscle] = search.describe()
        progress(f"cells: {muscle}: {len(path.pieces)} cells, {path.terms} terms, held-out {heldout.size}: "
                 f"{scores['length'][muscle] * 1e3:.3f} / {scores['arm'][muscle] * 1e3:.3f} mm, {large.size}: "
                 f"{details['fresh'][muscle][0] * 1e3:.3f} / {details['fresh'][muscle][1] * 1e3:.3f} mm "
                 f"({seconds:.0f} s)")
        done = details["muscles"]
        fresh_meets = sum(a <= targets[0] and b <= targets[1] for a, b in details["fresh"].values())
        chosen = (f"the {len(failing)} muscles missing the targets with one polynomial" if set(done) | set(
            muscles) == set(failing) else f"{', '.join(sorted(set(done) | set(muscles)))} ({len(failing)} miss the "
                                          f"targets with one polynomial)")
        unfinished = (f" (fitted {len(done)} of them; the others keep one polynomial)"
                      if len(set(done)) < len(set(done) | set(muscles)) else "")
        note = (f"cells for {chosen}{unfinished} ({cells_train.size} training samples: the case's + fresh); the "
                f"others keep their one polynomial (trajopt row); surfaces found in "
                f"{details['locating_seconds']:.0f} s; on {large.size} fresh held-out {fresh_meets}/{len(done)} of "
                f"these meet the targets (per-muscle table)")
        entry = {**{k: dict(v) for k, v in scores.items()}, "seconds": float(sum(details["seconds"].values())),
                 "note": note}, details
        if checkpoint is not None:
            checkpoint(*entry, path)
    return entry
