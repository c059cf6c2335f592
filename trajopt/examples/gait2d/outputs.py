"""What a gait solution becomes on disk: half and full stride tables, ground reactions, figures, animation."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trajopt.studies.analysis.figures import pyplot, save_figure, write_animation
from trajopt.studies.gait.expansion import full_cycle, table_mirror
from trajopt.studies.gait.ground_reactions import mirror_ground_reactions
from trajopt.model.io.motion import read_motion
from trajopt.model.io.tables import Table, read_table, write_sto

from trajopt.examples.gait2d.model import HERE, coordinate_path
from trajopt.examples.gait2d.prediction import REFERENCE_COORDINATES, REFERENCE_GRF
from trajopt.core.multibody import body_poses

MOCO_SOLUTION = HERE / "moco" / "gaitPrediction_solution.sto"
MOCO_GRF = HERE / "moco" / "gaitPrediction_solutionGRF_fullStride.sto"
MOCO_TRACKING = HERE / "moco" / "gaitTracking_solution.sto"
GRF_LABELS = tuple(f"ground_{kind}_{side}_{axis}" for side in ("r", "l")
                   for kind, axes in (("force", ("vx", "vy", "vz")), ("force", ("px", "py", "pz")),
                                      ("torque", ("x", "y", "z"))) for axis in axes)


@dataclass(frozen=True)
class Stride:
    """A trajectory on a time grid: states/controls table plus ground reactions (ground axes)."""

    table: Table  # OpenSim state and control paths as labels
    right_force: np.ndarray  # (M, 3)
    left_force: np.ndarray
    right_torque: np.ndarray  # about the ground origin
    left_torque: np.ndarray

    @property
    def time(self) -> np.ndarray:
        return self.table.time

    def grf_table(self) -> Table:
        """referenceGRF.sto layout; forces applied at the ground origin with their torques about it."""
        zero = np.zeros_like(self.right_force)
        data = np.hstack([self.right_force, zero, self.right_torque, self.left_force, zero, self.left_torque])
        return Table(self.time, GRF_LABELS, data, name="ground_reactions")


def half_stride(gait, solution) -> Stride:
    """The solution's half cycle on its grid (udot columns dropped)."""
    v, model = gait.muscle_driven, gait.model
    table = solution.table()
    keep = [i for i, label in enumerate(table.labels) if not label.endswith("/accel")]
    table = Table(table.time, tuple(table.labels[i] for i in keep), table.data[:, keep], name="gait2d_half_stride",
                  metadata=table.metadata)
    forces = [np.asarray(model.ground_reactions.map(table.time.size)(solution.value(v.q), solution.value(v.u))[i]).T
              for i in range(4)]
    return Stride(table, *forces)


def full_stride(gait, half: Stride) -> Stride:
    """Half stride followed by its mirror image (``trajopt.studies.gait``: pelvis_tx shifted by the displacement, time
    by the duration; feet's ground reactions swapped and reflected)."""
    table = half.table
    mirror = table_mirror(gait.muscle_driven, gait.model.symmetry, table.labels)
    tx = coordinate_path("pelvis_tx")
    full = full_cycle(table, mirror, tx, name="gait2d_full_stride")
    shift = np.array([table.column(tx)[-1] - table.column(tx)[0], 0.0, 0.0])
    second = mirror_ground_reactions(half.right_force[1:], half.left_force[1:], half.right_torque[1:],
                                     half.left_torque[1:], shift)
    first = (half.right_force, half.left_force, half.right_torque, half.left_torque)
    return Stride(full, *(np.vstack([a, b]) for a, b in zip(first, second)))


def write_stride(stride: Stride, folder: Path, stem: str) -> list[Path]:
    return [write_sto(folder / f"{stem}.sto", stride.table), write_sto(folder / f"{stem}_grf.sto", stride.grf_table())]


def grf_peaks(time, right_force) -> dict[str, float]:
    """Peaks of the right foot's ground reaction over a stride: vertical max, fore-aft min and max."""
    return {"vertical max (N)": float(right_force[:, 1].max()), "fore-aft min (N)": float(right_force[:, 0].min()),
            "fore-aft max (N)": float(right_force[:, 0].max())}


def moco_reference(tracking: bool = False) -> dict:
    """Moco's solution: half-stride table, full-stride GRFs (prediction only: Moco's tracking GRFs were not kept)."""
    if tracking:
        return {"solution": read_table(MOCO_TRACKING), "grf": None, "label": "Moco tracking"}
    grf = read_table(MOCO_GRF)
    return {"solution": read_table(MOCO_SOLUTION), "grf": grf, "label": "Moco",
            "right_force": np.column_stack([grf.column(f"ground_force_r_v{a}") for a in "xyz"])}


def moco_objective(moco: dict, model) -> float:
    """Moco's effort objective recomputed from its table: 10 ∫ Σ |control|³ dt / pelvis_tx displacement."""
    table = moco["solution"]
    controls = np.column_stack([table.column(f"/{n}") for n in model.muscle_names] +
                               [table.column(f"/{model.lumbar_actuator.name}")])
    tx = table.column(coordinate_path("pelvis_tx"))
    return float(10.0 * np.trapezoid(np.sum(np.abs(controls) ** 3, axis=1), table.time) / (tx[-1] - tx[0]))


def plot_joint_angles(gait, full: Stride, moco: dict, path: Path) -> Path:
    """Coordinates over the full stride (% of stride): trajopt, Moco, and the reference half cycle."""
    plt = pyplot()
    model = gait.model
    reference = read_motion(REFERENCE_COORDINATES, coordinates=model.coordinate_names)
    moco_full = full_stride(gait, Stride(moco["solution"], *(np.zeros((moco["solution"].time.size, 3)),) * 4))
    names = [n for n in model.coordinate_names if n != "pelvis_tx"]
    figure, axes = plt.subplots(3, 3, figsize=(11, 8), sharex=True)
    for axis, name in zip(axes.flat, names):
        label = coordinate_path(name)
        unit = (lambda x: x) if name == "pelvis_ty" else np.degrees
        for stride, style, who in ((full, "-", "trajopt"), (moco_full, "--", moco["label"])):
            percent = 100 * (stride.time - stride.time[0]) / (stride.time[-1] - stride.time[0])
            axis.plot(percent, unit(stride.table.column(label)), style, label=who)
        percent = 100 * reference.time / (2 * reference.time[-1])
        axis.plot(percent, unit(reference.column(name)), ":", color="k", label="reference (half)")
        axis.set_title(f"{name} ({'m' if name == 'pelvis_ty' else 'deg'})", fontsize=9)
    axes[0, 0].legend(fontsize=7)
    for axis in axes[-1]:
        axis.set_xlabel("% stride")
    return save_figure(figure, path, dpi=90)


def plot_grfs(full: Stride, moco: dict, path: Path) -> Path:
    """Right-foot ground reactions over the stride: trajopt, Moco, and the reference half cycle."""
    plt = pyplot()
    reference = read_table(REFERENCE_GRF)
    figure, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for axis, component, name in ((axes[0], 0, "fore-aft"), (axes[1], 1, "vertical")):
        percent = 100 * (full.time - full.time[0]) / (full.time[-1] - full.time[0])
        axis.plot(percent, full.right_force[:, component], label="trajopt")
        grf = moco["grf"]
        if grf is not None:
            axis.plot(100 * grf.time / grf.time[-1], moco["right_force"][:, component], "--", label=moco["label"])
        axis.plot(100 * reference.time / (2 * reference.time[-1]),
                  reference.column(f"ground_force_r_v{'xy'[component]}"), ":", color="k", label="reference (half)")
        axis.set_title(f"right foot, {name} (N)")
        axis.set_xlabel("% stride")
    axes[0].legend(fontsize=8)
    return save_figure(figure, path, dpi=90)


def plot_activations(gait, half: Stride, moco: dict, path: Path) -> Path:
    """Muscle activations over the half stride: trajopt vs Moco (the reference data has none)."""
    plt = pyplot()
    names = gait.model.muscle_names
    figure, axes = plt.subplots(3, 6, figsize=(14, 7), sharex=True, sharey=True)
    moco_solution = moco["solution"]
    for axis, name in zip(axes.flat, names):
        label = f"/{name}/activation"
        axis.plot(half.time, half.table.column(label), label="trajopt")
        axis.plot(moco_solution.time, moco_solution.column(label), "--", label=moco["label"])
        axis.set_title(name, fontsize=9)
    axes[0, 0].legend(fontsize=7)
    for axis in axes[-1]:
        axis.set_xlabel("time (s)")
    return save_figure(figure, path, dpi=80)


def stick_figure_animation(gait, full: Stride, path: Path, frames: int = 40) -> Path:
    """A small GIF of the body origins (pelvis, hips, knees, ankles, heels, toes, torso) over the stride."""
    plt = pyplot()
    mb = gait.model.multibody
    labels = [coordinate_path(n) for n in gait.model.coordinate_names]
    q_all = np.column_stack([full.table.column(label) for label in labels])
    picks = np.linspace(0, full.time.size - 1, frames).round().astype(int)
    index = {b.name: mb.body_index(b.name) for b in mb.bodies}
    positions = []
    for i in picks:
        rotations, origins = (np.asarray(x) for x in body_poses(mb, q_all[i]))
        k = index["torso"]
        # A point 0.5 m up the torso's y axis, so the trunk shows (its origin is the lumbar joint).
        positions.append(np.column_stack([origins, origins[:, k] + rotations[:, 3 * k:3 * k + 3] @ [0, 0.5, 0]]))
    index["torso_top"] = len(mb.bodies)
    chains = [("torso_top", "torso", "pelvis"), ("pelvis", "femur_l", "tibia_l", "talus_l", "calcn_l", "toes_l"),
              ("pelvis", "femur_r", "tibia_r", "talus_r", "calcn_r", "toes_r")]
    colors = ["k", "tab:blue", "tab:red"]
    figure, axis = plt.subplots(figsize=(5, 3.2))
    x_min = min(p[0].min() for p in positions) - 0.3
    x_max = max(p[0].max() for p in positions) + 0.3
    axis.set_xlim(x_min, x_max)
    axis.set_ylim(-0.05, 1.6)
    axis.set_aspect("equal")
    axis.axhline(0.0, color="0.5", linewidth=1)
    lines = [axis.plot([], [], "o-", color=c, markersize=3)[0] for c in colors]
    title = axis.set_title("")

    def draw(frame):
        p = positions[frame]
        for line, chain in zip(lines, chains):
            line.set_data([p[0, index[b]] for b in chain], [p[1, index[b]] for b in chain])
        title.set_text(f"t = {full.time[picks[frame]]:.3f} s")

    return write_animation(figure, draw, len(picks), path, fps=15, dpi=60)


def tracking_errors(gait, half: Stride) -> dict[str, float]:
    """RMS differences from referenceCoordinates.sto (deg, m for pelvis) and referenceGRF.sto (N) on the grid."""
    reference = read_motion(REFERENCE_COORDINATES, coordinates=gait.model.coordinate_names)
    errors = {}
    for name in gait.model.coordinate_names:
        target = np.interp(half.time, reference.time, reference.column(name))
        difference = half.table.column(coordinate_path(name)) - target
        errors[f"{name} ({'m' if name in ('pelvis_tx', 'pelvis_ty') else 'deg'})"] = float(
            np.sqrt(np.mean((difference if name in ("pelvis_tx", "pelvis_ty") else np.degrees(difference)) ** 2)))
    grf = read_table(REFERENCE_GRF)
    for side, force in (("r", half.right_force), ("l", half.left_force)):
        for axis, column in (("x", 0), ("y", 1)):
            target = np.interp(half.time, grf.time, grf.column(f"ground_force_{side}_v{axis}"))
            errors[f"ground_force_{side}_v{axis} (N)"] = float(np.sqrt(np.mean((force[:, column] - target) ** 2)))
    return errors
