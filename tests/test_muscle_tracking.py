"""Muscle-driven tracking (trajopt.studies.gait.muscle_tracking, Moco's MocoTrack with contact) and `trajopt
muscle-track`.

A sliding mass whose reference is a quadratic in time (a motion Hermite-Simpson and the natural quintic splines
represent exactly) reaches it, with the analytic objective and force; the 2D gait model tracks a motion it produced
itself (coordinates and contact forces) to the precision the tiny effort regularization allows; the command
refuses bad files in one line.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from trajopt.edge.cli.main import main as cli
from trajopt.errors import TrajoptInputError
from trajopt.examples.gait2d.model import HERE as GAIT2D
from trajopt.examples.gait2d.model import GaitModel
from trajopt.examples.gait2d.prediction import moco_tracking_study
from trajopt.studies.gait.guess import equilibrium_tendon_forces
from trajopt.studies.gait.muscle_tracking import MuscleDrivenTracking
from trajopt.studies.gait.tracking import ReferenceInterpolation, TrackingWeights
from trajopt.model.io.motion_processor import MotionProcessor
from trajopt.model.io.tables import read_table, write_sto
from trajopt.model.musculoskeletal import MusculoskeletalModel
from trajopt.model.musculoskeletal.operators import load_processed
from trajopt.core.ocp import HermiteSimpson, Ipopt, ResidualCoordinates, Residuals
from trajopt.model.paths.geometric import GeometricPaths
from trajopt.studies.prediction.tendon_dynamics import ElasticTendons
from trajopt.table import Table

DATA = Path(__file__).resolve().parent / "data"
SLIDING_MASS = DATA / "osim" / "sliding_mass_muscle.osim"


def test_sliding_mass_tracks_a_quadratic_exactly():
    """x(t) = a + b t + c t² is reachable: tracking error 0, the actuator pushes m ẍ = 2 m c, the excitation sits at
    its lower bound e_min: objective = w_e e_min² T + w_c (2 m c / F0)² T (the muscle's 1 mN is all that differs)."""
    rng = np.random.default_rng(11)
    a, b, c = rng.uniform(-0.1, 0.1), rng.uniform(0.1, 0.3), rng.uniform(-0.4, -0.2)
    osim, _ = load_processed(SLIDING_MASS)
    model = MusculoskeletalModel(osim, GeometricPaths(osim))
    time = np.linspace(0.0, 1.0, 41)  # frames on every Hermite-Simpson node of 0.05 s intervals
    motion = Table(time, ("x",), (a + b * time + c * time ** 2)[:, None])
    weights = TrackingWeights(coordinates=100.0, excitations=1.0, actuator_controls=1e-4)
    result = MuscleDrivenTracking(model, motion, weights=weights, mesh_interval=0.05).solve(
        solver=Ipopt(tol=1e-10, print_level=0, options={"constr_viol_tol": 1e-10}))
    assert result.success
    mass, optimal_force, minimum = 2.0, 10.0, 0.02  # the .osim's
    assert result.objective == pytest.approx(minimum ** 2 + 1e-4 * (2 * mass * c / optimal_force) ** 2, rel=1e-5)
    assert result.coordinate_errors()["x"] < 1e-7
    push = result.solution.value(result.tracking.muscle_driven.actuator_controls) * optimal_force
    np.testing.assert_allclose(push, 2 * mass * c, atol=3e-3)
    assert result.activations().data.min() >= minimum - 1e-8


def test_quintic_splines_through_sparse_frames_track_a_quadratic_exactly():
    """Seven uneven frames of x(t) = a + b t + c t²: the natural quintic splines through them are the quadratic
    (its third and fourth derivatives vanish at the ends), so QUINTIC_SPLINES reaches the same analytic objective
    as frames on every node; straight lines between the frames would cut the parabola's corners."""
    rng = np.random.default_rng(12)
    a, b, c = rng.uniform(-0.1, 0.1), rng.uniform(0.1, 0.3), rng.uniform(-0.4, -0.2)
    osim, _ = load_processed(SLIDING_MASS)
    model = MusculoskeletalModel(osim, GeometricPaths(osim))
    time = np.concatenate([[0.0], np.sort(rng.uniform(0.05, 0.95, 5)), [1.0]])
    motion = Table(time, ("x",), (a + b * time + c * time ** 2)[:, None])
    weights = TrackingWeights(coordinates=100.0, excitations=1.0, actuator_controls=1e-4)
    study = MuscleDrivenTracking(model, motion, weights=weights, mesh_interval=0.05,
                                 reference_interpolation=ReferenceInterpolation.QUINTIC_SPLINES)
    result = study.solve(solver=Ipopt(tol=1e-10, print_level=0, options={"constr_viol_tol": 1e-10}))
    assert result.success
    mass, optimal_force, minimum = 2.0, 10.0, 0.02  # the .osim's
    assert result.objective == pytest.approx(minimum ** 2 + 1e-4 * (2 * mass * c / optimal_force) ** 2, rel=1e-5)
    assert result.coordinate_errors()["x"] < 1e-7


def test_reference_interpolation_must_be_the_enum():
    osim, _ = load_processed(SLIDING_MASS)
    model = MusculoskeletalModel(osim, GeometricPaths(osim))
    motion = Table(np.linspace(0.0, 1.0, 11), ("x",), np.zeros((11, 1)))
    with pytest.raises(TrajoptInputError, match="reference_interpolation must be a ReferenceInterpolation"):
        MuscleDrivenTracking(model, motion, reference_interpolation="linear")


def test_sliding_mass_with_an_elastic_tendon_tracks_a_quadratic_exactly():
    """The same reachable quadratic with a compliant tendon (implicit normalized tendon force, Moco's small penalty
    on its derivative): the motion is reached (5e-6 m measured), the actuator pushes m ẍ = 2 m c, and the tendon
    force stays within 1e-4 of the fiber-tendon equilibrium with its activation (5e-5 measured, forces up to
    0.08 of the muscle's maximum)."""
    rng = np.random.default_rng(14)
    a, b, c = rng.uniform(-0.1, 0.1), rng.uniform(0.1, 0.3), rng.uniform(-0.4, -0.2)
    osim, _ = load_processed(SLIDING_MASS)
    model = MusculoskeletalModel(osim, GeometricPaths(osim))
    time = np.linspace(0.0, 1.0, 41)
    motion = Table(time, ("x",), (a + b * time + c * time ** 2)[:, None])
    weights = TrackingWeights(coordinates=100.0, excitations=1.0, actuator_controls=1e-4)
    result = MuscleDrivenTracking(model, motion, weights=weights, mesh_interval=0.05, tendons=ElasticTendons()).solve(
        solver=Ipopt(tol=1e-10, print_level=0, options={"constr_viol_tol": 1e-10}))
    assert result.success
    mass, optimal_force = 2.0, 10.0
    assert result.coordinate_errors()["x"] < 2e-5
    built = result.tracking.muscle_driven
    push = result.solution.value(built.actuator_controls) * optimal_force
    np.testing.assert_allclose(push, 2 * mass * c, atol=3e-3)
    q, u = (np.atleast_2d(result.solution.value(v)).T for v in (built.q, built.u))
    activations = result.activations().data
    equilibrium = equilibrium_tendon_forces(built, q, u, activations)
    np.testing.assert_allclose(np.atleast_2d(result.solution.value(built.normalized_tendon_forces)).T, equilibrium,
                               atol=1e-4)


def test_a_coordinate_weighed_zero_is_not_tracked():
    """MocoTrack's states weight set: x's value and speed weighed 0 leave nothing to track, so the actuator rests
    and the objective is the excitation effort alone, w_e e_min² T; a weight for a coordinate not tracked is
    refused in one line."""
    rng = np.random.default_rng(13)
    c = rng.uniform(-0.4, -0.2)
    osim, _ = load_processed(SLIDING_MASS)
    model = MusculoskeletalModel(osim, GeometricPaths(osim))
    time = np.linspace(0.0, 1.0, 41)
    motion = Table(time, ("x",), (0.1 * time + c * time ** 2)[:, None])
    weights = TrackingWeights(coordinates=100.0, excitations=1.0, actuator_controls=1e-4,
                              coordinate_scales=(("x", 0.0),), speed_scales=(("x", 0.0),))
    result = MuscleDrivenTracking(model, motion, weights=weights, mesh_interval=0.05).solve(
        solver=Ipopt(tol=1e-10, print_level=0, options={"constr_viol_tol": 1e-10}))
    assert result.success
    assert result.objective == pytest.approx(0.02 ** 2, rel=1e-5)  # the .osim's minimum excitation 0.02, T = 1 s
    unknown = TrackingWeights(coordinate_scales=(("y", 2.0),))
    with pytest.raises(TrajoptInputError, match="'y' is not a tracked coordinate"):
        MuscleDrivenTracking(model, motion, weights=unknown, mesh_interval=0.05).build()


def test_emg_and_pelvis_residuals_weigh_as_the_objective_says():
    """Excitation e: w_e e² + w_emg (e - s)² is least at e = w_emg s / (w_e + w_emg). The force F = m ẍ shared by the
    actuator (10 c, weight w_c) and the ground joint's residual (100 r, weight w_r): the residual carries
    F (100²/w_r) / (10²/w_c + 100²/w_r), F/101 for w_c = 1e-4, w_r = 1."""
    rng = np.random.default_rng(12)
    level, c = rng.uniform(0.3, 0.7), rng.uniform(-0.4, -0.2)
    osim, _ = load_processed(SLIDING_MASS)
    model = MusculoskeletalModel(osim, GeometricPaths(osim))
    time = np.linspace(0.0, 1.0, 41)
    motion = Table(time, ("x",), (0.1 * time + c * time ** 2)[:, None])
    emg = Table(time, ("pull", "not_a_muscle"), np.column_stack([np.full(time.size, level), np.ones(time.size)]))
    weights = TrackingWeights(coordinates=100.0, excitations=1.0, actuator_controls=1e-4, emg=3.0)
    study = MuscleDrivenTracking(model, motion, emg=emg, weights=weights, mesh_interval=0.05,
                                 residuals=Residuals(weight=1.0, optimal_force=100.0, max_control=10.0,
                                                     coordinates=ResidualCoordinates.GROUND))
    result = study.solve(solver=Ipopt(tol=1e-10, print_level=0, options={"constr_viol_tol": 1e-10}))
    assert result.success
    built = result.tracking.muscle_driven
    np.testing.assert_allclose(result.solution.value(built.excitations), 3.0 * level / 4.0, atol=1e-6)
    residual = result.solution.value(result.tracking.residuals) * 100.0
    np.testing.assert_allclose(residual, 2 * 2.0 * c / 101.0, atol=3e-5)


def test_gait2d_tracks_its_own_motion_and_contact_forces():
    """A first tracking solve of referenceCoordinates.sto/referenceGRF.sto produces a motion the model can walk;
    tracking that motion and its contact forces (effort weights 1e-6 / 1e-9) gives them back."""
    model = GaitModel.load().musculoskeletal
    first = MuscleDrivenTracking(model, MotionProcessor(GAIT2D / "referenceCoordinates.sto", window=(0.0, 0.3)),
                                 grf_axes=("x", "y"), ground_reactions=GAIT2D / "referenceGRF.sto", mesh_interval=0.05)
    produced = first.solve(solver=Ipopt(tol=1e-6, print_level=0))
    assert produced.success
    q = np.asarray(produced.solution.value(produced.tracking.muscle_driven.q)).T
    weights = TrackingWeights(coordinates=100.0, speeds=0.0, excitations=1e-6, actuator_controls=1e-9)
    again = MuscleDrivenTracking(model, Table(produced.time, model.coordinate_names, q), grf_axes=("x", "y"),
                                 ground_reactions=produced.ground_reactions(), weights=weights, mesh_interval=0.05)
    result = again.solve(solver=Ipopt(tol=1e-8, print_level=0))
    assert result.success
    assert max(result.coordinate_errors().values()) < 1e-5  # rad, m
    assert max(result.ground_reaction_errors().values()) < 0.05  # N, of forces up to ~1000 N


@pytest.mark.slow
def test_gait2d_moco_terms_reach_mocos_tracking_objective():
    """example2DWalking's MocoTrack problem (weights, 6 Hz filter, speeds, contact / m g, midpoint controls as Moco's
    Hermite-Simpson) on 24 intervals: Moco 4.6 recorded objective 1.564098 (tolerance 1e-2); measured here 1.561909
    (tolerance 1e-4; implicit dynamics, exact Hessian)."""
    moco = json.loads((GAIT2D / "moco" / "moco_walk2d_info.json").read_text())["tracking"]
    result = moco_tracking_study().solve(HermiteSimpson(24, interpolate_control_midpoints=True),
                                         Ipopt(tol=1e-4, print_level=0, options={"constr_viol_tol": 1e-4}))
    assert result.success
    assert result.objective == pytest.approx(moco["objective"], rel=3e-3)


def _gait2d_command(tmp_path, coordinates, *extra):
    return cli(["muscle-track", str(GAIT2D / "2D_gait.osim"), str(coordinates), "--paths", str(GAIT2D / "paths.json"),
                *extra, "--out", str(tmp_path / "out")])


def test_command_refuses_motion_columns_the_model_lacks(tmp_path, capsys):
    table = read_table(GAIT2D / "referenceCoordinates.sto")
    labels = tuple(label.replace("lumbar/lumbar", "lumbar/trunk_twist") for label in table.labels)
    write_sto(tmp_path / "coordinates.sto", Table(table.time, labels, table.data))
    assert _gait2d_command(tmp_path, tmp_path / "coordinates.sto") == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and "trunk_twist" in error and "not coordinates of the model" in error


def test_command_refuses_ground_reactions_short_of_the_window(tmp_path, capsys):
    grf = read_table(GAIT2D / "referenceGRF.sto")
    keep = grf.time <= 0.3
    write_sto(tmp_path / "grf.sto", Table(grf.time[keep], grf.labels, grf.data[keep]))
    assert _gait2d_command(tmp_path, GAIT2D / "referenceCoordinates.sto", "--grf", str(tmp_path / "grf.sto"),
                           "--grf-axes", "xy", "--window", "0.1", "0.4") == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and "grf.sto" in error and "0.1-0.4 s" in error


def test_command_refuses_contacts_on_bodies_the_model_lacks(tmp_path, capsys):
    (tmp_path / "contacts.xml").write_text(
        '<OpenSimDocument Version="40600"><ContactGeometrySet name="contactgeometryset"><objects>'
        '<ContactSphere name="heel"><socket_frame>/bodyset/hoof_r</socket_frame><location>0 0 0</location>'
        '<radius>0.03</radius></ContactSphere></objects></ContactGeometrySet></OpenSimDocument>')
    contacts = str(tmp_path / "contacts.xml")
    assert _gait2d_command(tmp_path, GAIT2D / "referenceCoordinates.sto", "--contact", contacts) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and "contacts.xml" in error and "hoof_r" in error




def test_command_with_quintic_splines_tracks_a_quadratic_through_sparse_frames(tmp_path):
    """`--reference quintic-splines`: seven uneven frames of a quadratic are tracked to solver precision (the natural
    quintic splines through them are the quadratic); straight lines between the frames (the default) cut the
    parabola's corners by about c·h²/8 between frames h apart."""
    rng = np.random.default_rng(13)
    a, b, c = rng.uniform(-0.1, 0.1), rng.uniform(0.1, 0.3), rng.uniform(-0.4, -0.2)
    time = np.concatenate([[0.0], np.sort(rng.uniform(0.05, 0.95, 5)), [1.0]])
    write_sto(tmp_path / "x.sto", Table(time, ("x",), (a + b * time + c * time ** 2)[:, None]))
    errors = {}
    for reference in ("quintic-splines", "linear"):
        out = tmp_path / reference
        assert cli(["muscle-track", str(SLIDING_MASS), str(tmp_path / "x.sto"), "--reference", reference,
                    "--mesh-interval", "0.05", "--tolerance", "1e-10", "--out",
                    str(out)]) == 0
        summary = json.loads((out / "summary.json").read_text())
        assert summary["status"] == "Solve_Succeeded" and summary["reference"] == reference.replace("-", " ")
        errors[reference] = summary["coordinate_rms"]["x"]
    widest_cut = abs(c) * np.diff(time).max() ** 2 / 8  # the chord's largest distance from the parabola
    assert errors["quintic-splines"] < 3e-7
    assert 0.3 * widest_cut < errors["linear"] < widest_cut
