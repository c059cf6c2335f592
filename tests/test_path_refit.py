"""Path domains (box, band around a motion), fitting a domain from a sampler, refitting for a motion (cache),
refusal without a sampler. The sampler here is analytic, so errors are measured against the exact path."""

import numpy as np
import pytest

from trajopt.model.paths.domain import PathDomain, PathDomainError, latin_hypercube
from trajopt.model.paths.polynomial import PolynomialPaths
from trajopt.model.paths.refit import SamplingPlan, fit_domain, paths_for_motion
from trajopt.model.paths.samples import PathSamples

COORDINATES = ("hip", "knee")
RANGES = np.array([[-0.5, 1.5], [0.0, 2.0]])


def _exact(q):
    """Lengths (n, 2) and moment arms (n, 2, 2) of two smooth, non-polynomial paths."""
    x, y = q[:, 0], q[:, 1]
    lengths = np.column_stack([0.30 + 0.03 * np.sin(x) + 0.02 * np.cos(y) + 0.01 * np.sin(x) * np.cos(y),
                               0.20 + 0.025 * np.sin(1.3 * y)])
    arms = np.zeros((len(q), 2, 2))
    arms[:, 0, 0] = -(0.03 * np.cos(x) + 0.01 * np.cos(x) * np.cos(y))
    arms[:, 0, 1] = -(-0.02 * np.sin(y) - 0.01 * np.sin(x) * np.sin(y))
    arms[:, 1, 1] = -0.025 * 1.3 * np.cos(1.3 * y)
    return lengths, arms


class AnalyticSampler:
    """A ``PathSampler`` with exact lengths and moment arms; counts its calls."""

    identity = "analytic:1"
    coordinates = COORDINATES

    def __init__(self):
        self.calls = 0

    def coordinate_ranges(self, coordinates):
        return RANGES[[COORDINATES.index(c) for c in coordinates]]

    def is_rotational(self, coordinate):
        return True

    def sample(self, coordinates, configurations, muscles=None):
        self.calls += 1
        q = np.asarray(configurations, dtype=float)
        lengths, arms = _exact(q)
        return PathSamples(tuple(coordinates), ("a", "b"), q, lengths, arms, {"a": COORDINATES, "b": ("knee",)})


def test_band_domain_membership_and_sampling():
    frames = np.array([[0.0, 0.5], [0.5, 1.0]])
    domain = PathDomain.around_motion(COORDINATES, frames, 0.1, RANGES, "m")
    assert not domain.outside(frames).any()
    assert domain.outside(np.array([[0.25, 0.75], [0.0, 0.65]])).tolist() == [True, True]
    assert domain.outside(np.array([[0.05, 0.58]])).tolist() == [False]
    points = domain.sample(400, 1)
    assert points.shape == (400, 2) and not domain.outside(points).any()
    # each frame gets its own Latin hypercube: 200 points, one per stratum of its band in each coordinate
    near_first = points[np.all(np.abs(points - frames[0]) <= 0.1 + 1e-12, axis=1)]
    assert len(near_first) == 200
    strata = np.floor((near_first[:, 1] - 0.4) / 0.2 * 200).astype(int)
    assert sorted(strata) == list(range(200))
    # clipping to the model's ranges: a frame at the knee's lower limit samples only above it
    clipped = PathDomain.around_motion(COORDINATES, [[0.0, 0.0]], 0.1, RANGES, "m").sample(50, 2)
    assert clipped[:, 1].min() >= 0.0
    assert PathDomain.box(COORDINATES, RANGES).covers(domain) and not domain.covers(PathDomain.box(COORDINATES, RANGES))


def test_fit_over_a_box_meets_accuracy_targets_at_fresh_configurations():
    domain = PathDomain.box(COORDINATES, RANGES)
    paths, train, heldout, seconds = fit_domain(AnalyticSampler(), domain, plan=SamplingPlan(box_samples=1500),
                                                progress=None)
    assert paths.domain is domain and set(seconds) == {"a", "b"}
    fresh = latin_hypercube(RANGES, 500, 123)
    lengths, arms = _exact(fresh)
    for m, muscle in enumerate(("a", "b")):
        path = paths[muscle]
        columns = [COORDINATES.index(c) for c in path.coordinates]
        predicted_lengths, predicted_arms = path.evaluate(fresh[:, columns])
        assert np.sqrt(np.mean((predicted_lengths - lengths[:, m]) ** 2)) < 0.5e-3
        assert np.sqrt(np.mean((predicted_arms - arms[:, m][:, columns]) ** 2)) < 1e-3
    assert paths["b"].coordinates == ("knee",)


def test_motion_outside_the_domain_is_refitted_once_and_cached(tmp_path):
    sampler = AnalyticSampler()
    box = PathDomain.box(COORDINATES, [[-0.2, 0.2], [0.0, 0.5]], "small box")
    paths = fit_domain(sampler, box, plan=SamplingPlan(box_samples=400), model="toy.osim", progress=None)[0]
    t = np.linspace(0, 1, 41)
    motion = np.column_stack([1.2 * t, 1.8 * t])
    with pytest.raises(PathDomainError, match=r"toy.mot: coordinate 'hip' = 0.21 at frame 7 \(t = 0.175 s\).*"
                                              r"No path sampler"):
        paths_for_motion(paths, motion, COORDINATES, t, "toy.mot", progress=None)
    assert paths_for_motion(paths, motion[:3], COORDINATES, t[:3], "toy.mot", progress=None) is paths
    calls = sampler.calls
    refitted = paths_for_motion(paths, motion, COORDINATES, t, "toy.mot", sampler, cache_dir=tmp_path, progress=None)
    assert sampler.calls == calls + 2  # training and held-out sets
    assert refitted.domain.is_band and len(list(tmp_path.glob("toy-*.json"))) == 1
    refitted.check_domain(motion, COORDINATES)
    lengths, arms = _exact(motion)
    predicted, _ = refitted["a"].evaluate(motion)
    assert np.abs(predicted - lengths[:, 0]).max() < 0.5e-3
    again = paths_for_motion(paths, motion, COORDINATES, t, "toy.mot", sampler, cache_dir=tmp_path, progress=None)
    assert sampler.calls == calls + 2 and isinstance(again, PolynomialPaths)
    assert again.domain.key() == refitted.domain.key()
    # a frame beyond the model's range is refused before any sampling
    beyond = motion.copy()
    beyond[-1, 1] = 2.5
    with pytest.raises(PathDomainError, match=r"coordinate 'knee' = 2.5 at frame 40 .*\[0, 2\]"):
        paths_for_motion(paths, beyond, COORDINATES, t, "toy.mot", sampler, cache_dir=tmp_path, progress=None)


class JumpSampler(AnalyticSampler):
    """Muscle 'a' gains 3 mm where hip > 0.6 (a wrap object switching sides), as arm26's BIClong near 31 deg."""

    identity = "analytic-jump:1"

    def sample(self, coordinates, configurations, muscles=None):
        samples = super().sample(coordinates, configurations, muscles)
        lengths = samples.lengths.copy()
        lengths[:, 0] += 3e-3 * (samples.q[:, 0] > 0.6)
        return PathSamples(samples.coordinates, samples.muscles, samples.q, lengths, samples.moment_arms,
                           samples.crosses)


def test_a_path_jump_is_fitted_piecewise_along_the_motion(tmp_path):
    from trajopt.model.paths.piecewise import PiecewisePolynomialPaths
    from trajopt.model.paths.refit import load_paths

    sampler = JumpSampler()
    paths = fit_domain(sampler, PathDomain.box(COORDINATES, [[-0.2, 0.2], [0.0, 0.5]]),
                       plan=SamplingPlan(box_samples=300), model="toy.osim", progress=None)[0]
    t = np.linspace(0, 1, 41)
    motion = np.column_stack([1.2 * t, 0.3 + 0.5 * t])
    refitted = paths_for_motion(paths, motion, COORDINATES, t, "toy.mot", sampler, band_degrees=5.0,
                                plan=SamplingPlan(piece_span_degrees=10.0), cache_dir=tmp_path, progress=None)
    assert isinstance(refitted, PiecewisePolynomialPaths) and len(refitted.pieces) >= 4
    lengths, arms = _exact(motion)
    lengths[:, 0] += 3e-3 * (motion[:, 0] > 0.6)
    predicted, predicted_arms = refitted.lengths_and_moment_arms_function(COORDINATES).map(len(t))(motion.T)
    error = np.abs(np.asarray(predicted)[0] - lengths[:, 0])
    far = np.abs(motion[:, 0] - 0.6) > np.radians(5.0) + np.radians(10.0)  # beyond the band of the jump's piece
    assert error[far].max() < 0.5e-3
    again = load_paths(next(tmp_path.glob("toy-*.json")))
    assert isinstance(again, PiecewisePolynomialPaths) and len(again.pieces) == len(refitted.pieces)
    again.check_domain(motion, COORDINATES)
    with pytest.raises(PathDomainError, match="coordinate 'knee'"):
        again.check_domain(np.array([[0.3, 1.5]]), COORDINATES)


def test_path_jumps_are_found_between_the_frames_they_lie_between():
    from trajopt.model.paths.piecewise import path_jumps, split_frames

    t = np.linspace(0, 1, 41)
    motion = np.column_stack([1.2 * t, 0.3 + 0.5 * t])
    samples = JumpSampler().sample(COORDINATES, motion)
    jumps = path_jumps(samples)
    first_beyond = int(np.argmax(motion[:, 0] > 0.6))
    assert jumps == [first_beyond - 1]
    pieces = split_frames(motion, np.array([10.0, 10.0]), jumps)
    assert [p[0] for p in pieces] == [0, first_beyond]
