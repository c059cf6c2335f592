"""What an OpenSim 4 model file says, as plain frozen dataclasses (no CasADi, no OpenSim).

The parser (`trajopt.model.osim.parser`) fills these from the XML; the builder (`trajopt.model.osim.build`)
turns them into a `trajopt.core.multibody` model. Frames are named by their full OpenSim path
(``/ground``, ``/bodyset/r_humerus``, ``/jointset/r_shoulder/base_offset``). Angles are in
radians, lengths in metres, as in the file. Properties absent from the file carry OpenSim 4.6's
default values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Vec3 = tuple[float, float, float]

GROUND_PATH = "/ground"


# --- functions of coordinates (OpenSim's Function subclasses) -------------------------------


@dataclass(frozen=True)
class Constant:
    """f(x) = value."""

    value: float


@dataclass(frozen=True)
class LinearFunction:
    """f(x) = slope * x + intercept (OpenSim's ``coefficients`` = [slope, intercept])."""

    slope: float
    intercept: float


@dataclass(frozen=True)
class PolynomialFunction:
    """f(x) = sum c_i x^(n-i), coefficients from the highest power down (as SimTK::Function::Polynomial)."""

    coefficients: tuple[float, ...]


@dataclass(frozen=True)
class SimmSpline:
    """OpenSim's interpolating cubic spline through the knots (x, y)."""

    x: tuple[float, ...]
    y: tuple[float, ...]


@dataclass(frozen=True)
class NaturalCubicSpline:
    """Cubic spline through the knots (x, y) with zero second derivative at both ends."""

    x: tuple[float, ...]
    y: tuple[float, ...]


@dataclass(frozen=True)
class MultiplierFunction:
    """f(x) = scale * function(x)."""

    function: "CoordinateFunction"
    scale: float


CoordinateFunction = (
    Constant | LinearFunction | PolynomialFunction | SimmSpline | NaturalCubicSpline | MultiplierFunction
)


# --- frames and bodies --------------------------------------------------------------------


@dataclass(frozen=True)
class Body:
    """A rigid body; inertia is (Ixx, Iyy, Izz, Ixy, Ixz, Iyz) about the mass center, in the body frame."""

    name: str
    path: str
    mass: float
    mass_center: Vec3
    inertia: tuple[float, float, float, float, float, float]


@dataclass(frozen=True)
class OffsetFrame:
    """A PhysicalOffsetFrame fixed to ``parent`` (a frame path); orientation is body-fixed X-Y-Z Euler angles."""

    name: str
    path: str
    parent: str
    translation: Vec3
    orientation: Vec3


# --- coordinates and joints ----------------------------------------------------------------


@dataclass(frozen=True)
class Coordinate:
    """A generalized coordinate; ``motion_type`` is 'rotational', 'translational' or 'coupled' (OpenSim's rule)."""

    name: str
    joint: str
    motion_type: str
    default_value: float
    default_speed_value: float
    range: tuple[float, float]
    clamped: bool
    locked: bool
    prescribed: bool


@dataclass(frozen=True)
class TransformAxis:
    """One of a CustomJoint's six axes: ``function`` of ``coordinates`` (names) along/about ``axis``."""

    name: str
    coordinates: tuple[str, ...]
    axis: Vec3
    function: CoordinateFunction


@dataclass(frozen=True)
class Joint:
    """Common part of every joint: parent and child frame paths and the joint's coordinates, in file order."""

    name: str
    parent_frame: str
    child_frame: str
    coordinates: tuple[Coordinate, ...]


@dataclass(frozen=True)
class WeldJoint(Joint):
    """No motion."""


@dataclass(frozen=True)
class PinJoint(Joint):
    """Rotation about the common Z axis of the joint frames."""


@dataclass(frozen=True)
class SliderJoint(Joint):
    """Translation along the common X axis of the joint frames."""


@dataclass(frozen=True)
class PlanarJoint(Joint):
    """Rotation about Z, then translation along X and Y of the parent joint frame (coordinates rz, tx, ty)."""


@dataclass(frozen=True)
class UniversalJoint(Joint):
    """Rotation about X, then about the new Y (coordinates rx, ry)."""


@dataclass(frozen=True)
class BallJoint(Joint):
    """Spherical joint; OpenSim's coordinates are body-fixed X-Y-Z angles (rx, ry, rz)."""


@dataclass(frozen=True)
class FreeJoint(Joint):
    """Six degrees of freedom; OpenSim's coordinates are rx, ry, rz (body-fixed X-Y-Z) then tx, ty, tz."""


@dataclass(frozen=True)
class CustomJoint(Joint):
    """Three rotation axes (body-fixed sequence) then three translation axes (in the parent joint frame)."""

    spatial_transform: tuple[TransformAxis, ...] = ()


@dataclass(frozen=True)
class CoordinateCouplerConstraint:
    """dependent = scale_factor * function(independent...)."""

    name: str
    dependent_coordinate: str
    independent_coordinates: tuple[str, ...]
    function: CoordinateFunction
    scale_factor: float
    enforced: bool


@dataclass(frozen=True)
class PointConstraint:
    """A point of body 1 and a point of body 2 coincide (locations in each body's frame; bodies as paths)."""

    name: str
    body1: str
    location1: Vec3
    body2: str
    location2: Vec3
    enforced: bool


@dataclass(frozen=True)
class WeldConstraint:
    """Frame 1 and frame 2 (frame paths) coincide."""

    name: str
    frame1: str
    frame2: str
    enforced: bool


@dataclass(frozen=True)
class ExpressionBasedCoordinateForce:
    """A generalized force on ``coordinate``: a Lepton expression of its value ``q`` and speed ``qdot``."""

    name: str
    coordinate: str
    expression: str
    source: str = ""


@dataclass(frozen=True)
class Marker:
    name: str
    frame: str
    location: Vec3


# --- muscle paths --------------------------------------------------------------------------


@dataclass(frozen=True)
class PathPoint:
    name: str
    frame: str
    location: Vec3


@dataclass(frozen=True)
class ConditionalPathPoint(PathPoint):
    """Active only while ``coordinate`` lies in ``range``."""

    coordinate: str = ""
    range: tuple[float, float] = (0.0, 0.0)


@dataclass(frozen=True)
class MovingPathPoint(PathPoint):
    """Location components are functions of coordinates (None: the fixed ``location`` component)."""

    x_coordinate: str = ""
    y_coordinate: str = ""
    z_coordinate: str = ""
    x_location: CoordinateFunction | None = None
    y_location: CoordinateFunction | None = None
    z_location: CoordinateFunction | None = None


@dataclass(frozen=True)
class WrapObject:
    """Common part of a wrap surface fixed to ``frame``: its pose in the frame (translation and body-fixed
    XYZ rotation), the side it wraps on (``quadrant``: 'all', 'x', '-x', ..., OpenSim's spellings) and
    whether it is active."""

    name: str
    frame: str
    translation: Vec3 = (0.0, 0.0, 0.0)
    xyz_body_rotation: Vec3 = (0.0, 0.0, 0.0)
    quadrant: str = "all"
    active: bool = True

    @property
    def kind(self) -> str:
        return type(self).__name__


@dataclass(frozen=True)
class WrapCylinder(WrapObject):
    """A cylinder of ``radius`` and ``length`` along the wrap frame's z axis, centred at its origin."""

    radius: float = 1.0
    length: float = 1.0


@dataclass(frozen=True)
class WrapSphere(WrapObject):
    radius: float = 0.05


@dataclass(frozen=True)
class WrapEllipsoid(WrapObject):
    """An ellipsoid with semi-axes ``dimensions`` along the wrap frame's axes."""

    dimensions: Vec3 = (0.05, 0.05, 0.05)


@dataclass(frozen=True)
class WrapTorus(WrapObject):
    """A torus about the wrap frame's z axis (tube radius ``inner_radius``, centre-line radius
    ``outer_radius``)."""

    inner_radius: float = 0.01
    outer_radius: float = 0.05


WRAP_QUADRANTS = ("all", "All", "ALL", "x", "+x", "X", "+X", "-x", "-X", "y", "+y", "Y", "+Y", "-y", "-Y",
                  "z", "+z", "Z", "+Z", "-z", "-Z")


@dataclass(frozen=True)
class PathWrap:
    """One entry of a path's PathWrapSet: the wrap object, the method ('hybrid', 'midpoint' or 'axial';
    only ellipsoids use it) and the 1-based range of path points it may wrap between (-1: path end)."""

    wrap_object: str
    method: str = "hybrid"
    range: tuple[int, int] = (-1, -1)


@dataclass(frozen=True)
class GeometryPath:
    points: tuple[PathPoint, ...]
    wraps: tuple[PathWrap, ...]


# --- forces ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeGrooteFregly2016Parameters:
    default_normalized_tendon_force: float = 0.5
    active_force_width_scale: float = 1.0
    fiber_damping: float = 0.0
    passive_fiber_strain_at_one_norm_force: float = 0.6
    tendon_strain_at_one_norm_force: float = 0.049
    ignore_passive_fiber_force: bool = False
    tendon_compliance_dynamics_mode: str = "explicit"


@dataclass(frozen=True)
class Thelen2003Parameters:
    default_fiber_length: float = 0.1
    FmaxTendonStrain: float = 0.04
    FmaxMuscleStrain: float = 0.6
    KshapeActive: float = 0.45
    KshapePassive: float = 5.0
    Af: float = 0.25
    Flen: float = 1.4
    fv_linear_extrap_threshold: float = 0.95
    maximum_pennation_angle: float = 1.4706289056333368
    minimum_activation: float = 0.01


@dataclass(frozen=True)
class Millard2012Parameters:
    """Curves (ActiveForceLengthCurve ...) keep OpenSim's defaults; custom curves are reported as ignored."""

    default_fiber_length: float = 0.1
    fiber_damping: float = 0.1
    maximum_pennation_angle: float = 1.4706289056333368
    minimum_activation: float = 0.01


@dataclass(frozen=True)
class Muscle:
    """A muscle: ``model`` is the OpenSim class name; ``parameters`` hold the model-specific properties."""

    name: str
    model: str
    path: GeometryPath
    applies_force: bool
    min_control: float
    max_control: float
    optimal_force: float
    max_isometric_force: float
    optimal_fiber_length: float
    tendon_slack_length: float
    pennation_angle_at_optimal: float
    max_contraction_velocity: float
    ignore_tendon_compliance: bool
    ignore_activation_dynamics: bool
    activation_time_constant: float
    deactivation_time_constant: float
    default_activation: float
    parameters: DeGrooteFregly2016Parameters | Thelen2003Parameters | Millard2012Parameters
    component_path: str = ""  # OpenSim's path of the muscle ("/forceset/<name>" or "/<name>" in <components>)


@dataclass(frozen=True)
class CoordinateActuator:
    name: str
    coordinate: str
    optimal_force: float
    min_control: float
    max_control: float
    applies_force: bool
    component_path: str = ""  # OpenSim's path ("/forceset/<name>" or "/<name>" in <components>)


@dataclass(frozen=True)
class ContactSphere:
    name: str
    frame: str
    location: Vec3
    radius: float


@dataclass(frozen=True)
class ContactHalfSpace:
    """The half space x > 0 of its own frame (Simbody's convention), placed by location/orientation in ``frame``."""

    name: str
    frame: str
    location: Vec3
    orientation: Vec3


@dataclass(frozen=True)
class SmoothSphereHalfSpaceForce:
    name: str
    sphere: str
    half_space: str
    stiffness: float
    dissipation: float
    static_friction: float
    dynamic_friction: float
    viscous_friction: float
    transition_velocity: float
    constant_contact_force: float
    hertz_smoothing: float
    hunt_crossley_smoothing: float
    applies_force: bool


@dataclass(frozen=True)
class CoordinateLimitForce:
    """OpenSim's passive limit on one coordinate, in the file's units: limits and transition in degrees (rotational
    coordinates) or metres, stiffness per degree or per metre, damping per degree/s or per m/s."""

    name: str
    coordinate: str
    upper_stiffness: float
    upper_limit: float
    lower_stiffness: float
    lower_limit: float
    damping: float
    transition: float
    source: str = ""


@dataclass(frozen=True)
class PathSpring:
    """A spring along a path: tension = stiffness * max(0, length - resting_length) * (1 + dissipation * speed)."""

    name: str
    path: GeometryPath
    resting_length: float
    stiffness: float
    dissipation: float
    source: str = ""


@dataclass(frozen=True)
class PathActuator:
    """An actuator pulling along a path with tension optimal_force * control."""

    name: str
    path: GeometryPath
    optimal_force: float
    min_control: float
    max_control: float
    source: str = ""


@dataclass(frozen=True)
class HuntCrossleyContact:
    """One ContactParameters entry of a HuntCrossleyForce: the contact geometry it names and their material."""

    geometry: tuple[str, ...]
    stiffness: float
    dissipation: float
    static_friction: float
    dynamic_friction: float
    viscous_friction: float


@dataclass(frozen=True)
class HuntCrossleyForce:
    """Simbody's Hunt-Crossley contact (Hertz force, dissipation, Stribeck friction) between contact geometry."""

    name: str
    contacts: tuple[HuntCrossleyContact, ...]
    transition_velocity: float
    source: str = ""


@dataclass(frozen=True)
class ModelSpec:
    """Everything trajopt reads from one .osim file; ``ignored`` lists (path, element) pairs it skipped."""

    name: str
    file: str
    gravity: Vec3
    bodies: tuple[Body, ...]
    frames: tuple[OffsetFrame, ...]
    joints: tuple[Joint, ...]
    constraints: tuple[CoordinateCouplerConstraint, ...]
    markers: tuple[Marker, ...]
    wrap_objects: tuple[WrapObject, ...]
    muscles: tuple[Muscle, ...]
    coordinate_actuators: tuple[CoordinateActuator, ...]
    contact_geometry: tuple[ContactSphere | ContactHalfSpace, ...]
    contact_forces: tuple[SmoothSphereHalfSpaceForce, ...]
    ignored: tuple[str, ...] = field(default=())
    body_constraints: tuple[PointConstraint | WeldConstraint, ...] = field(default=())
    expression_forces: tuple[ExpressionBasedCoordinateForce, ...] = field(default=())
    coordinate_limit_forces: tuple[CoordinateLimitForce, ...] = field(default=())
    path_springs: tuple[PathSpring, ...] = field(default=())
    path_actuators: tuple[PathActuator, ...] = field(default=())
    hunt_crossley_forces: tuple[HuntCrossleyForce, ...] = field(default=())

    @property
    def coordinates(self) -> tuple[Coordinate, ...]:
        """All coordinates in joint order (the order OpenSim's CoordinateSet uses)."""
        return tuple(c for joint in self.joints for c in joint.coordinates)

    def muscles_using(self, wrap_object: str) -> tuple[str, ...]:
        """Names of the muscles whose path wraps over ``wrap_object``."""
        return tuple(m.name for m in self.muscles if any(w.wrap_object == wrap_object for w in m.path.wraps))
