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
- ``metabolic_cost``: ``whole_body_metabolic_rate`` (Bhargava 2004, from the tendon model's fiber states),
  ``metabolic_cost`` (integral of (rate / body mass)², optionally per distance) and ``predsim_metabolic_cost``
  (PredSim's muscle-rate term); ``predsim_cost``: PredSim's cost of walking with its weights, term by term;
- ``tracking``: ``track`` (MocoTrack-like tracking goals: coordinates, speeds, per-foot ground reactions, EMG);
- ``muscle_tracking``: ``MuscleDrivenTracking`` (Moco's MocoTrack with foot contact for any model and window: the
  study object behind ``trajopt muscle-track``).
- ``study``: ``half_gait_cycle`` and ``walking_problem``, the gait study object both gait problems are written with;
- ``passive_joint_torques``: PredSim's passive joint torques (limit torques, damping, mtp spring) as Functions;
- ``metrics``: curves over the gait cycle, vertical force peaks, ranges, cost of transport.
"""
