"""Ready problems on OpenSim's example models, with their data: not part of the library.

Each problem is a command (``trajopt run NAME``, registered as an entry point in pyproject.toml) written with
library calls. ``model_file("arm26")`` and ``problem_file("arm26", "paths.json")`` find their files wherever
trajopt is installed.
"""

from pathlib import Path

from trajopt.examples.data import MODELS, model_file, problem_file

EXAMPLES = Path(__file__).resolve().parent

__all__ = ["EXAMPLES", "MODELS", "model_file", "problem_file"]
