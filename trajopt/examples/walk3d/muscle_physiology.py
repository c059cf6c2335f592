"""Per-muscle specific tension and slow-twitch fiber ratio of subject_walk_scaled.osim's leg muscles, as PredSim
gives them for the metabolic energy model.

The muscle mass of Bhargava et al. 2004's heat rates is Fmax / specific tension · density · optimal fiber length,
so the specific tension sets every heat rate's scale: OpenSim's default 0.25 MPa gives this model's strong
(MRI-based) muscles two to three times the mass PredSim's per-muscle values do. Values from PredSim
(KU Leuven Neuromechanics, commit 186cb70: PreProcessing/default_specific_tensions.csv and getSlowTwitchRatios.m;
AGPL-3.0 code, the numbers are published muscle physiology data), mapped from its gait2392 muscle names to this
model's Rajagopal et al. 2016 names; the four adductor magnus parts take the mean of PredSim's three.
"""

from __future__ import annotations

from trajopt.errors import TrajoptInputError
from trajopt.core.muscles.metabolics_bhargava2004 import Bhargava2004MuscleConstants

# muscle (without side): (specific tension MPa, slow-twitch ratio)
PREDSIM_MUSCLE_PHYSIOLOGY = {
    "addbrev": (0.75263, 0.50), "addlong": (0.74643, 0.50),
    "addmagDist": (0.55124, 0.552), "addmagIsch": (0.55124, 0.552), "addmagMid": (0.55124, 0.552),
    "addmagProx": (0.55124, 0.552),
    "bflh": (0.62222, 0.5425), "bfsh": (1.005, 0.529),
    "edl": (0.75294, 0.75), "ehl": (0.73636, 0.75), "fdl": (0.5, 0.60), "fhl": (0.50313, 0.60),
    "gaslat": (0.69694, 0.507), "gasmed": (0.69865, 0.566),
    "glmax1": (0.75395, 0.55), "glmax2": (0.74455, 0.55), "glmax3": (0.74595, 0.55),
    "glmed1": (0.74455, 0.55), "glmed2": (0.75395, 0.55), "glmed3": (0.75057, 0.55),
    "glmin1": (0.75, 0.55), "glmin2": (0.75, 0.55), "glmin3": (0.75116, 0.55),
    "grac": (0.73636, 0.50), "iliacus": (1.2477, 0.50), "perbrev": (0.62143, 0.60), "perlong": (0.6245, 0.60),
    "piri": (0.75254, 0.50), "psoas": (1.5041, 0.50), "recfem": (0.74936, 0.3865), "sart": (0.74286, 0.50),
    "semimem": (0.62524, 0.4925), "semiten": (0.62121, 0.425), "soleus": (0.62703, 0.803),
    "tfl": (0.75161, 0.50), "tibant": (0.75417, 0.70), "tibpost": (0.6252, 0.60),
    "vasint": (0.55263, 0.543), "vaslat": (0.50027, 0.455), "vasmed": (0.49961, 0.503),
}


def predsim_muscle_constants(muscle_names) -> tuple[Bhargava2004MuscleConstants, ...]:
    """Bhargava 2004 constants of each named muscle (``name_r`` / ``name_l``) with PredSim's specific tension and
    slow-twitch ratio; a muscle not in the table is refused in one line naming it."""
    constants = []
    for name in muscle_names:
        base = name[:-2] if name.endswith(("_r", "_l")) else name
        if base not in PREDSIM_MUSCLE_PHYSIOLOGY:
            raise TrajoptInputError(f"muscle physiology: no PredSim specific tension or slow-twitch ratio for muscle "
                                    f"{name!r} (muscles with values: {', '.join(sorted(PREDSIM_MUSCLE_PHYSIOLOGY))})")
        tension, slow = PREDSIM_MUSCLE_PHYSIOLOGY[base]
        constants.append(Bhargava2004MuscleConstants(ratio_slow_twitch_fibers=slow, specific_tension=tension * 1e6))
    return tuple(constants)
