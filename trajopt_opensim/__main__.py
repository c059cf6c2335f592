"""Entry point of the OpenSim child process: ``python -m trajopt_opensim TASK REQUEST RESULT``."""

import importlib
import sys

import numpy as np


def _load_request(path):
    with np.load(path, allow_pickle=False) as data:
        return {key: (data[key].item() if data[key].ndim == 0 else data[key]) for key in data.files}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 3:
        print("usage: python -m trajopt_opensim TASK REQUEST.npz RESULT.npz", file=sys.stderr)
        return 2
    task, request_path, result_path = argv
    import opensim

    # No opensim.log in the caller's folder, and no warnings about missing display meshes.
    opensim.Logger.removeFileSink()
    opensim.Logger.setLevelString("Error")
    module = importlib.import_module(f"trajopt_opensim.{task}")
    result = module.run(_load_request(request_path))
    np.savez(result_path, **{key: np.asarray(value) for key, value in result.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
