"""PredSim's passive joint torques (Falisse et al. 2019, J R Soc Interface 16: 20190402; the PredSim framework,
KU Leuven): per coordinate a limit torque of two exponentials, a linear spring about an offset and a damping.

    limit torque  τ_lim(q) = K1 exp(K2 (q - θ_upper)) + K3 exp(K4 (q - θ_lower))
    spring        τ_k(q)   = -k (q - q0)
    damping       τ_d(q̇)   = -d q̇

With K1 < 0 < K2 the first term pulls q back below θ_upper and with K3 > 0 > K4 the second pushes it back above
θ_lower: each grows exponentially past its limit and is small inside the range. Angles in radians, torques in N·m.

Constants, as PredSim ships them (repository KULeuvenNeuromechanics/PredSim, commit a50fb31):

- limit torques: ``PreProcessing/default_coord_lim_torq_coeff.csv`` lines 2-18 (columns K_1..K_4, theta_1 = θ_lower,
  theta_2 = θ_upper), applied by ``CasadiFunctions/createCasadi_PassiveMoments.m`` (``f_limit_torque``) after
  ``PreProcessing/get_passive_moment_info.m``; the same left and right;
- damping 0.1 N·m·s/rad on every coordinate but the floating base's: ``DefaultSettings/getDefaultSettings.m`` line
  473 (``damping_coefficient_all_dofs``), spring stiffness 0 (line 483);
- the mtp joint of Falisse et al. 2022 (PLoS ONE 17: e0256311): stiffness 25 N·m/rad and damping 2 N·m·s/rad,
  ``Subjects/Falisse_et_al_2022/settings_Falisse_et_al_2022.m`` lines 19-20.

The cost term PredSim puts on passive torques (``f_AllPassiveTorques_cost``) is the limit torques of the coordinates
that have them, damping excluded by default (``getDefaultSettings.m`` line 646, ``pass_torq_includes_damping`` 0):
``passive_joint_torques(...).limit_torques`` gives them, the ``passive_torques`` of
``trajopt.studies.gait.predsim_cost.predsim_cost``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody.bodies import GROUND


@dataclass(frozen=True)
class LimitTorqueCoefficients:
    """τ_lim(q) = k1 exp(k2 (q - theta_upper)) + k3 exp(k4 (q - theta_lower)) (N·m, q in rad)."""

    k1: float
    k2: float
    k3: float
    k4: float
    theta_lower: float
    theta_upper: float

    def torque(self, q):
        return self.k1 * ca.exp(self.k2 * (q - self.theta_upper)) + self.k3 * ca.exp(self.k4 * (q - self.theta_lower))

    def mirrored(self) -> LimitTorqueCoefficients:
        """The same limits for a coordinate of the opposite sign (τ'(q) = -τ(-q)): a knee whose flexion is positive
        (Rajagopal's models) where PredSim's is negative (gait2392's)."""
        return LimitTorqueCoefficients(-self.k3, -self.k4, -self.k1, -self.k2, -self.theta_upper, -self.theta_lower)


@dataclass(frozen=True)
class PredSimLimitTorques:
    """PredSim's limit-torque coefficients per coordinate (without the _r/_l side suffix);
    ``default_coord_lim_torq_coeff.csv`` lines 2-18 at PredSim commit a50fb31."""

    hip_flexion: LimitTorqueCoefficients = LimitTorqueCoefficients(-2.44, 5.05, 1.51, -21.88, -0.6981, 1.81)
    hip_adduction: LimitTorqueCoefficients = LimitTorqueCoefficients(-0.03, 14.94, 0.03, -14.94, -0.5, 0.5)
    hip_rotation: LimitTorqueCoefficients = LimitTorqueCoefficients(-0.03, 14.94, 0.03, -14.94, -0.92, 0.92)
    knee_angle: LimitTorqueCoefficients = LimitTorqueCoefficients(-6.09, 33.94, 11.03, -11.33, -2.4, 0.13)
    ankle_angle: LimitTorqueCoefficients = LimitTorqueCoefficients(-2.03, 38.11, 0.18, -12.12, -0.74, 0.52)
    subtalar_angle: LimitTorqueCoefficients = LimitTorqueCoefficients(-60.21, 16.32, 60.21, -16.32, -0.65, 0.65)
    mtp_angle: LimitTorqueCoefficients = LimitTorqueCoefficients(-0.9, 14.87, 0.18, -70.08, 0.0, 1.13446401379631)
    lumbar_extension: LimitTorqueCoefficients = LimitTorqueCoefficients(-0.35, 30.72, 0.25, -20.36,
                                                                        -0.523598775598299, 0.17)
    lumbar_bending: LimitTorqueCoefficients = LimitTorqueCoefficients(-0.25, 20.36, 0.25, -20.36,
                                                                      -0.349065850398866, 0.349065850398866)
    lumbar_rotation: LimitTorqueCoefficients = LimitTorqueCoefficients(-0.25, 20.36, 0.25, -20.36,
                                                                       -0.349065850398866, 0.349065850398866)

    def for_coordinate(self, name: str) -> LimitTorqueCoefficients | None:
        """The coefficients of a model coordinate (``knee_angle_r`` -> ``knee_angle``), or None."""
        table = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        base = name[:-2] if name.endswith(("_r", "_l")) else name
        return table.get(base)


@dataclass(frozen=True)
class SpringDamper:
    """A linear torsional spring -stiffness (q - offset) (N·m/rad) and damping -damping q̇ (N·m·s/rad)."""

    stiffness: float = 0.0
    damping: float = 0.0
    offset: float = 0.0


# Falisse et al. 2022: settings_Falisse_et_al_2022.m lines 19-20 (PredSim commit a50fb31).
FALISSE2022_MTP = SpringDamper(stiffness=25.0, damping=2.0)


@dataclass(frozen=True)
class PassiveJointTorques:
    """Which passive torques act: PredSim's limit torques, ``damping`` (N·m·s/rad) on every coordinate that has
    no entry in ``springs`` (by coordinate name without side suffix, e.g. ``{"mtp_angle": FALISSE2022_MTP}``), and
    those springs. ``cost_includes_damping``: the cost output adds each limited coordinate's damping torque
    (PredSim's ``pass_torq_includes_damping``). ``mirrored``: coordinates (without side suffix) whose positive
    direction is the opposite of PredSim's model's, e.g. ``("knee_angle",)`` for a model with knee flexion positive;
    their limits are ``LimitTorqueCoefficients.mirrored``."""

    limits: PredSimLimitTorques = PredSimLimitTorques()
    damping: float = 0.1
    springs: tuple[tuple[str, SpringDamper], ...] = ()
    cost_includes_damping: bool = False
    mirrored: tuple[str, ...] = ()

    def limit(self, name: str) -> LimitTorqueCoefficients | None:
        """The limit-torque coefficients of a model coordinate in the model's sign convention, or None."""
        coefficients = self.limits.for_coordinate(name)
        base = name[:-2] if name.endswith(("_r", "_l")) else name
        return coefficients.mirrored() if coefficients is not None and base in self.mirrored else coefficients

    def spring(self, name: str) -> SpringDamper:
        base = name[:-2] if name.endswith(("_r", "_l")) else name
        return dict(self.springs).get(base, SpringDamper(damping=self.damping))


PREDSIM_DEFAULT = PassiveJointTorques()
FALISSE2022 = PassiveJointTorques(springs=(("mtp_angle", FALISSE2022_MTP),))


def floating_base_speeds(multibody) -> tuple[str, ...]:
    """Speeds of six-degree-of-freedom joints on the ground (the pelvis): PredSim gives them no passive torque."""
    return tuple(name for joint in multibody.joints if joint.parent.body == GROUND and joint.nv == 6
                 for name in multibody.speed_names[multibody.v_slice(joint.name)])


# A limit torque larger than this in the middle of a coordinate's range means the model's sign convention is not
# PredSim's (N·m).
IMPLAUSIBLE_MID_RANGE_TORQUE = 100.0


def _check_range(multibody, name: str, limit: LimitTorqueCoefficients) -> None:
    """Refuse limits that push hard in the middle of the model's own range of the coordinate."""
    low, high = next(c.range for c in multibody.coordinates if c.name == name)
    if not (np.isfinite(low) and np.isfinite(high)):
        return
    middle = 0.5 * (low + high)
    torque = float(limit.torque(ca.DM(middle)))
    if abs(torque) > IMPLAUSIBLE_MID_RANGE_TORQUE:
        raise TrajoptInputError(
            f"passive joint torques: coordinate '{name}' of model '{multibody.name}' (range {low:.3g} to {high:.3g} "
            f"rad): PredSim's limits {limit.theta_lower:.3g} to {limit.theta_upper:.3g} rad give {torque:.3g} N·m at "
            f"mid-range; is its sign the opposite of PredSim's model? Then name it in PassiveJointTorques.mirrored")


@dataclass(frozen=True)
class PassiveJointTorqueFunctions:
    """``generalized_forces``: (q, u) -> passive torques on every speed (nv), what a problem adds to the muscles'
    (e.g. ``passive=`` of ``trajopt.studies.gait.study``); ``limit_torques``: (q, u) -> the limit torques of
    ``cost_coordinates`` (PredSim's cost term, ``passive_torques`` of
    ``trajopt.studies.gait.predsim_cost.predsim_cost``)."""

    generalized_forces: ca.Function
    limit_torques: ca.Function
    cost_coordinates: tuple[str, ...]


def passive_joint_torques(multibody, torques: PassiveJointTorques = PREDSIM_DEFAULT,
                          coordinates: tuple[str, ...] | None = None) -> PassiveJointTorqueFunctions:
    """PredSim's passive joint torques on a trajopt multibody model, by coordinate name.

    ``coordinates``: the model coordinates that get passive torques (default: every coordinate with its own speed
    outside the floating base). A name the model lacks is an error; a coordinate without PredSim limit-torque
    coefficients gets its spring/damping only. The cost's coordinates are those chosen that have coefficients, in
    model order.
    """
    floating = set(floating_base_speeds(multibody))
    own = [n for n in multibody.speed_names if n in multibody.coordinate_names and n not in floating]
    if coordinates is None:
        chosen = own
    else:
        missing = [n for n in coordinates if n not in multibody.coordinate_names]
        if missing:
            raise TrajoptInputError(f"passive joint torques: coordinates {missing} are not in model '{multibody.name}'")
        no_speed = [n for n in coordinates if n not in own]
        if no_speed:
            raise TrajoptInputError(f"passive joint torques: coordinates {no_speed} of model '{multibody.name}' have "
                                    f"no speed of their own or belong to the floating base")
        chosen = [n for n in own if n in coordinates]
    q = ca.SX.sym("q", multibody.nq)
    u = ca.SX.sym("u", multibody.nv)
    tau = ca.SX.zeros(multibody.nv)
    cost, cost_names = [], []
    for name in chosen:
        angle, speed = q[multibody.coordinate_index(name)], u[multibody.speed_index(name)]
        spring = torques.spring(name)
        damping = -spring.damping * speed
        torque = -spring.stiffness * (angle - spring.offset) + damping
        limit = torques.limit(name)
        if limit is not None:
            _check_range(multibody, name, limit)
            limit_torque = limit.torque(angle)
            torque = torque + limit_torque
            cost.append(limit_torque + damping if torques.cost_includes_damping else limit_torque)
            cost_names.append(name)
        tau[multibody.speed_index(name)] = torque
    return PassiveJointTorqueFunctions(
        ca.Function("passive_joint_torques_predsim", [q, u], [tau], ["q", "u"], ["generalized_forces"]),
        ca.Function("limit_torques_predsim", [q, u], [ca.vertcat(ca.SX(0, 1), *cost)], ["q", "u"],
                    ["passive_joint_torques"]),
        tuple(cost_names))
