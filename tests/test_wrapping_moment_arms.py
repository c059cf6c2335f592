"""Moment arms of wrapped paths against OpenSim 4.6: −∂l/∂q (CasADi AD) against central differences of
OpenSim's own lengths away from wrap switches, and the generalized-force method against
GeometryPath::computeMomentArm.

Switch detection: OpenSim's wrapped length is continuous but has kinks (and, through its 0.1 degree
tangency and 0.5 mm pass tests, small steps) where the wrap switches on or off or its discrete choices
change. A sample is called a switch when OpenSim's one-sided differences disagree,
|(l(q+h) − l(q)) − (l(q) − l(q−h))| / h > 2e-6 m (a smooth length gives ~h |l''| ~ 1e-7 m).
"""

import warnings

import casadi as ca
import numpy as np
import pytest

from conftest import ROOT
from trajopt.model.osim import OsimIgnoredWarning, load_osim
from trajopt.model.musculoskeletal.operators import load_processed
from trajopt.model.paths.geometric import geometric_path

ARM26 = ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim"
WALK3D = ROOT / "trajopt" / "examples" / "walk3d" / "subject_walk_scaled.osim"
STEP = 1e-6  # rad or m
SWITCH = 2e-6  # m


def random_configurations(model, count, seed, margin=0.0):
    """``count`` uniform random configurations within the coordinate ranges shrunk by ``margin``."""
    low = np.array([c.range[0] for c in model.coordinates]) + margin
    high = np.array([c.range[1] for c in model.coordinates]) - margin
    return low + (high - low) * np.random.default_rng(seed).random((count, model.nq))


def shifted_configurations(configurations, indices):
    """The configurations, then each moved by +STEP and -STEP along each coordinate of ``indices`` in turn."""
    shifted = [configurations]
    for i in indices:
        for sign in (1, -1):
            moved = configurations.copy()
            moved[:, i] += sign * STEP
            shifted.append(moved)
    return shifted


def central_differences(lengths, c, m):
    """(smooth mask, −dl/dq by central differences) of muscle ``m`` along the ``c``-th shifted coordinate, from
    ``lengths`` (shifted sets x samples x muscles as ``shifted_configurations``); the switch rule of the module."""
    base, plus, minus = lengths[0, :, m], lengths[1 + 2 * c, :, m], lengths[2 + 2 * c, :, m]
    return np.abs((plus - base) - (base - minus)) / STEP <= SWITCH, -(plus - minus) / (2 * STEP)


def _coupled(model, couplings, configurations, arms):
    """OpenSim's computeMomentArm about an independent coordinate includes its coupled coordinates
    (the coupling vector): add slope * generalized force of each dependent coordinate."""
    arms = arms.copy()
    x = ca.SX.sym("x")
    for coupling in couplings:
        slope = ca.Function("slope", [x], [ca.jacobian(coupling.value(x), x)])
        i, d = model.coordinate_index(coupling.independent), model.coordinate_index(coupling.dependent)
        arms[:, i] += np.asarray(slope.map(len(configurations))(configurations[:, i])).ravel() * arms[:, d]
    return arms


def _compare(opensim_task, file, osim, muscles, configurations, coordinates, couplings=(), force_tolerance=1e-12):
    model = osim.multibody
    indices = [model.coordinate_index(c) for c in coordinates]
    shifted = shifted_configurations(configurations, indices)
    reference = opensim_task("geometric_path_reference", {
        "model": str(file), "coordinates": np.array(model.coordinate_names),
        "configurations": np.vstack(shifted), "muscles": np.array(muscles)})
    n = len(configurations)
    lengths = reference["lengths"].reshape(len(shifted), n, len(muscles))
    q = ca.SX.sym("q", model.nq)
    report = {}
    for m, name in enumerate(muscles):
        path = geometric_path(osim, name)
        length = path.length(q)
        function = ca.Function("arms", [q], [-ca.jacobian(length, q).T, path.generalized_force_moment_arms(q)])
        by_length, by_force = (np.asarray(v).T for v in function.map(n)(configurations.T))
        np.testing.assert_allclose(_coupled(model, couplings, configurations, by_force)[:, indices],
                                   reference["moment_arms"][:n, m, indices], rtol=0, atol=force_tolerance,
                                   err_msg=f"{name}: generalized-force method vs computeMomentArm")
        kept, worst, gap = 0, 0.0, 0.0
        for c, i in enumerate(indices):
            smooth, central = central_differences(lengths, c, m)
            error = np.abs(by_length[:, i] - central)[smooth]
            kept += smooth.sum()
            worst = max(worst, error.max(initial=0.0))
            gap = max(gap, np.abs(by_length[:, i] - by_force[:, i]).max())
        report[name] = (kept / (n * len(indices)), worst, gap)
    return report


@pytest.mark.opensim
def test_arm26_cylinder_moment_arms(opensim_task):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OsimIgnoredWarning)
        osim = load_osim(ARM26)
    configurations = random_configurations(osim.multibody, 300, seed=21, margin=2 * STEP)
    report = _compare(opensim_task, ARM26, osim, ["TRIlat", "TRImed", "BRA"], configurations,
                      ["r_shoulder_elev", "r_elbow_flex"])
    for name, (kept, worst, gap) in report.items():
        assert kept > 0.9, (name, kept)
        assert worst <= 1e-6, (name, worst)
    # OpenSim's cylinder path is not length-minimal: computeMomentArm is not −dl/dq (measured 0.15 mm on BRA).
    assert report["BRA"][2] > 1e-5


@pytest.mark.opensim
@pytest.mark.slow
def test_walk3d_moment_arms(opensim_task):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OsimIgnoredWarning)
        osim, couplings = load_processed(WALK3D)
    configurations = random_configurations(osim.multibody, 40, seed=22, margin=2 * STEP)
    muscles = ["gasmed_r", "vaslat_r", "glmax1_r", "psoas_r", "semimem_r", "bfsh_r"]
    report = _compare(opensim_task, WALK3D, osim, muscles, configurations,
                      ["hip_flexion_r", "hip_adduction_r", "knee_angle_r", "ankle_angle_r"], couplings)
    for name, (kept, worst, gap) in report.items():
        assert kept > 0.8, (name, kept)
        assert worst <= 1e-6, (name, worst)


@pytest.mark.slow
def test_wrapped_unit_tension_loads_give_the_generalized_force_moment_arms():
    """The body wrenches of a wrapped path's tension (at the path and tangent points) are OpenSim's point forces:
    their generalized forces Σ J_bᵀ w_b (plus moving points') must equal the generalized-force moment arms."""
    from trajopt.model.paths.moment_arms import generalized_forces

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OsimIgnoredWarning)
        osim, _ = load_processed(WALK3D)
    configurations = random_configurations(osim.multibody, 20, seed=23)
    q = ca.SX.sym("q", osim.multibody.nq)
    for name in ("gasmed_r", "vasint_l", "semimem_r"):  # two cylinders; one; one
        path = geometric_path(osim, name)
        arms = ca.Function("arms", [q], [path.generalized_force_moment_arms(q)]).map(len(configurations))
        expected = np.asarray(arms(configurations.T))
        from_loads = np.column_stack([np.asarray(generalized_forces(path, c)).ravel() for c in configurations])
        wrenches, _ = path.unit_tension_loads(configurations[0])
        assert np.abs(np.asarray(ca.DM(wrenches))).max() > 0.5  # the loads are on the bodies, not generalized forces
        assert np.abs(from_loads - expected).max() <= 1e-14, name  # measured 1.3e-15
