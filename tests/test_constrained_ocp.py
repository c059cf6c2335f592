"""Direct collocation with kinematic constraints held by multipliers
(trajopt.studies.prediction.kinematic_constraints)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import casadi as ca
import numpy as np
import pytest

from trajopt.core import multibody as mb
from trajopt.studies.prediction.kinematic_constraints import constrained_accelerations
from trajopt.core.multibody import constraints as mbc
from trajopt.core.ocp import Effort, HermiteSimpson, Ipopt, Problem, Trapezoidal
from trajopt.model.osim.load import load_osim

FOURBAR = Path(__file__).resolve().parent / "data" / "osim" / "fourbar.osim"


def _sliders(m1=2.0, m2=3.0, scale=2.0):
    """Two sliders along ground x, the second coupled to the first: x2 = scale * x1 (φ = scale x1 − x2)."""
    model = mb.Model("sliders", gravity=(0.0, -9.81, 0.0))
    for name, mass in (("a", m1), ("b", m2)):
        model.add_body(mb.Body(name, mass=mass, inertia=(0.1, 0.1, 0.1, 0, 0, 0)))
        model.add_joint(mb.PrismaticJoint(f"{name}_slider", mb.OffsetFrame("ground"), mb.OffsetFrame(name),
                                          mb.Coordinate(f"x_{name}", rotational=False)))
    coupler = mb.CoordinateCoupler("couple", dependent="x_b", independent="x_a", function=mb.Linear(1.0, 0.0),
                                   scale=scale)
    return model.finalize(), (coupler,)


@pytest.mark.parametrize("implicit", [False, True])
def test_coupled_sliders_minimum_effort_is_the_analytic_optimum(implicit):
    """Rest to rest over d in T, force F on slider a only, minimum ∫F²: the coupled pair moves as one mass
    m = m1 + scale² m2, so x_a = d(3s² − 2s³), F = 6 m d (1 − 2s)/T², cost 12 m² d²/T³, and the constraint
    carries λ = scale m2 ẍ_a (OpenSim's sign: m1 ẍ_a + scale λ = F, m2 ẍ_b − λ = 0). Hermite-Simpson
    represents this cubic/linear solution exactly, so it is recovered to the solver's tolerance."""
    m1, m2, scale, d, duration = 2.0, 3.0, 2.0, 0.4, 1.0
    model, constraints = _sliders(m1, m2, scale)
    problem = Problem(duration=duration)
    q = problem.state("q", 2, initial=[0.0, 0.0], final=[d, scale * d], labels=("x_a", "x_b"))
    u = problem.state("u", 2, initial=[0.0, 0.0], final=[0.0, 0.0])
    force = problem.control("force", 1, bounds=(-100.0, 100.0))
    tau = ca.vertcat(force, 0.0)
    built = constrained_accelerations(problem, model, constraints, q, u, tau, implicit=implicit, derivatives=True)
    problem.set_derivative(q, built.coordinate_rates)
    problem.set_derivative(u, built.accelerations)
    problem.minimize(Effort(force))
    solution = problem.solve(HermiteSimpson(10), Ipopt(tol=1e-10))
    assert solution.success
    mass = m1 + scale**2 * m2
    s = solution.time / duration
    np.testing.assert_allclose(solution.value(force), 6 * mass * d * (1 - 2 * s) / duration**2, atol=1e-6)
    np.testing.assert_allclose(solution.value(built.multipliers), scale * m2 * 6 * d * (1 - 2 * s) / duration**2,
                               atol=1e-6)
    np.testing.assert_allclose(solution.objective, 12 * mass**2 * d**2 / duration**3, rtol=1e-8)
    assert np.max(np.abs(solution.value(built.errors))) < 1e-10


def _loop_only(tmp_path):
    """fourbar.osim without its payload: the four-bar alone (4 coordinates, 3 equations, one degree of freedom)."""
    text = FOURBAR.read_text()
    for pattern in (r'<Body name="payload">.*?</Body>', r'<CustomJoint name="payload_joint">.*?</CustomJoint>',
                    r'<WeldConstraint name="payload_weld">.*?</WeldConstraint>'):
        text = re.sub(pattern, "", text, flags=re.S)
    path = tmp_path / "loop.osim"
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_osim(path, constraints=True)


def test_fourbar_rest_to_rest_keeps_the_loop_closed(tmp_path):
    """The four-bar (PointConstraint) driven by a crank torque from rest to rest through 1 rad in 1 s, minimum
    ∫τ², Hermite-Simpson with Moco's constraint derivatives: at the mesh points the position and velocity
    errors are zero to the solver's tolerance and the multipliers are constrained forward dynamics' (the
    saddle-point system holds there); at the midpoints both are off by the discretization error."""
    osim = _loop_only(tmp_path)
    model, constraints = osim.multibody, osim.constraints
    crank = model.speed_index("crank_angle")
    start = np.zeros(model.nq)
    start[crank] = 0.3
    start = mbc.assemble(model, constraints, start, fixed=["crank_angle"])
    problem = Problem(duration=1.0)
    lower, upper = np.full(model.nq, -np.inf), np.full(model.nq, np.inf)
    lower[crank] = upper[crank] = 1.3
    q = problem.state("q", model.nq, initial=start, final=(lower, upper), guess=start, labels=model.coordinate_names)
    u = problem.state("u", model.nv, initial=np.zeros(model.nv), final=np.zeros(model.nv))
    torque = problem.control("torque", 1, bounds=(-50.0, 50.0))
    tau = ca.vertcat(*[torque if k == crank else 0.0 for k in range(model.nv)])
    built = constrained_accelerations(problem, model, constraints, q, u, tau, derivatives=True)
    problem.set_derivative(q, built.coordinate_rates)
    problem.set_derivative(u, built.accelerations)
    problem.minimize(Effort(torque))
    solution = problem.solve(HermiteSimpson(20), Ipopt(tol=1e-9))
    assert solution.success
    mesh = np.arange(0, solution.time.size, 2)
    errors, velocity_errors = np.atleast_2d(solution.value(built.errors)), np.atleast_2d(
        solution.value(built.velocity_errors))
    assert np.max(np.abs(errors[:, mesh])) < 1e-10 and np.max(np.abs(velocity_errors[:, mesh])) < 1e-9
    assert np.max(np.abs(errors)) < 1e-4  # midpoints: measured 4.6e-5
    qs, us, torques, lams = (np.atleast_2d(solution.value(v)) for v in (q, u, torque, built.multipliers))
    worst = {"mesh": 0.0, "midpoint": 0.0}
    for k in range(qs.shape[1]):
        _, lam = mbc.constrained_forward_dynamics(model, constraints, qs[:, k], us[:, k],
                                                  np.where(np.arange(model.nv) == crank, torques[0, k], 0.0))
        where = "mesh" if k % 2 == 0 else "midpoint"
        difference = np.max(np.abs(np.asarray(lam).ravel() - lams[:, k])) / np.max(np.abs(lams[:, k]))
        worst[where] = max(worst[where], difference)
    assert worst["mesh"] < 1e-12  # the saddle-point system itself holds there: measured 1.9e-15
    assert worst["midpoint"] < 0.02  # measured 0.0083


@pytest.mark.parametrize("transcription, points", [(Trapezoidal(5), 6), (HermiteSimpson(5), 6)])
def test_mesh_point_constraints_hold_at_the_mesh_points_only(transcription, points):
    from trajopt.core.ocp.nlp import transcribe

    problem = Problem(duration=1.0)
    x = problem.state("x", 1)
    problem.set_derivative(x, 1.0)
    problem.require_at_mesh_points(x, upper=2.0, name="below two")
    problem.minimize(Effort(x))
    discrete = transcribe(problem.compile(), transcription)
    block = next(b for b in discrete.catalog if b.description == "mesh-point constraint")
    assert block.columns == points and block.labels == ("below two",)
    np.testing.assert_allclose(block.tau, np.linspace(0.0, 1.0, points))


def test_muscle_driven_problem_holds_a_coupler(tmp_path):
    """arm26 with its shoulder coupled to the elbow (r_shoulder_elev = 0.3 r_elbow_flex, a
    CoordinateCouplerConstraint in the .osim), Moco's reaching problem to elbow 90°: the shoulder follows the
    coupler at every mesh point and the multiplier there is the one constrained forward dynamics gives for the
    solution's muscle generalized forces."""
    from trajopt.model.musculoskeletal import MusculoskeletalModel
    from trajopt.core.ocp import Guess
    from trajopt.model.paths.polynomial import PolynomialPaths
    from trajopt.studies.prediction import StateBounds, muscle_driven_problem

    arm26 = Path(__file__).resolve().parent.parent / "trajopt" / "examples" / "arm26"
    coupler = ('<ConstraintSet name="constraintset">\n\t\t\t<objects>'
               '<CoordinateCouplerConstraint name="shoulder_follows">'
               '<coupled_coordinates_function><LinearFunction><coefficients>0.3 0</coefficients></LinearFunction>'
               '</coupled_coordinates_function><independent_coordinate_names>r_elbow_flex'
               '</independent_coordinate_names><dependent_coordinate_name>r_shoulder_elev</dependent_coordinate_name>'
               '</CoordinateCouplerConstraint></objects>')
    text = (arm26 / "arm26.osim").read_text()
    assert '<ConstraintSet name="constraintset">\n\t\t\t<objects />' in text
    path = tmp_path / "arm26_coupled.osim"
    path.write_text(text.replace('<ConstraintSet name="constraintset">\n\t\t\t<objects />', coupler))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        osim = load_osim(path, constraints=True)
    model = MusculoskeletalModel(osim, PolynomialPaths.load(arm26 / "paths.json"))
    final = [0.3 * 1.4, 1.4]  # the coupled shoulder ends inside the fitted paths' domain (up to 0.436 rad)
    built = muscle_driven_problem(model, 0.5, coordinates=StateBounds(initial=[0.0, 0.0], final=final),
                                  speeds=StateBounds((-20.0, 20.0), initial=0.0, final=0.0),
                                  activations=StateBounds((0.0, 1.0), initial=0.0), constraints=osim.constraints)
    built.problem.minimize(Effort(built.excitations))
    guess = Guess([0.0, 0.5]).set(built.q, [[0.0, 0.0], final])
    solution = built.problem.solve(HermiteSimpson(10), Ipopt(tol=1e-8), guess=guess)
    assert solution.success
    mesh = np.arange(0, solution.time.size, 2)
    errors = np.atleast_2d(solution.value(built.constraints.errors))
    assert np.max(np.abs(errors[:, mesh])) < 1e-10
    qs, us, taus, lams = (np.atleast_2d(solution.value(v)) for v in
                          (built.q, built.u, built.generalized_forces, built.constraints.multipliers))
    worst = 0.0
    for k in mesh:
        _, lam = mbc.constrained_forward_dynamics(model.multibody, osim.constraints, qs[:, k], us[:, k], taus[:, k])
        worst = max(worst, abs(float(lam) - lams[0, k]))
    assert worst < 1e-8 * np.max(np.abs(lams))  # measured 3.9e-10 N·m with |λ| up to 10.3
