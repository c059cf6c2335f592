"""Small optimal-control problems shared by the tests (tiny factories, as rockit does)."""

import casadi as ca
import numpy as np

from trajopt.core.ocp import Effort, FinalTime, Free, Problem
from trajopt.studies.prediction import ImplicitDynamics, StateBounds, muscle_driven_problem


def double_integrator(duration=1.0):
    """min int u^2 dt, x'' = u, rest at 0 -> rest at 1 in T = 1: u* = 6 - 12 t, J* = 12."""
    ocp = Problem(duration=duration)
    x = ocp.state("x", initial=0.0, final=1.0)
    v = ocp.state("v", initial=0.0, final=0.0)
    u = ocp.control("u", bounds=(-100.0, 100.0))
    ocp.set_derivative(x, v)
    ocp.set_derivative(v, u)
    ocp.minimize(Effort(u))
    return ocp, x, v, u


def sliding_mass(mass=10.0):
    """Moco's testMocoInterface sliding mass: 10 kg, |F| <= 10 N, 0 -> 1 m at rest, t_f in [0, 10]."""
    ocp = Problem(duration=Free(0.0, 10.0))
    x = ocp.state("position", bounds=(0.0, 1.0), initial=0.0, final=1.0)
    v = ocp.state("speed", bounds=(-100.0, 100.0), initial=0.0, final=0.0)
    force = ocp.control("force", bounds=(-10.0, 10.0))
    ocp.set_derivative(x, v)
    ocp.set_derivative(v, force / mass)
    ocp.minimize(FinalTime())
    return ocp, x, v, force


def pendulum_swing_up(duration=1.0):
    """Point-mass pendulum (m = l = 1, g = 9.81) from hanging (q=0) to upright (q=pi) at rest, min int tau^2."""
    ocp = Problem(duration=duration)
    q = ocp.state("q", bounds=(-10.0, 10.0), initial=0.0, final=np.pi)
    w = ocp.state("w", bounds=(-50.0, 50.0), initial=0.0, final=0.0)
    tau = ocp.control("tau", bounds=(-20.0, 20.0))
    ocp.set_derivative(q, w)
    ocp.set_derivative(w, tau - 9.81 * ca.sin(q))
    ocp.minimize(Effort(tau))
    return ocp, q, w, tau


def arm26_elbow_reach(model):
    """arm26's elbow flexion 0.3 -> 1.3 rad in 0.5 s from rest to rest, the shoulder at 0 at both ends, muscle-driven
    (``muscle_driven_problem`` with implicit dynamics), for goals to be added to."""
    return muscle_driven_problem(
        model, 0.5,
        coordinates=StateBounds(initial=[0.0, 0.3], final=[0.0, 1.3]),
        speeds=StateBounds((-20.0, 20.0), initial=0.0, final=0.0),
        activations=StateBounds((0.0, 1.0), initial=0.0),
        dynamics=ImplicitDynamics())
