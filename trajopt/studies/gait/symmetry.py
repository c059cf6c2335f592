"""Bilateral symmetry of a model, derived from its names and kinematics: the mirror image across the sagittal plane.

OpenSim's axes: x forward, y up, z to the right. The mirror image of a motion reflects every body pose across
the x-y plane (S = diag(1, 1, -1)): rotations R -> S R S, positions p -> S p, and swaps left and right bodies.

``bilateral_symmetry(model)`` finds the linear map q -> P_q q that produces this image:

- names with a side token (``_l``/``_r``, e.g. ``hip_flexion_r``, ``knee_angle_r_beta``) pair up (coordinates,
  bodies, muscles, actuators, contacts);
  others map to themselves; a name with one side but no partner is an error naming it;
- the sign of each coordinate's image is read off the kinematics, never typed in: at the default
  configuration a small change of the coordinate must move the (paired) bodies like the mirror image of
  the change of its partner with sign +1 or -1. For OpenSim's gait models this gives: pelvis tilt, x/y
  translations, hip/knee/ankle angles +1 (pairs swap); pelvis list and rotation, lumbar bending and rotation,
  z translations -1; a free joint's quaternion (w, x, y, z) -> (w, -x, -y, z);
- speeds: P_u = N(P_q q0)⁺ P_q N(q0) from q̇ = N(q) u (the angular velocity of a quaternion joint flips
  like the quaternion's vector part);
- muscles and contacts swap by name; a coordinate actuator's image is its partner's control times the sign of
  the coordinate it drives.

A coordinate whose mirror image is neither + nor - its partner (an asymmetric model) is an error naming it.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody import body_poses, coordinate_rates_matrix
from trajopt.studies.prediction import quaternion_slices

SIDES = ("l", "r")  # side tokens: "_"-separated parts of names
REFLECTION = np.diag([1.0, 1.0, -1.0])  # across the sagittal (x-y) plane


def partner_name(name: str, sides: tuple[str, str] = SIDES) -> str:
    """The other side's name: the one ``_``-separated token that names a side is swapped (``hip_flexion_r`` ->
    ``hip_flexion_l``, ``knee_angle_r_beta`` -> ``knee_angle_l_beta``); unsided names are their own partner."""
    tokens = name.split("_")
    found = [k for k, t in enumerate(tokens) if t in sides and k > 0]
    if len(found) != 1:
        return name
    k = found[0]
    tokens[k] = sides[1] if tokens[k] == sides[0] else sides[0]
    return "_".join(tokens)


def swap_permutation(names, sides: tuple[str, str] = SIDES, what: str = "name") -> np.ndarray:
    """Matrix P with (P x)[i] = x[partner of i]; a sided name without partner raises (naming it)."""
    names = tuple(names)
    index = {name: i for i, name in enumerate(names)}
    matrix = np.zeros((len(names), len(names)))
    for i, name in enumerate(names):
        other = partner_name(name, sides)
        if other not in index:
            raise TrajoptInputError(f"bilateral symmetry: {what} '{name}' has no partner '{other}'")
        matrix[i, index[other]] = 1.0
    return matrix


@dataclass(frozen=True)
class BilateralSymmetry:
    """Signed permutations giving the mirror image: ``coordinates`` (nq x nq), ``speeds`` (nv x nv, also for
    accelerations and residuals), ``muscles``, ``actuators`` (coordinate actuators) and the ``contacts``' names."""

    coordinates: np.ndarray
    speeds: np.ndarray
    muscles: np.ndarray
    actuators: np.ndarray
    coordinate_names: tuple[str, ...]
    speed_names: tuple[str, ...]
    contact_pairs: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        for name in ("coordinates", "speeds", "muscles", "actuators"):
            matrix = getattr(self, name)
            if matrix.size and not np.allclose(matrix @ matrix, np.eye(matrix.shape[0])):
                raise TrajoptInputError(f"BilateralSymmetry.{name} is not an involution")

    def sign(self, coordinate: str) -> float:
        """+1 or -1: the coordinate's image is +/- its partner's value."""
        row = self.coordinates[self.coordinate_names.index(coordinate)]
        return float(row[np.flatnonzero(row)[0]])

    def for_variable(self, name: str) -> np.ndarray:
        """The matrix acting on a variable declared by ``trajopt.studies.prediction.muscle_driven_problem``."""
        matrices = {"q": self.coordinates, "u": self.speeds, "accelerations": self.speeds, "residuals": self.speeds,
                    "activations": self.muscles, "excitations": self.muscles, "actuator_controls": self.actuators,
                    "normalized_tendon_forces": self.muscles, "normalized_tendon_force_derivatives": self.muscles}
        if name not in matrices:
            raise TrajoptInputError(f"bilateral symmetry: no mirror image for variable '{name}' "
                                    f"(known: {sorted(matrices)})")
        return matrices[name]


def _poses(multibody, q) -> tuple[np.ndarray, np.ndarray]:
    return tuple(np.asarray(x) for x in body_poses(multibody, q))


def _change_mismatch(multibody, q_a, q_a0, q_b, q_b0, body_map) -> float:
    """How far the change of body poses from q_b0 to q_b is from the mirror image of the change from q_a0 to
    q_a (bodies swapped by ``body_map``); changes, not poses, so that a slightly asymmetric (scaled) model
    still finds its signs."""
    (ra, pa), (ra0, pa0) = _poses(multibody, q_a), _poses(multibody, q_a0)
    (rb, pb), (rb0, pb0) = _poses(multibody, q_b), _poses(multibody, q_b0)
    total = 0.0
    for k, m in enumerate(body_map):
        change_a = REFLECTION @ (ra[:, 3 * k:3 * k + 3] - ra0[:, 3 * k:3 * k + 3]) @ REFLECTION
        total += np.abs(rb[:, 3 * m:3 * m + 3] - rb0[:, 3 * m:3 * m + 3] - change_a).sum()
        total += np.abs(pb[:, m] - pb0[:, m] - REFLECTION @ (pa[:, k] - pa0[:, k])).sum()
    return total


def coordinate_mirror(multibody, sides: tuple[str, str] = SIDES, step: float = 1e-3) -> np.ndarray:
    """P_q from the kinematics (see the module docstring)."""
    names = tuple(multibody.coordinate_names)
    pairs = swap_permutation(names, sides, "coordinate")
    bodies = tuple(b.name for b in multibody.bodies)
    body_pairs = swap_permutation(bodies, sides, "body")
    body_map = [int(np.argmax(row)) for row in body_pairs]
    q0 = np.asarray(multibody.default_q(), dtype=float)
    matrix = np.zeros_like(pairs)
    for i, name in enumerate(names):
        j = int(np.argmax(pairs[i]))
        q_a = q0.copy()
        q_a[i] += step
        mismatch = {}
        for sign in (1.0, -1.0):
            q_b = q0.copy()
            q_b[j] += sign * step
            mismatch[sign] = _change_mismatch(multibody, q_a, q0, q_b, q0, body_map)
        best = min(mismatch, key=mismatch.get)
        if not mismatch[best] <= 0.1 * mismatch[-best]:
            raise TrajoptInputError(
                f"bilateral symmetry: coordinate '{name}' has no mirror image: moving it by {step} moves the bodies "
                f"neither like +{names[j]} nor like -{names[j]} mirrored (mismatch {mismatch[1.0]:.3g}, "
                f"{mismatch[-1.0]:.3g})")
        matrix[j, i] = best
    return matrix


def speed_mirror(multibody, coordinates: np.ndarray) -> np.ndarray:
    """P_u = N(P_q q0)⁺ P_q N(q0), rounded to the signed permutation it must be."""
    q0 = np.asarray(multibody.default_q(), dtype=float)
    rates = lambda q: np.asarray(coordinate_rates_matrix(multibody, ca.DM(q)))  # noqa: E731
    matrix = np.linalg.pinv(rates(coordinates @ q0)) @ coordinates @ rates(q0)
    rounded = np.round(matrix)
    if not np.allclose(matrix, rounded, atol=1e-9) or not np.all(np.abs(rounded).sum(axis=1) == 1):
        raise TrajoptInputError("bilateral symmetry: the speeds' mirror image is not a signed permutation")
    return rounded


def bilateral_symmetry(model, sides: tuple[str, str] = SIDES, contacts=()) -> BilateralSymmetry:
    """The mirror image of any ``MuscleDrivenModel`` (see the module docstring); ``contacts``: ``SphereContact``s."""
    multibody = model.multibody
    coordinates = coordinate_mirror(multibody, sides)
    speeds = speed_mirror(multibody, coordinates)
    muscles = swap_permutation(model.muscle_names, sides, "muscle")
    actuators_list = tuple(model.coordinate_actuators)
    actuator_names = tuple(a.name for a in actuators_list)
    actuators = swap_permutation(actuator_names, sides, "coordinate actuator")
    for i, actuator in enumerate(actuators_list):
        j = int(np.argmax(actuators[i]))
        speed = multibody.speed_names.index(actuator.coordinate)
        row = speeds[speed]
        target = multibody.speed_names[int(np.flatnonzero(row)[0])]
        if actuators_list[j].coordinate != target:
            raise TrajoptInputError(f"bilateral symmetry: actuator '{actuator.name}' drives '{actuator.coordinate}' "
                                    f"but its partner '{actuators_list[j].name}' drives "
                                    f"'{actuators_list[j].coordinate}', not '{target}'")
        actuators[i, j] = row[np.flatnonzero(row)[0]]
    contact_names = tuple(c.name for c in contacts)
    swap_permutation(contact_names, sides, "contact")  # checks every contact has its partner
    pairs = tuple((n, partner_name(n, sides)) for n in contact_names)
    return BilateralSymmetry(coordinates, speeds, muscles, actuators, tuple(multibody.coordinate_names),
                             tuple(multibody.speed_names), pairs)


def mirrored(symmetry: BilateralSymmetry, variable_name: str, symbol) -> ca.SX:
    """The mirror image of a variable's symbol (or values)."""
    return ca.mtimes(ca.DM(symmetry.for_variable(variable_name)), symbol)


def require_symmetric_ends(built, symmetry: BilateralSymmetry, exclude: tuple[str, ...] = (),
                           mirror_excitations: bool = False, repeat_controls: tuple[str, ...] = ()) -> None:
    """Half-cycle symmetry: each state at the final time equals the mirrored state at the initial time.

    Quaternions (ball and free joints): the initial one is unit (‖Q(0)‖² = 1: otherwise its norm would be a free,
    unphysical direction, since the rotation formula is not normalized), and only the vector part (x, y, z) is
    mirrored at the end: the dynamics carry the norm, so the scalar part's equation would nearly duplicate the
    others (a degenerate KKT system).

    ``built`` is a ``MuscleDrivenProblem``; coordinates in ``exclude`` (e.g. the walking direction's
    translation) are left out of q's rows. Actuator controls are mirrored too (Moco's periodicity goal
    for the lumbar control of 2D gait); ``mirror_excitations`` also maps the excitations.
    """
    problem = built.problem
    names = tuple(symmetry.coordinate_names)
    unknown = [n for n in exclude if n not in names]
    if unknown:
        raise TrajoptInputError(f"symmetric ends: exclude names unknown coordinates {unknown}")
    quaternions = quaternion_slices(built.model.multibody)
    scalar_parts = {s.start for s in quaternions}
    keep = [i for i, n in enumerate(names) if n not in exclude and i not in scalar_parts]
    image = mirrored(symmetry, "q", built.q)
    problem.require(problem.final(built.q[keep]) - problem.initial(image[keep]), equals=0.0, name="symmetry q",
                    labels=[f"symmetry {names[i]}" for i in keep])
    for s in quaternions:
        problem.require(problem.initial(ca.sumsqr(built.q[s])), equals=1.0, name=f"unit quaternion {names[s.start]}")
    problem.require(problem.final(built.u) - problem.initial(mirrored(symmetry, "u", built.u)), equals=0.0,
                    name="symmetry u", labels=[f"symmetry speed {n}" for n in symmetry.speed_names])
    muscles = built.model.muscle_names
    if built.excitations is not None:
        problem.require(problem.final(built.activations) - problem.initial(mirrored(symmetry, "activations",
                                                                                     built.activations)),
                        equals=0.0, name="symmetry activations", labels=[f"symmetry {n}" for n in muscles])
    if built.normalized_tendon_forces is not None:
        f = built.normalized_tendon_forces
        problem.require(problem.final(f) - problem.initial(mirrored(symmetry, "normalized_tendon_forces", f)),
                        equals=0.0, name="symmetry tendon forces",
                        labels=[f"symmetry {n} tendon force" for n in muscles])
    if built.actuator_controls is not None:
        c = built.actuator_controls
        labels = [f"symmetry {a.name} control" for a in built.model.coordinate_actuators]
        problem.require(problem.final(c) - problem.initial(mirrored(symmetry, "actuator_controls", c)), equals=0.0,
                        name="symmetry actuator controls", labels=labels if len(labels) > 1 else None)
    if mirror_excitations:
        e = built.muscle_controls
        problem.require(problem.final(e) - problem.initial(mirrored(symmetry, "excitations", e)), equals=0.0,
                        name="symmetry excitations", labels=[f"symmetry {n} excitation" for n in muscles])
