"""Files shipped with trajopt: the ready problems' models, muscle paths and motions, wherever trajopt is installed.

``model_file("arm26")`` is arm26.osim, ``problem_file("arm26", "paths.json")`` its polynomial paths,
``problem_file("arm26_static_optimization", "elbow_flex_0_90_minjerk.mot")`` the main job's motion: paths that work
from any directory and in a non-editable install (the files are package data of ``trajopt.examples``).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from trajopt.errors import TrajoptInputError

# model name -> (problem folder, .osim file)
MODELS = {"arm26": ("arm26", "arm26.osim"), "gait2d": ("gait2d", "2D_gait.osim"),
          "walk3d": ("walk3d", "subject_walk_scaled.osim")}


def problem_file(*parts: str) -> Path:
    """A file of the packaged problems, e.g. ``problem_file("arm26", "paths.json")``; one line when absent."""
    path = Path(str(files("trajopt.examples").joinpath(*parts)))
    if not path.exists():
        raise TrajoptInputError(f"{'/'.join(parts)}: no such file among trajopt's packaged problems ({path.parent})")
    return path


def model_file(name: str) -> Path:
    """The .osim of a packaged model: ``arm26``, ``gait2d`` (OpenSim's 2D_gait) or ``walk3d`` (Moco's 3D walking)."""
    if name not in MODELS:
        raise TrajoptInputError(f"model '{name}': not a packaged model (known: {', '.join(MODELS)})")
    return problem_file(*MODELS[name])
