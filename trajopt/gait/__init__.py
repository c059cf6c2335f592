"""Gait studies as library calls: bilateral symmetry, periodic half cycles, average speed, ground reactions per foot,
full-cycle expansion, guesses from motion files and OpenSim labels, for any ``MuscleDrivenModel``.

- ``symmetry``: ``bilateral_symmetry(model)`` (the mirror image derived from names and kinematics) and
  ``require_symmetric_ends(built, symmetry)`` (half-cycle periodicity);
- ``walking``: ``require_average_speed``, ``displacement`` (endpoint expressions);
- ``ground_reactions``: ``foot_ground_reactions(multibody, contacts)`` per foot (force, torque about the
  ground origin), ``center_of_pressure`` and free moment;
- ``expansion``: ``full_cycle`` (half cycle followed by its mirror image);
- ``guess``: ``guess_from_coordinates`` (a guess from a coordinates table), ``free_joint_motion`` and
  ``free_joint_angles`` (a motion with pelvis angles <-> a quaternion pelvis);
- ``labels``: ``opensim_labels`` (OpenSim state and control paths);
- ``tracking``: ``track`` (MocoTrack-like tracking goals: coordinates, speeds, per-foot ground reactions, EMG);
- ``muscle_tracking``: ``MuscleDrivenTracking`` (Moco's MocoTrack with foot contact for any model and window: the
  study object behind ``trajopt muscle-track``).
"""
