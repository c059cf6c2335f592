"""Predictive and tracking 2D gait on OpenSim's 2D_gait.osim (the problems of Moco's example2DWalking).

`model.GaitModel` (model assembly, its bilateral symmetry), `prediction.build_problem` /
`prediction.build_tracking_problem`, `simulate.resimulate` (forward re-simulation), `outputs` (tables,
figures, animation), `main.main(argv)` (``trajopt run gait2d-prediction``).
"""
