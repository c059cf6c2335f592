"""Muscle wrapping over cylinders and spheres as OpenSim 4.6 computes it, in CasADi SX.

One module per surface (`cylinder`, `sphere`), the path procedure in `path`, surfaces placed on
bodies from a loaded .osim model in `surfaces`.
"""
