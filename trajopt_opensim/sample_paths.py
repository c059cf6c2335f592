"""OpenSim task: muscle lengths and moment arms of a model over a list of configurations.

Request
- ``model``: path of the .osim file.
- ``coordinates`` (optional): names of the coordinates given in ``configurations`` (default: all).
- ``configurations`` (optional): array (samples x coordinates) in OpenSim's internal units
  (radians, metres). Coordinates not listed keep their default values.
- ``muscles`` (optional): names of the muscles to report (default: every muscle).
- ``batch`` (optional): configurations per progress line (default 500).
- ``chain_only`` (optional, default false): compute moment arms only about coordinates on the muscle's body
  chain (others are reported as 0; OpenSim gives ~1e-16 there when no wrap object moves with them).

Result
- Always a description: ``coordinate_names``, ``coordinate_ranges`` (n x 2), ``coordinate_locked``,
  ``coordinate_rotational``, ``muscle_names``, ``muscle_chain`` (muscles x coordinates, 1 where the
  coordinate belongs to a joint on the body chain between the bodies of the muscle's path points),
  ``muscle_wrapped`` (1 when the path has wrap objects).
- With ``configurations``: ``lengths`` (samples x muscles) and ``moment_arms`` (samples x muscles x
  coordinates) from ``computeMomentArm`` (OpenSim's sign: -dl/dq), ``seconds``.

All given coordinates are set (constraints not enforced); then the dependent coordinate of every enforced
CoordinateCouplerConstraint is set from its coupling function of the independent ones, and only then is
the state realized. ``coupled_dependent`` lists those dependent coordinates (they cannot be given).
"""

import sys
import time

import numpy as np
import opensim

from trajopt_opensim._model_state import all_muscles


def _names(values):
    return [str(v) for v in np.atleast_1d(values)] if values is not None else None


def _joint_tree(model):
    """child body -> (joint name, parent body)."""
    tree = {}
    for joint in model.getJointSet():
        parent = joint.getParentFrame().findBaseFrame().getName()
        child = joint.getChildFrame().findBaseFrame().getName()
        tree[child] = (joint, parent)
    return tree


def _joints_to_root(tree, body):
    joints = []
    seen = set()
    while body in tree and body not in seen:
        seen.add(body)
        joint, parent = tree[body]
        joints.append(joint.getName())
        body = parent
    return joints


def _chain_coordinates(model, tree, muscle):
    """Coordinates of the joints between the bodies that carry the muscle's path points."""
    path = muscle.getGeometryPath()
    points = path.getPathPointSet()
    bodies = {points.get(i).getParentFrame().findBaseFrame().getName() for i in range(points.getSize())}
    chains = [set(_joints_to_root(tree, body)) for body in bodies]
    crossed = set().union(*chains) - set.intersection(*chains) if chains else set()
    names = set()
    for joint in model.getJointSet():
        if joint.getName() in crossed:
            for i in range(joint.numCoordinates()):
                names.add(joint.get_coordinates(i).getName())
    return names




def describe(model):
    coordinates = model.getCoordinateSet()
    names = [coordinates.get(i).getName() for i in range(coordinates.getSize())]
    ranges = np.array([[coordinates.get(i).getRangeMin(), coordinates.get(i).getRangeMax()] for i in range(len(names))])
    locked = np.array([int(coordinates.get(i).get_locked()) for i in range(len(names))])
    rotational = np.array(
        [int(coordinates.get(i).getMotionType() == opensim.Coordinate.Rotational) for i in range(len(names))]
    )
    muscles = all_muscles(model)
    muscle_names = list(muscles)
    tree = _joint_tree(model)
    chain = np.zeros((len(muscle_names), len(names)), dtype=int)
    wrapped = np.zeros(len(muscle_names), dtype=int)
    for m in range(len(muscle_names)):
        muscle = muscles[muscle_names[m]]
        crossed = _chain_coordinates(model, tree, muscle)
        chain[m] = [int(n in crossed) for n in names]
        wrapped[m] = int(muscle.getGeometryPath().getWrapSet().getSize() > 0)
    dependent = []
    for constraint in model.getConstraintSet():
        coupler = opensim.CoordinateCouplerConstraint.safeDownCast(constraint)
        if coupler is not None and coupler.get_isEnforced():
            dependent.append(coupler.getDependentCoordinateName())
    return {
        "coordinate_names": np.array(names),
        "coordinate_ranges": ranges,
        "coordinate_locked": locked,
        "coordinate_rotational": rotational,
        "muscle_names": np.array(muscle_names),
        "muscle_chain": chain,
        "muscle_wrapped": wrapped,
        "coupled_dependent": np.array(dependent, dtype=str),
    }


def _couplers(model):
    """(dependent coordinate, independent coordinates, function, scale factor) of enforced couplers."""
    couplers = []
    coordinates = model.getCoordinateSet()
    for constraint in model.getConstraintSet():
        coupler = opensim.CoordinateCouplerConstraint.safeDownCast(constraint)
        if coupler is None or not coupler.get_isEnforced():
            continue
        independent = coupler.getIndependentCoordinateNames()
        names = [independent.get(i) for i in range(independent.getSize())]
        couplers.append(
            (
                coordinates.get(coupler.getDependentCoordinateName()),
                [coordinates.get(n) for n in names],
                coupler.getFunction(),
                opensim.PropertyHelper.getValueDouble(coupler.getPropertyByName("scale_factor")),
            )
        )
    return couplers


class _Paths:
    """A loaded model's handles for lengths and moment arms at given coordinate values."""

    def __init__(self, model, state, given, all_names, muscle_names):
        self.model, self.state = model, state
        coordinate_set = model.getCoordinateSet()
        self.given = [coordinate_set.get(name) for name in given]
        for name in all_names:
            coordinate_set.get(name).setLocked(self.state, False)
        by_name = all_muscles(model)
        self.muscles = [by_name[name] for name in muscle_names]
        self.couplers = _couplers(model)

    def evaluate(self, values, on_chain, lengths, moment_arms):
        """Fill ``lengths`` (muscles) and ``moment_arms`` (muscles x given coordinates) at ``values``."""
        state = self.state
        for coordinate, value in zip(self.given, values):
            coordinate.setValue(state, float(value), False)
        for dependent, independent, function, scale in self.couplers:
            vector = opensim.Vector(len(independent), 0.0)
            for i, coordinate in enumerate(independent):
                vector.set(i, coordinate.getValue(state))
            dependent.setValue(state, scale * function.calcValue(vector), False)
        self.model.realizePosition(state)
        for m, muscle in enumerate(self.muscles):
            path = muscle.getGeometryPath()
            lengths[m] = path.getLength(state)
            for c, coordinate in enumerate(self.given):
                if on_chain[m, c]:
                    moment_arms[m, c] = path.computeMomentArm(state, coordinate)


def run(request):
    model = opensim.Model(str(request["model"]))
    state = model.initSystem()
    result = describe(model)
    configurations = request.get("configurations")
    if configurations is None:
        return result
    configurations = np.atleast_2d(np.asarray(configurations, dtype=float))
    all_names = list(result["coordinate_names"])
    given = _names(request.get("coordinates")) or all_names
    muscle_names = _names(request.get("muscles")) or list(result["muscle_names"])
    paths = _Paths(model, state, given, all_names, muscle_names)
    batch = int(request.get("batch", 500))
    samples = configurations.shape[0]
    lengths = np.zeros((samples, len(muscle_names)))
    moment_arms = np.zeros((samples, len(muscle_names), len(given)))
    on_chain = np.ones((len(muscle_names), len(given)), dtype=bool)
    if bool(request.get("chain_only", False)):
        rows = [list(result["muscle_names"]).index(name) for name in muscle_names]
        on_chain = result["muscle_chain"][rows][:, [all_names.index(name) for name in given]].astype(bool)
    start = time.perf_counter()
    reloads = 0
    for k in range(samples):
        paths.evaluate(configurations[k], on_chain, lengths[k], moment_arms[k])
        if not np.all(np.isfinite(moment_arms[k])):
            # computeMomentArm giving NaN (arm26 BIClong at some configurations) leaves the model so that every
            # later configuration gives NaN too (a fresh state does not help): the model is loaded again for the
            # next configurations, this one's NaN kept (it is OpenSim's value there)
            model = opensim.Model(str(request["model"]))
            paths = _Paths(model, model.initSystem(), given, all_names, muscle_names)
            reloads += 1
        if (k + 1) % batch == 0 or k + 1 == samples:
            print(
                f"sample_paths: {k + 1}/{samples} configurations ({time.perf_counter() - start:.1f} s)",
                file=sys.stderr,
                flush=True,
            )
    result.update(
        lengths=lengths,
        moment_arms=moment_arms,
        seconds=time.perf_counter() - start,
        reloads=reloads,
        sampled_muscles=np.array(muscle_names),
    )
    return result
