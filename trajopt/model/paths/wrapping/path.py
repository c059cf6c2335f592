"""OpenSim's wrapped path (GeometryPath::applyWrapObjects) as CasADi SX expressions.

OpenSim builds the path as a list of points that changes with the configuration: the active path
points, then, for each PathWrap in order, the two tangent points of its wrap object inserted into the
segment it wraps (the one with a mandatory wrap, else the one whose wrap lengthens the path least,
within the PathWrap's point range; segments between two tangent points of the same wrap object are
skipped). With several wrap objects it repeats this up to 8 times (each pass sees the tangent points
of the others) until the length changes by less than 0.5 mm, swapping the first two wrap objects
after the first pass when the first does not wrap and the second has a point inside it.

One OpenSim 4.6 behaviour matters for the numbers: a tangent point's ground location is cached
(Point::getLocationInGround) the first time a length is computed after the point enters the path,
and moving the point in a later pass does not refresh that cache. So the wrap computations see the
tangent points where the latest pass put them, but the segment lengths (the path length, the
convergence test and the choice between segments) use where they were first placed. Measured: on
Moco's 3D walking model, gaslat's length is up to 7 mm off without this.

Here the list is a fixed number of slots whose contents are `if_else` selections, so the whole
procedure - including its iteration count - is one expression of q. It stays compact: each pass is one call of
a Function built once per wrap set, a pass after the length has converged is skipped by an MX switch rather than
evaluated and discarded, and so is a wrap object's computation on a slot outside its range.
A slot holds the point's ground position, a tag (0 for a path point, w + 1 for a tangent point of wrap w),
the path point index (-1 for tangent points), the wrap length (on the second tangent point), the tangent point in its
wrap frame and the ground position the lengths use (OpenSim's cached one).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import casadi as ca

from trajopt.model.paths.wrapping.vectors import (FAR_1, FAR_2, INSIDE_RADIUS, MANDATORY_WRAP, NO_WRAP, WRAPPED,
                                                  safe_norm)

CONVERGENCE = 0.0005  # m, GeometryPath::applyWrapObjects
MAX_PASSES = 8


@dataclass(frozen=True)
class PlacedWrap:
    """A wrap surface at a configuration: `function` (p1, p2) -> (code, r1, r2, wrap_length) in the wrap
    frame, whose axes (`rotation`, ground) and origin (`origin`, ground) are expressions of q; `first`
    and `last` the 0-based path point range; `active` as in the file."""

    function: ca.Function
    rotation: object
    origin: object
    first: int
    last: int
    active: bool = True

    def to_wrap(self, p):
        return ca.mtimes(self.rotation.T, p - self.origin)

    def to_ground(self, r):
        return self.origin + ca.mtimes(self.rotation, r)


@lru_cache(maxsize=None)
def when_valid(function: ca.Function) -> ca.Function:
    """casadi Function (valid, p1, p2) -> `function`(p1, p2) where `valid`, else (NO_WRAP, p1, p2, 0) without
    evaluating `function`: an MX switch called as one node, so a path's slots outside a wrap's range (most of
    them) cost nothing, and neither do their derivatives. A wrap Function that takes `valid` itself (three inputs:
    an ellipsoid with implicit derivatives, `trajopt.model.paths.wrapping.ellipsoid`) is its own."""
    if function.n_in() == 3:
        return function
    p1, p2 = ca.SX.sym("p1", 3), ca.SX.sym("p2", 3)
    skip = ca.Function(f"{function.name()}_skipped", [p1, p2], [ca.SX(NO_WRAP), p1, p2, ca.SX(0)])
    switch = ca.Function.if_else(f"{function.name()}_switch", function, skip)
    valid, m1, m2 = ca.MX.sym("valid"), ca.MX.sym("p1", 3), ca.MX.sym("p2", 3)
    return ca.Function(f"{function.name()}_when_valid", [valid, m1, m2], switch(valid, m1, m2),
                       ["valid", "p1", "p2"], ["code", "r1", "r2", "wrap_length"], {"never_inline": True})


def _slot(position, tag, index, wrap_length=0, local=(0, 0, 0), seen=None):
    seen = position if seen is None else seen
    return ca.vertcat(position, tag, index, wrap_length, *[local[k] for k in range(3)], seen)


def _pad():
    return _slot(ca.DM.zeros(3), -1, -1)


def _pos(slot):
    return slot[0:3]


def _tag(slot):
    return slot[3]


def _index(slot):
    return slot[4]


def _wrap_length(slot):
    return slot[5]


def _local(slot):
    return slot[6:9]


def _seen(slot):
    return slot[9:12]


class SlotPath:
    """The path list as `size` slots and a count."""

    def __init__(self, slots, count):
        self.slots = list(slots)
        self.count = count

    def insert_pair(self, where, first, second, do):
        size = len(self.slots)
        new = []
        for k in range(size):
            before = self.slots[k]
            after = self.slots[k - 2] if k >= 2 else _pad()
            value = ca.if_else(k < where, before, ca.if_else(k == where, first,
                                                                ca.if_else(k == where + 1, second, after)))
            new.append(ca.if_else(do, value, before))
        return SlotPath(new, self.count + 2 * do)

    def remove_tag(self, tag):
        """Remove the two consecutive slots tagged `tag`, if present."""
        size = len(self.slots)
        hits = [_tag(s) == tag for s in self.slots]
        present = hits[0]
        where = 0
        for k in range(1, size):
            where = where + k * ca.logic_and(hits[k], ca.logic_not(hits[k - 1]))
            present = ca.logic_or(present, hits[k])
        new = []
        for k in range(size):
            after = self.slots[k + 2] if k + 2 < size else _pad()
            new.append(ca.if_else(ca.logic_and(present, k >= where), after, self.slots[k]))
        return SlotPath(new, self.count - 2 * present)

    def position_of(self, index):
        return sum(k * (_index(s) == index) for k, s in enumerate(self.slots))

    def select(self, condition, other):
        return SlotPath([ca.if_else(condition, a, b) for a, b in zip(self.slots, other.slots)],
                        ca.if_else(condition, self.count, other.count))

    def tagged(self, tag):
        """(present, first slot, second slot) of the two slots tagged `tag`."""
        present, first, second = 0, _pad(), _pad()
        for k in range(len(self.slots) - 1):
            here = ca.logic_and(_tag(self.slots[k]) == tag, ca.logic_not(present))
            first = ca.if_else(here, self.slots[k], first)
            second = ca.if_else(here, self.slots[k + 1], second)
            present = ca.logic_or(present, here)
        return present, first, second


    def length(self):
        total = 0
        for k in range(len(self.slots) - 1):
            a, b = self.slots[k], self.slots[k + 1]
            same = ca.logic_and(_tag(a) > 0, _tag(a) == _tag(b))
            piece = ca.if_else(same, _wrap_length(b), safe_norm(_seen(b) - _seen(a)))
            total = total + ca.if_else(k + 1 < self.count, piece, 0)
        return total


@dataclass(frozen=True)
class Cached:
    """OpenSim's cached ground locations of one wrap's two tangent points (see the module notes)."""

    valid: object
    first: object
    second: object

    def select(self, condition, other):
        return Cached(ca.if_else(condition, self.valid, other.valid), ca.if_else(condition, self.first, other.first),
                      ca.if_else(condition, self.second, other.second))


def _refresh(path, caches):
    """A length computation: tangent points in the path without a cached location get one."""
    new = []
    for w, cache in enumerate(caches):
        present, first, second = path.tagged(w + 1)
        fill = ca.logic_and(present, ca.logic_not(cache.valid))
        new.append(Cached(ca.logic_or(cache.valid, present), ca.if_else(fill, _pos(first), cache.first),
                          ca.if_else(fill, _pos(second), cache.second)))
    return new

def _first_active(active, first, last, reverse=False):
    """Index of the first (last) active point in first..last, symbolic when activity is."""
    order = range(last, first - 1, -1) if reverse else range(first, last + 1)
    found, index = 0, -1
    for i in order:
        take = ca.logic_and(ca.logic_not(found), active[i]) if not isinstance(active[i], int) else \
            (ca.logic_not(found) if active[i] else 0)
        index = ca.if_else(take, i, index)
        found = ca.logic_or(found, take)
    return index


def _wrap_once(path, w, wrap, active, n_points, cache):
    """One PathWrap's turn in a pass: remove its tangent points, find its best segment, insert them.
    Returns (path, result code)."""
    tag = w + 1
    path = path.remove_tag(tag)
    if not wrap.active:
        return path, ca.SX(NO_WRAP)
    first = _first_active(active, wrap.first, wrap.last)
    last = _first_active(active, wrap.first, wrap.last, reverse=True)
    start, end = path.position_of(first), path.position_of(last)
    result, done, best_change = ca.SX(NO_WRAP), ca.SX(0), ca.SX(ca.inf)
    take_any, where = ca.SX(0), ca.SX(0)
    best_r1, best_r2, best_length = ca.SX.zeros(3), ca.SX.zeros(3), ca.SX(0)
    size = len(path.slots)
    static = all(isinstance(a, int) for a in active)
    low = sum(active[:wrap.first]) if static else 0
    for j in range(low, size - 1):
        a, b = path.slots[j], path.slots[j + 1]
        same = ca.logic_and(_tag(a) > 0, _tag(a) == _tag(b))
        valid = ca.logic_and(ca.logic_and(j >= start, j < end), ca.logic_and(ca.logic_not(same), ca.logic_not(done)))
        # Off-range slots get a harmless far-away segment so no NaN reaches the derivatives.
        p1 = ca.if_else(valid, wrap.to_wrap(_pos(a)), FAR_1)
        p2 = ca.if_else(valid, wrap.to_wrap(_pos(b)), FAR_2)
        code, r1, r2, wrap_length = when_valid(wrap.function)(valid, p1, p2)[:4]
        r1_ground, r2_ground = wrap.to_ground(r1), wrap.to_ground(r2)
        change = safe_norm(r1_ground - _seen(a)) + wrap_length + safe_norm(_seen(b) - r2_ground) \
            - safe_norm(_seen(b) - _seen(a))
        result = ca.if_else(valid, code, result)
        mandatory = ca.logic_and(valid, code == MANDATORY_WRAP)
        better = ca.logic_and(ca.logic_and(valid, code == WRAPPED), change < best_change)
        take = ca.logic_or(mandatory, better)
        best_r1, best_r2 = ca.if_else(take, r1, best_r1), ca.if_else(take, r2, best_r2)
        best_length = ca.if_else(take, wrap_length, best_length)
        where = ca.if_else(take, j + 1, where)
        best_change = ca.if_else(better, change, best_change)
        take_any = ca.logic_or(take_any, take)
        done = ca.logic_or(done, mandatory)
    g1, g2 = wrap.to_ground(best_r1), wrap.to_ground(best_r2)
    first_point = _slot(g1, tag, -1, 0, ca.vertsplit(best_r1), ca.if_else(cache.valid, cache.first, g1))
    second_point = _slot(g2, tag, -1, best_length, ca.vertsplit(best_r2), ca.if_else(cache.valid, cache.second, g2))
    return path.insert_pair(where, first_point, second_point, take_any), result


def _pass(path, caches, wraps, order, active, n_points):
    results = {}
    for w in order:
        path, results[w] = _wrap_once(path, w, wraps[w], active, n_points, caches[w])
    return path, _refresh(path, caches), results


SLOT = 12  # numbers per slot (see the module notes)
CACHE = 7  # numbers per wrap's cached tangent points: valid, first, second
OUTPUTS = ["new_state", "length", "converged"]


def _pack(path, caches):
    """The path list and the caches as one column (slots, count, caches)."""
    return ca.vertcat(*path.slots, path.count, *[ca.vertcat(c.valid, c.first, c.second) for c in caches])


def _unpack(state, size, n_wraps):
    slots = [state[k * SLOT:(k + 1) * SLOT] for k in range(size)]
    base = size * SLOT + 1
    caches = [Cached(state[base + w * CACHE], state[base + w * CACHE + 1:base + w * CACHE + 4],
                     state[base + w * CACHE + 4:base + (w + 1) * CACHE]) for w in range(n_wraps)]
    return SlotPath(slots, state[size * SLOT]), caches


def _symbolic_wraps(wraps, frames):
    """The wraps with their frames read from `frames` (rotation column-major, then origin; 12 per wrap)."""
    return [PlacedWrap(w.function, ca.reshape(frames[12 * k:12 * k + 9], 3, 3), frames[12 * k + 9:12 * k + 12],
                       w.first, w.last, w.active) for k, w in enumerate(wraps)]


def _symbolic_active(pattern, flags):
    """Each point's activity: 1 where always active (`pattern` True), else the next entry of `flags`."""
    found = iter(range(flags.numel()))
    return [1 if always else flags[next(found)] for always in pattern]


@lru_cache(maxsize=None)
def _pass_functions(key, pattern, size):
    """(first, step) casadi Functions of one path's passes, built once per wrap set and activity pattern.

    first: (state, frames, flags) -> (state, length, results): the first pass (wraps in PathWrapSet order).
    step: (which, state, last_length, frames, flags) -> (state, length, converged): a later pass that is skipped
    (which 0: the state as it is, converged), plain (1) or with the first two wraps swapped (2); an MX switch, so
    only the pass taken is evaluated (and differentiated)."""
    wraps = [PlacedWrap(function, ca.DM.eye(3), ca.DM.zeros(3), first, last, active)
             for function, first, last, active in key]
    n_wraps = len(wraps)
    state = ca.SX.sym("state", size * SLOT + 1 + CACHE * n_wraps)
    frames = ca.SX.sym("frames", 12 * n_wraps)
    flags = ca.SX.sym("active", sum(1 for always in pattern if not always))
    last_length = ca.SX.sym("last_length")
    placed, active = _symbolic_wraps(wraps, frames), _symbolic_active(pattern, flags)
    identity = list(range(n_wraps))
    swapped = [1, 0] + identity[2:] if n_wraps >= 2 else identity

    def run(order):
        path, caches = _unpack(state, size, n_wraps)
        path, caches, results = _pass(path, caches, placed, order, active, len(pattern))
        return _pack(path, caches), path.length(), ca.vertcat(*[results[w] for w in identity])

    new, length, results = run(identity)
    first = ca.Function("wrap_pass_first", [state, frames, flags], [new, length, results],
                        ["state", "frames", "active"], ["new_state", "length", "results"])
    if n_wraps < 2:
        return first, None
    inputs = [state, last_length, frames, flags]
    names = ["state", "last_length", "frames", "active"]

    def step(name, order):
        new, length, _ = run(order)
        return ca.Function(name, inputs, [new, length, ca.fabs(length - last_length) < CONVERGENCE], names,
                           OUTPUTS)

    stopped = ca.Function("wrap_pass_stopped", inputs, [state, last_length, ca.SX(1)], names, OUTPUTS)
    switch = ca.Function.conditional("wrap_pass_switch", [stopped, step("wrap_pass", identity),
                                                         step("wrap_pass_swapped", swapped)], stopped)
    which = ca.MX.sym("which")
    arguments = [ca.MX.sym(n, x.sparsity()) for n, x in zip(names, inputs)]
    return first, ca.Function("wrap_pass_step", [which, *arguments], switch(which, *arguments),
                              ["which", *names], OUTPUTS, {"never_inline": True})


def wrapped_path(positions, active, wraps):
    """The final SlotPath of OpenSim's wrapping of the path through `positions` (ground, 3-vectors;
    `active` 1 or an SX flag per point) over `wraps` (PlacedWrap, in PathWrapSet order).

    Each pass is one call of a Function built once per wrap set (`_pass_functions`); the passes after the length
    converges are skipped, not evaluated and discarded."""
    n_points = len(positions)
    size = n_points + 2 * len(wraps)
    slots = [_pad() for _ in range(size)]
    count = 0
    for i, (position, on) in enumerate(zip(positions, active)):
        point = _slot(position, 0, i)
        if isinstance(on, int) and isinstance(count, int):
            if on:
                slots[count] = point
                count += 1
            continue
        slots = [ca.if_else(ca.logic_and(on, k == count), point, s) for k, s in enumerate(slots)]
        count = count + on
    path = SlotPath(slots, count)
    caches = [Cached(ca.SX(0), ca.SX.zeros(3), ca.SX.zeros(3)) for _ in wraps]
    key = tuple((w.function, w.first, w.last, bool(w.active)) for w in wraps)
    pattern = tuple(isinstance(a, int) for a in active)
    first, step = _pass_functions(key, pattern, size)
    frames = ca.vertcat(*[ca.vertcat(ca.vec(w.rotation), w.origin) for w in wraps])
    flags = ca.vertcat(*[a for a in active if not isinstance(a, int)])
    if flags.numel() == 0:
        flags = ca.SX(0, 1)
    state, last_length, results = first(_pack(path, caches), frames, flags)
    if step is not None:
        # OpenSim's swap of the first two wrap objects after the first pass, then up to MAX_PASSES - 1 more.
        path, caches = _unpack(state, size, len(wraps))
        swap = ca.logic_and(results[0] == NO_WRAP, results[1] == INSIDE_RADIUS)
        state = _pack(path.remove_tag(1).select(swap, path), caches)
        stop = ca.SX(0)
        for _ in range(1, MAX_PASSES):
            which = ca.if_else(stop, 0, ca.if_else(swap, 2, 1))
            state, last_length, converged = step(which, state, last_length, frames, flags)
            stop = ca.logic_or(stop, converged)
    return _unpack(state, size, len(wraps))[0]


def wrapped_length(positions, active, wraps):
    """Length of OpenSim's wrapped path (see `wrapped_path`)."""
    return wrapped_path(positions, active, wraps).length()
