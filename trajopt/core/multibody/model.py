"""The multibody model: a tree of bodies connected by joints, with gravity.

Layout of the state: q stacks each joint's coordinates and u each joint's speeds, joints in tree
order (every parent before its children, otherwise in the order they were added). nq != nv when
the model has quaternion joints; qdot = N(q) u (see `kinematics.coordinate_rates`).
Algorithms are free functions in `kinematics` and `dynamics`; they cache their casadi Functions
on the model, so a model is frozen (no more bodies or joints) once one has been built.
"""

from __future__ import annotations

import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody.bodies import GROUND, Body, OffsetFrame  # noqa: F401  (re-exported)
from trajopt.core.multibody.coordinates import Coordinate  # noqa: F401  (re-exported)
from trajopt.core.multibody.joints import Joint


class Model:
    """A tree of rigid bodies. Build with `add_body` and `add_joint`, then call algorithms.

    gravity: acceleration of gravity in ground axes (m/s^2), OpenSim's default (0, -9.80665, 0).
    """

    def __init__(self, name: str = "model", gravity=(0.0, -9.80665, 0.0)):
        self.name = str(name)
        self.gravity = np.asarray(gravity, dtype=float).reshape(3)
        self._bodies: dict[str, Body] = {}
        self._joints_added: list[Joint] = []
        self._finalized = False
        self._functions: dict = {}  # casadi Functions built once by the algorithm modules

    # ---- building -------------------------------------------------------------------------
    def add_body(self, body: Body) -> Body:
        """Add a body (its joint to a parent is added separately)."""
        self._check_open(f"body '{body.name}'")
        if body.name in self._bodies:
            raise TrajoptInputError(f"model '{self.name}': duplicate body name '{body.name}'")
        self._bodies[body.name] = body
        return body

    def add_joint(self, joint: Joint) -> Joint:
        """Add a joint from `joint.parent.body` (or 'ground') to `joint.child.body`."""
        self._check_open(f"joint '{joint.name}'")
        if any(j.name == joint.name for j in self._joints_added):
            raise TrajoptInputError(f"model '{self.name}': duplicate joint name '{joint.name}'")
        for frame, role in ((joint.parent, "parent"), (joint.child, "child")):
            if frame.body != GROUND and frame.body not in self._bodies:
                raise TrajoptInputError(
                    f"model '{self.name}': joint '{joint.name}' {role} body '{frame.body}' is not in the model"
                )
        if joint.child.body == GROUND:
            raise TrajoptInputError(f"model '{self.name}': joint '{joint.name}' has ground as its child")
        if any(j.child.body == joint.child.body for j in self._joints_added):
            raise TrajoptInputError(
                f"model '{self.name}': body '{joint.child.body}' is the child of two joints "
                "(closed loops are not supported)"
            )
        self._joints_added.append(joint)
        return joint

    def _check_open(self, what):
        if self._finalized:
            raise TrajoptInputError(f"model '{self.name}': cannot add {what} after algorithms were built")

    def finalize(self) -> "Model":
        """Order joints parents-first and lay out q and u; called automatically on first use."""
        if self._finalized:
            return self
        children = [j.child.body for j in self._joints_added]
        missing = [b for b in self._bodies if b not in children]
        if missing:
            raise TrajoptInputError(f"model '{self.name}': bodies without a joint to a parent: {missing}")
        ordered, placed, pending = [], {GROUND}, list(self._joints_added)
        while pending:
            ready = [j for j in pending if j.parent.body in placed]
            if not ready:
                raise TrajoptInputError(
                    f"model '{self.name}': joints {[j.name for j in pending]} are not connected to ground"
                )
            for j in ready:
                ordered.append(j)
                placed.add(j.child.body)
                pending.remove(j)
        self._joints = tuple(ordered)
        self._body_order = tuple(self._bodies[j.child.body] for j in ordered)
        self._body_index = {b.name: k for k, b in enumerate(self._body_order)}
        self._q_slices, self._v_slices = {}, {}
        iq = iv = 0
        for j in ordered:
            self._q_slices[j.name] = slice(iq, iq + j.nq)
            self._v_slices[j.name] = slice(iv, iv + j.nv)
            iq += j.nq
            iv += j.nv
        self._nq, self._nv = iq, iv
        self._coordinate_names = tuple(n for j in ordered for n in j.coordinate_names)
        self._speed_names = tuple(n for j in ordered for n in j.speed_names)
        for names, what in ((self._coordinate_names, "coordinate"), (self._speed_names, "speed")):
            duplicates = sorted({n for n in names if names.count(n) > 1})
            if duplicates:
                raise TrajoptInputError(f"model '{self.name}': duplicate {what} names {duplicates}")
        self._finalized = True
        return self

    # ---- structure --------------------------------------------------------------------------
    @property
    def bodies(self) -> tuple[Body, ...]:
        """Bodies in tree order (ground excluded); `body_index` gives a body's position."""
        return self.finalize()._body_order

    @property
    def joints(self) -> tuple[Joint, ...]:
        """Joints in tree order; joint k moves body k."""
        return self.finalize()._joints

    @property
    def nq(self) -> int:
        """Number of generalized coordinates (a quaternion counts 4)."""
        return self.finalize()._nq

    @property
    def nv(self) -> int:
        """Number of generalized speeds (degrees of freedom)."""
        return self.finalize()._nv

    @property
    def coordinate_names(self) -> tuple[str, ...]:
        """Names of the entries of q."""
        return self.finalize()._coordinate_names

    @property
    def speed_names(self) -> tuple[str, ...]:
        """Names of the entries of u (a scalar coordinate's speed has the coordinate's name)."""
        return self.finalize()._speed_names

    @property
    def coordinates(self) -> tuple[Coordinate, ...]:
        """The scalar Coordinate objects (ranges, defaults, locks), in tree order."""
        return tuple(c for j in self.joints for c in j.coordinates)

    def body(self, name: str) -> Body:
        """The body called `name`."""
        if name not in self._bodies:
            raise TrajoptInputError(f"model '{self.name}': no body '{name}' (bodies: {list(self._bodies)})")
        return self._bodies[name]

    def joint(self, name: str) -> Joint:
        """The joint called `name`."""
        for j in self.joints:
            if j.name == name:
                return j
        raise TrajoptInputError(f"model '{self.name}': no joint '{name}' (joints: {[j.name for j in self.joints]})")

    def body_index(self, name: str) -> int:
        """Column of body `name` in per-body outputs (poses, wrenches); -1 for ground."""
        self.finalize()
        if name == GROUND:
            return -1
        if name not in self._body_index:
            raise TrajoptInputError(f"model '{self.name}': no body '{name}' (bodies: {list(self._bodies)})")
        return self._body_index[name]

    def joint_index(self, name: str) -> int:
        """Column of joint `name` in per-joint outputs (reaction loads)."""
        return self.joints.index(self.joint(name))

    def parent_index(self, k: int) -> int:
        """Index of body k's parent body (-1 for ground)."""
        return self.body_index(self.joints[k].parent.body)

    def q_slice(self, joint_name: str) -> slice:
        """Entries of q owned by a joint."""
        self.joint(joint_name)
        return self._q_slices[joint_name]

    def v_slice(self, joint_name: str) -> slice:
        """Entries of u owned by a joint."""
        self.joint(joint_name)
        return self._v_slices[joint_name]

    def coordinate_index(self, name: str) -> int:
        """Index of coordinate `name` in q."""
        if name not in self.coordinate_names:
            raise TrajoptInputError(f"model '{self.name}': no coordinate '{name}' "
                                    f"(coordinates: {list(self.coordinate_names)})")
        return self.coordinate_names.index(name)

    def speed_index(self, name: str) -> int:
        """Index of speed `name` in u."""
        if name not in self.speed_names:
            raise TrajoptInputError(f"model '{self.name}': no speed '{name}' (speeds: {list(self.speed_names)})")
        return self.speed_names.index(name)

    def default_q(self) -> np.ndarray:
        """Default configuration: coordinates' default values, identity quaternions."""
        return np.concatenate([j.default_q() for j in self.joints]) if self.joints else np.zeros(0)

    def locked_speed_indices(self) -> list[int]:
        """Indices in u of locked scalar coordinates."""
        locked = {c.name for c in self.coordinates if c.locked}
        return [k for k, n in enumerate(self.speed_names) if n in locked]

    def unlocked_speed_indices(self) -> list[int]:
        """Indices in u of the speeds that may move (all but locked coordinates)."""
        locked = set(self.locked_speed_indices())
        return [k for k in range(self.nv) if k not in locked]

    def __repr__(self):
        return f"Model({self.name!r}, bodies={len(self._bodies)}, joints={len(self._joints_added)})"
