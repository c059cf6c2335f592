"""Foot-ground contact: OpenSim's SmoothSphereHalfSpaceForce as CasADi expressions, alone and
placed on a trajopt.core.multibody model."""

from trajopt.model.contact.model_contacts import (
    ContactLoads,
    SphereContact,
    contact_loads,
    contact_loads_function,
    contact_record_values,
    contact_wrenches,
    contacts_on,
    ground_reaction_loads,
    osim_contacts,
)
from trajopt.model.contact.smooth_sphere_half_space import (
    ContactForce,
    SmoothSphereHalfSpaceParameters,
    smooth_sphere_half_space_force,
    smooth_sphere_half_space_function,
)

__all__ = [
    "ContactForce",
    "ContactLoads",
    "SmoothSphereHalfSpaceParameters",
    "SphereContact",
    "contact_loads",
    "contact_loads_function",
    "contact_record_values",
    "contact_wrenches",
    "contacts_on",
    "ground_reaction_loads",
    "osim_contacts",
    "smooth_sphere_half_space_force",
    "smooth_sphere_half_space_function",
]
