"""What Moco's example2DWalking tracking steps share: the end time OpenSim 4.6 accepts for the filtered
reference (its table ends at 0.47008934 s) and the example's coordinate bounds (radians, metres)."""

import math

FINAL_TIME = 0.470089
DEG = math.pi / 180
BOUNDS = {
    "/jointset/groundPelvis/pelvis_tilt/value": [-20 * DEG, -10 * DEG],
    "/jointset/groundPelvis/pelvis_tx/value": [0, 1],
    "/jointset/groundPelvis/pelvis_ty/value": [0.75, 1.25],
    "/jointset/hip_l/hip_flexion_l/value": [-10 * DEG, 60 * DEG],
    "/jointset/hip_r/hip_flexion_r/value": [-10 * DEG, 60 * DEG],
    "/jointset/knee_l/knee_angle_l/value": [-50 * DEG, 0],
    "/jointset/knee_r/knee_angle_r/value": [-50 * DEG, 0],
    "/jointset/ankle_l/ankle_angle_l/value": [-15 * DEG, 25 * DEG],
    "/jointset/ankle_r/ankle_angle_r/value": [-15 * DEG, 25 * DEG],
    "/jointset/lumbar/lumbar/value": [0, 20 * DEG],
}
