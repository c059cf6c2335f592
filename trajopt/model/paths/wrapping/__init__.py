"""Muscle wrapping over cylinders, spheres, ellipsoids and tori as OpenSim 4.6 computes it, in CasADi SX.

One module per surface (`cylinder`, `sphere`, `ellipsoid`, `torus`), the path procedure in `path`, surfaces
placed on bodies from a loaded .osim model in `surfaces`.
"""
