"""Tendon models of the muscle-driven inverse: ``RigidTendons`` and ``ElasticTendons`` of
``trajopt.studies.prediction.tendon_dynamics``.

``MuscleDrivenInverse`` calls ``tendon_forces(problem, model, values, activations)`` once while building; the
prediction (``trajopt.studies.prediction.muscle_driven_problem``) uses the same objects through ``declare``.
"""

from trajopt.studies.prediction.tendon_dynamics import NORMALIZED_TENDON_FORCE_BOUNDS, ElasticTendons, RigidTendons

__all__ = ["NORMALIZED_TENDON_FORCE_BOUNDS", "ElasticTendons", "RigidTendons"]
