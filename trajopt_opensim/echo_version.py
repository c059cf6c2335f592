"""Smallest task: report OpenSim's version (used to check the bridge works)."""

import opensim


def run(request):
    return {"version": opensim.__version__, "echo": request.get("value", 0.0)}
