"""DeGroote et al. (2016) characteristic curves and their inverses, as pure functions.

Each function accepts a float, a numpy array or a CasADi SX/MX/DM expression and returns the
same kind. Curve shapes come from a ``DeGroote2016Constants`` set (default: OpenSim's, see
``trajopt.core.muscles.constants``); muscle-specific values (tendon strain, passive fiber strain,
active width scale) are keyword arguments named as OpenSim's DeGrooteFregly2016Muscle
properties.

De Groote, Kinney, Rao, Fregly (2016), Ann. Biomed. Eng. 44(10), doi:10.1007/s10439-016-1591-9.
"""

from __future__ import annotations

import casadi
import numpy as np

from trajopt.core.muscles.constants import DEFAULT_CONSTANTS, DeGroote2016Constants

_CASADI_TYPES = (casadi.SX, casadi.MX, casadi.DM)


class _Numpy:
    exp, log, sqrt, sinh, asinh = np.exp, np.log, np.sqrt, np.sinh, np.arcsinh


class _Casadi:
    exp, log, sqrt, sinh, asinh = casadi.exp, casadi.log, casadi.sqrt, casadi.sinh, casadi.asinh


def _math(x):
    """Elementary functions matching the type of ``x`` (CasADi for symbols, numpy otherwise)."""
    return _Casadi if isinstance(x, _CASADI_TYPES) else _Numpy


def _numeric(x):
    return x if isinstance(x, _CASADI_TYPES) else np.asarray(x, dtype=float)[()]


def tendon_force_length_degroote2016(
    normalized_tendon_length,
    tendon_strain_at_one_norm_force: float = 0.049,
    constants: DeGroote2016Constants = DEFAULT_CONSTANTS,
):
    """Normalized tendon force f̃T(l̃T)."""
    x = _numeric(normalized_tendon_length)
    k = constants.tendon_stiffness(tendon_strain_at_one_norm_force)
    return constants.tendon_scale * _math(x).exp(k * (x - constants.tendon_offset)) - constants.tendon_shift


def tendon_force_length_inverse_degroote2016(
    normalized_tendon_force,
    tendon_strain_at_one_norm_force: float = 0.049,
    constants: DeGroote2016Constants = DEFAULT_CONSTANTS,
):
    """Normalized tendon length l̃T for a normalized tendon force f̃T."""
    f = _numeric(normalized_tendon_force)
    k = constants.tendon_stiffness(tendon_strain_at_one_norm_force)
    return _math(f).log((f + constants.tendon_shift) / constants.tendon_scale) / k + constants.tendon_offset


def _passive_offset(passive_fiber_strain_at_one_norm_force, constants):
    # exp(kPE (l0 - 1) / e0): the exponential's value where the curve must be zero.
    k = constants.passive_exponent
    return float(np.exp(k * (constants.passive_zero_force_fiber_length - 1.0) / passive_fiber_strain_at_one_norm_force))


def fiber_force_length_passive_degroote2016(
    normalized_fiber_length,
    passive_fiber_strain_at_one_norm_force: float = 0.6,
    constants: DeGroote2016Constants = DEFAULT_CONSTANTS,
):
    """Normalized passive fiber force f̃PE(l̃M); 1 at l̃M = 1 + strain."""
    x = _numeric(normalized_fiber_length)
    k, e0 = constants.passive_exponent, passive_fiber_strain_at_one_norm_force
    offset = _passive_offset(e0, constants)
    return (_math(x).exp(k * (x - 1.0) / e0) - offset) / (np.exp(k) - offset)


def fiber_force_length_passive_inverse_degroote2016(
    normalized_passive_fiber_force,
    passive_fiber_strain_at_one_norm_force: float = 0.6,
    constants: DeGroote2016Constants = DEFAULT_CONSTANTS,
):
    """Normalized fiber length l̃M at which the passive fiber force equals the given value."""
    f = _numeric(normalized_passive_fiber_force)
    k, e0 = constants.passive_exponent, passive_fiber_strain_at_one_norm_force
    offset = _passive_offset(e0, constants)
    return 1.0 + e0 / k * _math(f).log(f * (np.exp(k) - offset) + offset)


def fiber_force_length_active_degroote2016(
    normalized_fiber_length,
    active_force_width_scale: float = 1.0,
    constants: DeGroote2016Constants = DEFAULT_CONSTANTS,
):
    """Active force-length multiplier f̃L(l̃M): three Gaussian-like terms.

    ``active_force_width_scale`` > 1 widens the curve about l̃M = 1 (OpenSim's property).
    """
    x = _numeric(normalized_fiber_length)
    if active_force_width_scale != 1.0:
        x = (x - 1.0) / active_force_width_scale + 1.0
    exp = _math(x).exp
    total = 0.0
    for b1, b2, b3, b4 in constants.active_terms:
        total = total + b1 * exp(-0.5 * ((x - b2) / (b3 + b4 * x)) ** 2)
    return total


def fiber_force_velocity_degroote2016(
    normalized_fiber_velocity,
    constants: DeGroote2016Constants = DEFAULT_CONSTANTS,
):
    """Force-velocity multiplier f̃V(ṽM); ṽM is fiber velocity over (max contraction velocity · l_opt).

    Written with asinh, equal to the paper's ``d1 log(y + sqrt(y² + 1)) + d4`` but without its
    cancellation for shortening velocities.
    """
    v = _numeric(normalized_fiber_velocity)
    c = constants
    return c.velocity_d1 * _math(v).asinh(c.velocity_d2 * v + c.velocity_d3) + c.velocity_d4


def fiber_force_velocity_inverse_degroote2016(
    force_velocity_multiplier,
    constants: DeGroote2016Constants = DEFAULT_CONSTANTS,
):
    """Normalized fiber velocity ṽM at which the force-velocity multiplier takes the given value."""
    f = _numeric(force_velocity_multiplier)
    c = constants
    return (_math(f).sinh((f - c.velocity_d4) / c.velocity_d1) - c.velocity_d3) / c.velocity_d2
