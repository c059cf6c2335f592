"""3D arm with a quaternion shoulder: point-to-point reach from YZY gimbal lock, quaternion vs Euler coordinates.

- ``model``: ``shoulder_arm(euler_sequence=None) -> ShoulderArm`` (arm26 bodies, ball or Euler shoulder, 9 muscles);
- ``reaching``: ``build_problem(...) -> ReachingProblem``, ``naive_guess``, ``solve_naive_and_warm``;
- ``analysis``: quaternion norm, torque identity (Zoufaly et al. eqs. 4-16), gimbal-lock distance, KKT condition;
- ``outputs``: .sto, figures, GIF; ``main``: ``trajopt run shoulder-reaching``.
"""
