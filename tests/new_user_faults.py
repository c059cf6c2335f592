"""A new user's bad or implausible inputs to every command, as cases for tests/test_new_user_faults.py.

Each case writes the files it needs into a scratch folder (variants of the repository's own models and motions)
and gives the command line; its ``expect`` says what a correct tool does with it: refuse with one line naming the
file, element or value (``ERROR``), run and state a caveat (``CAVEAT``), or run (``OK``). ``says`` are fragments the
error line (or the caveat) must hold, with ``{tmp}`` standing for the scratch folder. Every case stops before a
solve or solves a problem of a few frames. The cases named in the issue on silent results and tracebacks have their
own tests (tests/test_bad_input.py, tests/test_batch_faults.py) and are not repeated here.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "trajopt" / "examples"
ARM26 = EXAMPLES / "arm26" / "arm26.osim"
ARM26_PATHS = EXAMPLES / "arm26" / "paths.json"
ELBOW = EXAMPLES / "arm26_static_optimization" / "elbow_flex_0_90_minjerk.mot"  # 0..1 s, 101 frames, degrees
GAIT2D = EXAMPLES / "gait2d"
GAIT2D_MODEL = GAIT2D / "2D_gait.osim"
GAIT2D_MOTION = GAIT2D / "referenceCoordinates.sto"  # 0..0.47 s, 50 frames, radians
GAIT2D_LOADS = GAIT2D / "referenceGRF.xml"
GAIT2D_PATHS = GAIT2D / "paths.json"
WALK3D = EXAMPLES / "walk3d"  # Moco's example3DWalking: a gait cycle with measured ground reactions
NO_MUSCLES = ROOT / "tests" / "data" / "osim" / "all_joints.osim"
BALL_JOINT = ROOT / "tests" / "data" / "osim" / "ball_free.osim"
UNWRITABLE = Path("/proc/trajopt-new-user")  # no one can create a folder here, not even root


class Expect(enum.Enum):
    ERROR = "one line naming the file, element or value; non-zero exit"
    CAVEAT = "exit 0 with a stated warning or note"
    OK = "exit 0"


@dataclass(frozen=True)
class Case:
    name: str
    argv: Callable[[Path], list]  # scratch folder -> the command line after `trajopt`
    expect: Expect
    says: tuple[str, ...] = ()


# --- bad files built from the repository's own ---------------------------------------------------------------------

def elbow_lines() -> list[str]:
    return ELBOW.read_text().splitlines()


def header_end(lines: list[str]) -> int:
    """Index of the column-label line (the one after 'endheader')."""
    return next(i for i, line in enumerate(lines) if line.strip() == "endheader") + 1


def write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text)
    return path


def elbow_variant(tmp: Path, name: str, edit: Callable[[list[str]], list[str]]) -> Path:
    """The elbow motion with its lines edited."""
    return write(tmp, name, "\n".join(edit(elbow_lines())) + "\n")


def rows_edited(edit: Callable[[list[list[str]]], list[list[str]]]) -> Callable[[list[str]], list[str]]:
    """A line edit that changes the data rows (split into fields) and keeps nRows right."""
    def apply(lines: list[str]) -> list[str]:
        start = header_end(lines) + 1
        rows = edit([line.split() for line in lines[start:]])
        head = [f"nRows={len(rows)}" if line.startswith("nRows") else line for line in lines[:start]]
        return head + ["\t".join(row) for row in rows]
    return apply


def first_rows(count: int):
    return rows_edited(lambda rows: rows[:count])


def set_value(row: int, column: int, value: str):
    def edit(rows):
        rows[row][column] = value
        return rows
    return rows_edited(edit)


def swap_rows(a: int, b: int):
    def edit(rows):
        rows[a], rows[b] = rows[b], rows[a]
        return rows
    return rows_edited(edit)


def duplicate_row(index: int):
    return rows_edited(lambda rows: rows[:index + 1] + [list(rows[index])] + rows[index + 1:])


def relabel(old: str, new: str):
    return lambda lines: lines[:header_end(lines)] + [lines[header_end(lines)].replace(old, new)] + \
        lines[header_end(lines) + 1:]


def without_line(prefix: str):
    return lambda lines: [line for line in lines if not line.startswith(prefix)]


def arm26_variant(tmp: Path, name: str, *pairs: str) -> Path:
    """arm26.osim with the first occurrence of each (old, new) pair of ``pairs`` replaced."""
    text = ARM26.read_text()
    for old, new in zip(pairs[::2], pairs[1::2]):
        assert old in text, old
        text = text.replace(old, new, 1)
    return write(tmp, name, text)


def gait_motion(tmp: Path, name: str, edit: Callable[[list[str]], list[str]]) -> Path:
    """gait2d's reference coordinates (radians; time, pelvis_tilt, pelvis_tx, pelvis_ty, ...) with lines edited."""
    return write(tmp, name, "\n".join(edit(GAIT2D_MOTION.read_text().splitlines())) + "\n")


def gait_loads(tmp: Path, name: str, edit: Callable[[list[str]], list[str]], xml_edit=lambda text: text) -> Path:
    """gait2d's ExternalLoads (``name``.xml) with its .sto's lines edited (``name``.sto), and its text edited."""
    lines = (GAIT2D / "referenceGRF.sto").read_text().splitlines()
    write(tmp, f"{name}.sto", "\n".join(edit(lines)) + "\n")
    return write(tmp, f"{name}.xml", xml_edit(GAIT2D_LOADS.read_text().replace("referenceGRF.sto", f"{name}.sto")))


def walk3d_loads_in_millimetres(tmp: Path) -> Path:
    """walk3d's ExternalLoads with the points of application (``..._p{x,y,z}`` columns) in millimetres."""
    lines = (WALK3D / "grf_walk.mot").read_text().splitlines()
    start = header_end(lines)
    points = [i for i, label in enumerate(lines[start].split()) if "_p" in label]
    rows = [line.split() for line in lines[start + 1:]]
    rows = [[f"{float(v) * 1000:.6g}" if i in points else v for i, v in enumerate(row)] for row in rows]
    write(tmp, "grf_mm.mot", "\n".join(lines[:start + 1] + ["\t".join(row) for row in rows]) + "\n")
    return write(tmp, "grf_mm.xml", (WALK3D / "grf_walk.xml").read_text().replace("grf_walk.mot", "grf_mm.mot"))


def short_gait_loads(tmp: Path, first: int, last: int) -> Path:
    """gait2d's ExternalLoads with only the data rows [first, last) of its .sto (late_grf.xml, late_grf.sto)."""
    return gait_loads(tmp, "late_grf", rows_edited(lambda rows: rows[first:last]))


def gait_id(loads: Callable[[Path], Path], command: str = "inverse-dynamics", *rest) -> Callable[[Path], list]:
    """``command`` on gait2d's model and motion with the loads ``loads(tmp)`` writes."""
    return lambda tmp: [command, GAIT2D_MODEL, GAIT2D_MOTION, "--external-loads", loads(tmp), *rest,
                        "--out", tmp / "out"]


def loads_naming(tmp: Path, body: str) -> Path:
    """gait2d's ExternalLoads (its .sto copied beside) with the right force applied to ``body``."""
    write(tmp, "referenceGRF.sto", (GAIT2D / "referenceGRF.sto").read_text())
    text = GAIT2D_LOADS.read_text().replace("<applied_to_body>calcn_r", f"<applied_to_body>{body}")
    return write(tmp, "grf.xml", text)


def still_motion(tmp: Path, labels, value: float = 0.0) -> Path:
    """A table holding ``labels`` at ``value`` for 1 s (11 frames; radians for a motion)."""
    rows = [f"{t / 10:g}" + f"\t{value:g}" * len(labels) for t in range(11)]
    return write(tmp, "still.sto", "\n".join(["still", "version=1", "inDegrees=no", "endheader",
                                              "\t".join(["time", *labels]), *rows]) + "\n")


def spec(tmp: Path, text: str, name: str = "spec.toml") -> Path:
    return write(tmp, name, text)


def sleep_spec(tmp: Path, extra: str = "") -> Path:
    return spec(tmp, f'task = "sleep"\n[inputs]\nseconds = 0.0\n[sweep]\nvalue = [1.0, 2.0]\n{extra}')


def tool(command: str, *rest) -> Callable[[Path], list]:
    """``command ARM26 ELBOW rest... --out {tmp}/out`` with ``{tmp}`` in ``rest`` replaced."""
    return lambda tmp: [command, ARM26, ELBOW, *[str(r).format(tmp=tmp) for r in rest], "--out", tmp / "out"]


E, C, OK = Expect.ERROR, Expect.CAVEAT, Expect.OK
ID, SO, MA, MI, MT = "inverse-dynamics", "static-optimization", "muscle-analysis", "muscle-inverse", "muscle-track"


CASES: list[Case] = [
    # --- files that are missing, swapped, empty or of the wrong kind --------------------------------------------------
    Case("id-model-missing", lambda tmp: [ID, tmp / "arm26.osim", ELBOW, "--out", tmp / "out"], E,
         ("{tmp}/arm26.osim",)),
    Case("id-motion-missing", lambda tmp: [ID, ARM26, tmp / "elbow.mot", "--out", tmp / "out"], E,
         ("{tmp}/elbow.mot",)),
    Case("id-model-and-motion-swapped", lambda tmp: [ID, ELBOW, ARM26, "--out", tmp / "out"], E,
         ("elbow_flex_0_90_minjerk.mot",)),
    Case("id-model-empty", lambda tmp: [ID, write(tmp, "empty.osim", ""), ELBOW, "--out", tmp / "out"], E,
         ("{tmp}/empty.osim",)),
    Case("id-motion-empty", lambda tmp: [ID, ARM26, write(tmp, "empty.mot", ""), "--out", tmp / "out"], E,
         ("{tmp}/empty.mot",)),
    Case("id-model-is-a-folder", lambda tmp: [ID, tmp, ELBOW, "--out", tmp / "out"], E, ("{tmp}",)),
    Case("id-motion-is-a-folder", lambda tmp: [ID, ARM26, tmp, "--out", tmp / "out"], E, ("{tmp}",)),
    Case("ma-model-is-the-loads-xml", lambda tmp: [MA, GAIT2D_LOADS, GAIT2D_MOTION, "--out", tmp / "out"], E,
         ("referenceGRF.xml",)),
    Case("id-model-broken-xml", lambda tmp: [ID, arm26_variant(tmp, "broken.osim", "</BodySet>", "</BodySt>"), ELBOW,
                                             "--out", tmp / "out"], E, ("{tmp}/broken.osim",)),
    Case("id-model-truncated", lambda tmp: [ID, write(tmp, "cut.osim", ARM26.read_text()[:5000]), ELBOW,
                                            "--out", tmp / "out"], E, ("{tmp}/cut.osim",)),
    Case("id-model-unsupported-muscle", lambda tmp: [
        MA, arm26_variant(tmp, "schutte.osim", "<Thelen2003Muscle name=\"TRIlong\">",
                          "<Schutte1993Muscle_Deprecated name=\"TRIlong\">", "</Thelen2003Muscle>",
                          "</Schutte1993Muscle_Deprecated>"),
        ELBOW, "--paths", ARM26_PATHS, "--out", tmp / "out"], E, ("Schutte1993Muscle_Deprecated",)),
    Case("id-model-unsupported-joint", lambda tmp: [ID, arm26_variant(
        tmp, "joint.osim", '<CustomJoint name="r_shoulder">', '<EllipsoidJoint name="r_shoulder">', "</CustomJoint>",
        "</EllipsoidJoint>"), ELBOW, "--out", tmp / "out"], E, ("EllipsoidJoint",)),
    Case("id-model-negative-mass", lambda tmp: [ID, arm26_variant(
        tmp, "mass.osim", "<mass>1.8645719999999999</mass>", "<mass>-1.864572</mass>"), ELBOW, "--out", tmp / "out"],
        E, ("{tmp}/mass.osim", "-1.86")),
    Case("id-model-mass-nan", lambda tmp: [ID, arm26_variant(
        tmp, "mass.osim", "<mass>1.5343150000000001</mass>", "<mass>NaN</mass>"), ELBOW, "--out", tmp / "out"],
        E, ("{tmp}/mass.osim", "nan")),
    Case("id-model-with-ball-joint", lambda tmp: [ID, BALL_JOINT, ELBOW, "--out", tmp / "out"], E,
         ("ball_free.osim",)),
    Case("id-motion-csv-with-semicolons", lambda tmp: [ID, ARM26, write(
        tmp, "elbow.csv", "time;r_shoulder_elev;r_elbow_flex\n0;0;0\n0.5;0;45\n1;0;90\n"), "--out", tmp / "out"], E,
        ("{tmp}/elbow.csv",)),
    # --- truncated or malformed motion files --------------------------------------------------------------------------
    Case("id-motion-no-endheader", lambda tmp: [
        ID, ARM26, elbow_variant(tmp, "noend.mot", without_line("endheader")), "--out", tmp / "out"], E,
        ("{tmp}/noend.mot", "endheader")),
    Case("id-motion-header-only", lambda tmp: [ID, ARM26, elbow_variant(tmp, "head.mot", lambda ls: ls[:6]),
                                               "--out", tmp / "out"], E, ("{tmp}/head.mot",)),
    Case("id-motion-labels-only", lambda tmp: [ID, ARM26, elbow_variant(tmp, "labels.mot", lambda ls: ls[:7]),
                                               "--out", tmp / "out"], E, ("{tmp}/labels.mot",)),
    Case("id-motion-last-row-cut", lambda tmp: [ID, ARM26, elbow_variant(
        tmp, "cut.mot", lambda ls: ls[:-1] + [ls[-1].split()[0]]), "--out", tmp / "out"], E, ("{tmp}/cut.mot",)),
    Case("id-motion-nrows-wrong", lambda tmp: [ID, ARM26, elbow_variant(
        tmp, "nrows.mot", lambda ls: [line.replace("nRows=101", "nRows=120") for line in ls]), "--out", tmp / "out"],
        E, ("{tmp}/nrows.mot", "120")),
    Case("id-motion-text-value", lambda tmp: [ID, ARM26, elbow_variant(tmp, "text.mot", set_value(3, 2, "n/a")),
                                              "--out", tmp / "out"], E, ("{tmp}/text.mot", "n/a")),
    Case("id-motion-decimal-comma", lambda tmp: [ID, ARM26, elbow_variant(tmp, "comma.mot", set_value(3, 2, "0,023")),
                                                 "--out", tmp / "out"], E, ("{tmp}/comma.mot", "0,023")),
    Case("id-motion-no-time-column", lambda tmp: [ID, ARM26, elbow_variant(tmp, "notime.mot", relabel("time", "t")),
                                                  "--out", tmp / "out"], E, ("{tmp}/notime.mot", "time")),
    Case("id-motion-duplicate-column", lambda tmp: [ID, ARM26, elbow_variant(
        tmp, "dup.mot", relabel("r_shoulder_elev", "r_elbow_flex")), "--out", tmp / "out"], E,
        ("{tmp}/dup.mot", "r_elbow_flex")),
    Case("id-motion-nan", lambda tmp: [ID, ARM26, elbow_variant(tmp, "nan.mot", set_value(50, 2, "NaN")),
                                       "--out", tmp / "out"], E, ("{tmp}/nan.mot", "r_elbow_flex", "0.5")),
    Case("id-motion-inf-time", lambda tmp: [ID, ARM26, elbow_variant(tmp, "inftime.mot", set_value(100, 0, "inf")),
                                            "--out", tmp / "out"], E, ("{tmp}/inftime.mot",)),
    # --- time columns that are not a time ---------------------------------------------------------------------------
    Case("id-motion-time-backwards", lambda tmp: [ID, ARM26, elbow_variant(tmp, "back.mot", swap_rows(40, 41)),
                                                  "--out", tmp / "out"], E, ("{tmp}/back.mot", "0.4")),
    Case("id-motion-duplicate-time-row", lambda tmp: [ID, ARM26, elbow_variant(tmp, "twice.mot", duplicate_row(30)),
                                                      "--out", tmp / "out"], E, ("{tmp}/twice.mot", "0.3")),
    Case("id-motion-one-frame", lambda tmp: [ID, ARM26, elbow_variant(tmp, "one.mot", first_rows(1)),
                                             "--out", tmp / "out"], E, ("{tmp}/one.mot",)),
    Case("id-motion-two-frames", lambda tmp: [ID, ARM26, elbow_variant(tmp, "two.mot", first_rows(2)),
                                              "--out", tmp / "out"], E, ("{tmp}/two.mot",)),
    Case("id-motion-windows-line-endings", lambda tmp: [ID, ARM26, write(tmp, "crlf.mot", ELBOW.read_text().replace(
        "\n", "\r\n")), "--out", tmp / "out"], OK),
    Case("id-motion-with-byte-order-mark", lambda tmp: [ID, ARM26, write(tmp, "bom.mot", "\ufeff" + ELBOW.read_text()),
                                                        "--out", tmp / "out"], OK),
    Case("id-extra-argument", lambda tmp: [ID, ARM26, ELBOW, "elbow2.mot", "--out", tmp / "out"], E, ("elbow2.mot",)),
    Case("id-motion-time-in-milliseconds", lambda tmp: [ID, ARM26, elbow_variant(tmp, "ms.mot", rows_edited(
        lambda rows: [[f"{float(r[0]) * 1000:g}", *r[1:]] for r in rows])), "--out", tmp / "out"], C,
        ("{tmp}/ms.mot", "frames are 10 s apart over 1000 s")),
    # --- columns that do not match the model --------------------------------------------------------------------------
    Case("id-motion-of-another-model", lambda tmp: [ID, ARM26, GAIT2D_MOTION, "--out", tmp / "out"], E,
         ("referenceCoordinates.sto",)),
    Case("ma-motion-column-misspelled", lambda tmp: [MA, ARM26, elbow_variant(
        tmp, "typo.mot", relabel("r_elbow_flex", "r_elbow_flexion")), "--paths", ARM26_PATHS, "--out", tmp / "out"],
        C, ("r_elbow_flexion", "r_elbow_flex")),
    Case("id-motion-extra-columns", lambda tmp: [ID, ARM26, elbow_variant(tmp, "extra.mot", lambda ls: [
        *[line.replace("nColumns=3", "nColumns=4") for line in ls[:header_end(ls)]],
        ls[header_end(ls)] + "\tr_elbow_flex_speed", *[line + "\t0" for line in ls[header_end(ls) + 1:]]]),
        "--out", tmp / "out"], C, ("{tmp}/extra.mot", "r_elbow_flex_speed")),
    Case("id-translations-in-millimetres", lambda tmp: [ID, GAIT2D_MODEL, gait_motion(tmp, "mm.sto", rows_edited(
        lambda rows: [[r[0], r[1], *[f"{float(v) * 1000:g}" for v in r[2:4]], *r[4:]] for r in rows])),
        "--out", tmp / "out"], C, ("{tmp}/mm.sto", "pelvis_ty", "millimetres?")),
    Case("id-motion-no-indegrees-line-with-degrees", lambda tmp: [ID, ARM26, elbow_variant(
        tmp, "nounit.mot", without_line("inDegrees")), "--out", tmp / "out"], E, ("{tmp}/nounit.mot", "r_elbow_flex")),
    # --- options of inverse dynamics ---------------------------------------------------------------------------------
    Case("id-cutoff-negative", tool(ID, "--cutoff", "-6"), E, ("--cutoff -6",)),
    Case("id-cutoff-above-nyquist", tool(ID, "--cutoff", "400"), E, ("--cutoff 400", "50")),
    Case("id-cutoff-nan", tool(ID, "--cutoff", "nan"), E, ("--cutoff nan",)),
    Case("id-cutoff-not-a-number", tool(ID, "--cutoff", "6Hz"), E, ("6Hz",)),
    Case("id-option-misspelled", tool(ID, "--externalloads", GAIT2D_LOADS), E, ("--externalloads",)),
    Case("id-loads-missing", tool(ID, "--external-loads", "{tmp}/grf.xml"), E, ("{tmp}/grf.xml",)),
    Case("id-loads-given-the-sto", lambda tmp: [ID, GAIT2D_MODEL, GAIT2D_MOTION, "--external-loads",
                                                GAIT2D / "referenceGRF.sto", "--out", tmp / "out"], E,
         ("referenceGRF.sto",)),
    Case("id-loads-broken-xml", lambda tmp: [ID, GAIT2D_MODEL, GAIT2D_MOTION, "--external-loads", write(
        tmp, "grf.xml", GAIT2D_LOADS.read_text().replace("</objects>", "</object>")), "--out", tmp / "out"], E,
        ("{tmp}/grf.xml",)),
    Case("id-loads-datafile-missing", lambda tmp: [ID, GAIT2D_MODEL, GAIT2D_MOTION, "--external-loads", write(
        tmp, "grf.xml", GAIT2D_LOADS.read_text()), "--out", tmp / "out"], E, ("{tmp}/referenceGRF.sto",)),
    Case("id-loads-unknown-body", lambda tmp: [ID, GAIT2D_MODEL, GAIT2D_MOTION, "--external-loads",
                                               loads_naming(tmp, "foot_r"), "--out", tmp / "out"], E, ("foot_r",)),
    Case("id-loads-expressed-in-unknown-body", gait_id(lambda tmp: gait_loads(
        tmp, "grf", lambda lines: lines, lambda text: text.replace(
            "<force_expressed_in_body>ground", "<force_expressed_in_body>floor", 1))), E, ("{tmp}/grf.xml", "floor")),
    Case("id-loads-points-in-millimetres", lambda tmp: [ID, WALK3D / "subject_walk_scaled.osim",
                                                        WALK3D / "coordinates.sto", "--external-loads",
                                                        walk3d_loads_in_millimetres(tmp), "--out", tmp / "out"], C,
         ("{tmp}/grf_mm.xml", "ExternalForce", "millimetres read as metres?")),
    Case("id-loads-for-another-model", lambda tmp: [ID, ARM26, ELBOW, "--external-loads", GAIT2D_LOADS,
                                                    "--out", tmp / "out"], E, ("calcn_r",)),
    Case("id-loads-start-after-the-motion", lambda tmp: [ID, GAIT2D_MODEL, GAIT2D_MOTION, "--external-loads",
                                                         short_gait_loads(tmp, 20, 60), "--out", tmp / "out"], E,
         ("late_grf.sto", "0.470089")),
    Case("id-loads-nan", gait_id(lambda tmp: gait_loads(tmp, "grf", set_value(5, 2, "nan"))), E,
         ("{tmp}/grf.sto", "ground_force_r_vy")),
    Case("id-loads-time-backwards", gait_id(lambda tmp: gait_loads(tmp, "grf", swap_rows(5, 6))), E,
         ("{tmp}/grf.sto",)),
    Case("id-loads-identifier-missing", gait_id(lambda tmp: gait_loads(
        tmp, "grf", lambda lines: lines, lambda text: text.replace(">ground_force_r_v<", ">grf_r_v<"))), E,
        ("{tmp}/grf", "grf_r_v")),
    Case("so-loads-not-covering-the-motion", gait_id(lambda tmp: short_gait_loads(tmp, 0, 10), SO, "--paths",
                                                     GAIT2D_PATHS, "--no-figures"), E, ("late_grf", "0.470089")),
    Case("id-forces-missing", tool(ID, "--forces", "{tmp}/forces.xml"), E, ("{tmp}/forces.xml",)),
    Case("id-forces-not-a-forceset", tool(ID, "--forces", GAIT2D_LOADS), E, ("referenceGRF.xml",)),
    # --- --out that cannot be a folder --------------------------------------------------------------------------------
    Case("id-out-here", lambda tmp: [ID, ARM26, ELBOW, "--out", "."], OK),
    Case("id-out-is-a-file", lambda tmp: [ID, ARM26, ELBOW, "--out", write(tmp, "out.txt", "mine")], E,
         ("{tmp}/out.txt", "is a file")),
    Case("id-out-under-a-file", lambda tmp: [ID, ARM26, ELBOW, "--out", write(tmp, "f", "mine") / "sub"], E,
         ("{tmp}/f",)),
    Case("id-out-unwritable", lambda tmp: [ID, ARM26, ELBOW, "--out", UNWRITABLE], E, (str(UNWRITABLE),)),
    Case("id-out-named-like-a-file", lambda tmp: [ID, ARM26, ELBOW, "--out", tmp / "inverse_dynamics.sto"], E,
         ("inverse_dynamics.sto",)),
    Case("so-out-is-a-file", lambda tmp: [SO, ARM26, ELBOW, "--paths", ARM26_PATHS, "--out",
                                          write(tmp, "so", "mine")], E, ("{tmp}/so", "is a file")),
    Case("ma-out-unwritable", lambda tmp: [MA, ARM26, ELBOW, "--paths", ARM26_PATHS, "--out", UNWRITABLE], E,
         (str(UNWRITABLE),)),
    # --- static optimization ------------------------------------------------------------------------------------------
    Case("so-paths-missing", tool(SO, "--paths", "{tmp}/paths.json"), E, ("{tmp}/paths.json",)),
    Case("so-paths-broken-json", lambda tmp: [SO, ARM26, ELBOW, "--paths", write(
        tmp, "paths.json", ARM26_PATHS.read_text()[:300]), "--out", tmp / "out"], E, ("{tmp}/paths.json",)),
    Case("so-paths-of-another-model", tool(SO, "--paths", GAIT2D_PATHS), E, ("paths.json",)),
    Case("so-paths-wrong-kind", tool(SO, "--paths", ELBOW), E, ("elbow_flex_0_90_minjerk.mot",)),
    Case("so-reserves-negative", tool(SO, "--paths", ARM26_PATHS, "--reserves", "-1"), E, ("--reserves", "-1")),
    Case("so-reserves-zero", tool(SO, "--paths", ARM26_PATHS, "--reserves", "0"), E, ("--reserves 0",)),
    Case("so-reserves-nan", tool(SO, "--paths", ARM26_PATHS, "--reserves", "nan"), E, ("--reserves", "nan")),
    Case("so-paths-option-misspelled", tool(SO, "--muscle-paths", ARM26_PATHS), E, ("--muscle-paths",)),
    Case("so-muscle-negative-force", lambda tmp: [SO, arm26_variant(
        tmp, "force.osim", "<max_isometric_force>798.51999999999998", "<max_isometric_force>-798.52"),
        ELBOW, "--paths", ARM26_PATHS, "--out", tmp / "out"], E, ("{tmp}/force.osim", "TRIlong", "-798.52")),
    Case("mi-muscle-zero-fiber-length", lambda tmp: [MI, arm26_variant(
        tmp, "fiber.osim", "<optimal_fiber_length>0.13400000000000001", "<optimal_fiber_length>0"),
        ELBOW, "--paths", ARM26_PATHS, "--out", tmp / "out"], E, ("{tmp}/fiber.osim", "optimal_fiber_length")),
    Case("so-six-frames", lambda tmp: [SO, ARM26, elbow_variant(tmp, "six.mot", rows_edited(lambda r: r[::20])),
                                       "--paths", ARM26_PATHS, "--no-figures", "--out", tmp / "out"], OK),
    # --- muscle analysis ---------------------------------------------------------------------------------------------
    Case("ma-paths-of-another-model", tool(MA, "--paths", GAIT2D_PATHS), E, ("paths.json",)),
    Case("ma-model-without-muscles", lambda tmp: [MA, NO_MUSCLES, still_motion(tmp, ("flex", "hinge_angle")),
                                                  "--out", tmp / "out"], E, ("all_joints.osim", "no muscles")),
    Case("ma-motion-outside-the-paths-domain", lambda tmp: [
        MA, ARM26, EXAMPLES / "arm26_static_optimization" / "shoulder60_elbow90_minjerk.mot", "--paths", ARM26_PATHS,
        "--out", tmp / "out"], C, ("r_shoulder_elev",)),
    Case("ma-elbow", lambda tmp: [MA, ARM26, ELBOW, "--paths", ARM26_PATHS, "--out", tmp / "out"], OK),
    # --- muscle inverse (all refused before the solve) ----------------------------------------------------------------
    Case("mi-mesh-interval-zero", tool(MI, "--paths", ARM26_PATHS, "--mesh-interval", "0"), E, ("--mesh-interval",)),
    Case("mi-mesh-interval-negative", tool(MI, "--paths", ARM26_PATHS, "--mesh-interval", "-0.02"), E,
         ("--mesh-interval", "-0.02")),
    Case("mi-mesh-interval-nan", tool(MI, "--paths", ARM26_PATHS, "--mesh-interval", "nan"), E,
         ("--mesh-interval", "nan")),
    Case("mi-window-after-the-data", tool(MI, "--paths", ARM26_PATHS, "--window", "5", "6"), E,
         ("elbow_flex", "window (5.0, 6.0)")),
    Case("mi-window-past-the-end", tool(MI, "--paths", ARM26_PATHS, "--window", "0.5", "2"), E,
         ("elbow_flex", "window (0.5, 2.0)")),
    Case("mi-window-reversed", tool(MI, "--paths", ARM26_PATHS, "--window", "0.8", "0.2"), E, ("--window 0.8 0.2",)),
    Case("mi-window-too-short-for-the-mesh", tool(MI, "--paths", ARM26_PATHS, "--window", "0.1", "0.12"), E,
         ("mesh interval 0.02 s over the 0.02 s window",)),
    Case("mi-tolerance-negative", tool(MI, "--paths", ARM26_PATHS, "--tolerance=-1e-6"), E, ("tol=-1e-06",)),
    Case("mi-max-iterations-negative", tool(MI, "--paths", ARM26_PATHS, "--max-iterations", "-1"), E,
         ("max_iterations=-1",)),
    Case("mi-reserves-negative", tool(MI, "--paths", ARM26_PATHS, "--reserves", "-5"), E, ("--reserves", "-5")),
    Case("mi-weld-unknown-joint", tool(MI, "--paths", ARM26_PATHS, "--weld", "elbow"), E, ("elbow",)),
    Case("mi-weld-a-moving-joint", tool(MI, "--paths", ARM26_PATHS, "--weld", "r_elbow"), E,
         ("TRIlong", "r_elbow_flex", "welded")),
    Case("mi-emg-missing", tool(MI, "--paths", ARM26_PATHS, "--emg", "{tmp}/emg.sto"), E, ("{tmp}/emg.sto",)),
    Case("mi-emg-weight-negative", tool(MI, "--paths", ARM26_PATHS, "--emg", ELBOW, "--emg-weight", "-50"), E,
         ("--emg-weight", "-50")),
    Case("mi-emg-in-percent", lambda tmp: [MI, ARM26, ELBOW, "--paths", ARM26_PATHS, "--emg", still_motion(
        tmp, ("BIClong", "TRIlong"), 40.0), "--window", "0", "0.2", "--mesh-interval", "0.05", "--max-iterations",
        "20", "--no-figures", "--out", tmp / "out"], E, ("{tmp}/still.sto", "BIClong", "40")),
    Case("mi-emg-no-muscle-columns", tool(MI, "--paths", ARM26_PATHS, "--emg", ELBOW), E,
         ("elbow_flex_0_90_minjerk.mot",)),
    Case("mi-joint-reaction-unknown-joint", tool(MI, "--joint-reaction", "knee", "1"), E, ("knee",)),
    Case("mi-active-force-width-zero", tool(MI, "--paths", ARM26_PATHS, "--active-force-width-scale", "0"), E,
         ("active_force_width_scale", "0")),
    Case("mi-residuals-negative", tool(MI, "--paths", ARM26_PATHS, "--residuals", "-1", "100", "1"), E,
         ("--residuals",)),
    # --- muscle tracking (all refused before the solve) ---------------------------------------------------------------
    Case("mt-grf-missing", lambda tmp: [MT, GAIT2D_MODEL, GAIT2D_MOTION, "--paths", GAIT2D_PATHS, "--grf",
                                        tmp / "grf.mot", "--out", tmp / "out"], E, ("{tmp}/grf.mot",)),
    Case("mt-grf-axes-misspelled", lambda tmp: [MT, GAIT2D_MODEL, GAIT2D_MOTION, "--paths", GAIT2D_PATHS, "--grf",
                                                GAIT2D / "referenceGRF.sto", "--grf-axes", "xw", "--out",
                                                tmp / "out"], E, ("--grf-axes", "'xw'")),
    Case("mt-reference-misspelled", lambda tmp: [MT, GAIT2D_MODEL, GAIT2D_MOTION, "--reference", "quintic",
                                                 "--out", tmp / "out"], E, ("quintic",)),
    Case("mt-window-outside-the-data", lambda tmp: [MT, GAIT2D_MODEL, GAIT2D_MOTION, "--paths", GAIT2D_PATHS,
                                                    "--window", "1", "2", "--out", tmp / "out"], E,
         ("referenceCoordinates.sto", "window 1-2 s")),
    Case("mt-mesh-interval-longer-than-the-motion", lambda tmp: [
        MT, GAIT2D_MODEL, GAIT2D_MOTION, "--paths", GAIT2D_PATHS, "--mesh-interval", "1", "--out", tmp / "out"], E,
        ("mesh interval 1 s over the 0.470089 s window",)),
    Case("mt-states-weight-negative", lambda tmp: [MT, GAIT2D_MODEL, GAIT2D_MOTION, "--paths", GAIT2D_PATHS,
                                                   "--states-weight", "-10", "--out", tmp / "out"], E,
         ("--states-weight", "-10")),
    Case("mt-grf-not-covering-the-motion", lambda tmp: [
        MT, GAIT2D_MODEL, GAIT2D_MOTION, "--paths", GAIT2D_PATHS, "--grf",
        short_gait_loads(tmp, 0, 10).with_suffix(".sto"), "--out", tmp / "out"], E, ("late_grf.sto",)),
    Case("mt-emg-missing", lambda tmp: [MT, GAIT2D_MODEL, GAIT2D_MOTION, "--paths", GAIT2D_PATHS, "--emg",
                                        tmp / "emg.sto", "--out", tmp / "out"], E, ("{tmp}/emg.sto",)),
    Case("mt-emg-in-percent", lambda tmp: [MT, GAIT2D_MODEL, GAIT2D_MOTION, "--paths", GAIT2D_PATHS, "--emg",
                                           still_motion(tmp, ("soleus_r", "tib_ant_r"), 55.0), "--out", tmp / "out"],
         E, ("{tmp}/still.sto", "soleus_r", "55")),
    Case("mt-grf-is-the-motion", lambda tmp: [MT, GAIT2D_MODEL, GAIT2D_MOTION, "--paths", GAIT2D_PATHS, "--grf",
                                              GAIT2D_MOTION, "--out", tmp / "out"], E, ("referenceCoordinates.sto",)),
    Case("mt-contact-missing", lambda tmp: [MT, GAIT2D_MODEL, GAIT2D_MOTION, "--paths", GAIT2D_PATHS, "--contact",
                                            tmp / "contact.xml", "--out", tmp / "out"], E, ("{tmp}/contact.xml",)),
    Case("mt-contact-broken-xml", lambda tmp: [MT, GAIT2D_MODEL, GAIT2D_MOTION, "--paths", GAIT2D_PATHS,
                                               "--contact", write(tmp, "contact.xml", "<ForceSet><objects>"),
                                               "--out", tmp / "out"], E, ("{tmp}/contact.xml",)),
    Case("mt-cutoff-above-nyquist", lambda tmp: [MT, GAIT2D_MODEL, GAIT2D_MOTION, "--paths", GAIT2D_PATHS,
                                                 "--cutoff", "500", "--out", tmp / "out"], E, ("--cutoff 500",)),
    # --- fit-paths --------------------------------------------------------------------------------------------------
    Case("fp-model-missing", lambda tmp: ["fit-paths", tmp / "arm26.osim", "--geometric", "--out", tmp / "p"], E,
         ("{tmp}/arm26.osim",)),
    Case("fp-range-syntax", lambda tmp: ["fit-paths", ARM26, "--geometric", "--range", "r_elbow_flex=0-90",
                                         "--out", tmp / "p"], E, ("r_elbow_flex=0-90",)),
    Case("fp-range-unknown-coordinate", lambda tmp: ["fit-paths", ARM26, "--geometric", "--range", "elbow=0:90",
                                                     "--out", tmp / "p"], E, ("elbow",)),
    Case("fp-range-reversed", lambda tmp: ["fit-paths", ARM26, "--geometric", "--range", "r_elbow_flex=90:0",
                                           "--out", tmp / "p"], E, ("r_elbow_flex=90:0", "LOW must be below HIGH")),
    Case("fp-range-in-radians", lambda tmp: ["fit-paths", ARM26, "--geometric", "--range", "r_elbow_flex=0:2.27",
                                             "--out", tmp / "p"], E, ("r_elbow_flex=0:2.27", "radians?")),
    Case("fp-band-in-radians", lambda tmp: ["fit-paths", ARM26, "--geometric", "--motion", ELBOW, "--band", "0.17",
                                            "--out", tmp / "p"], E, ("--band 0.17", "radians?")),
    Case("fp-coordinates-unknown", lambda tmp: ["fit-paths", ARM26, "--geometric", "--coordinates", "r_elbow",
                                                "--out", tmp / "p"], E, ("r_elbow",)),
    Case("fp-muscles-unknown", lambda tmp: ["fit-paths", ARM26, "--geometric", "--muscles", "BICeps",
                                            "--out", tmp / "p"], E, ("BICeps",)),
    Case("fp-seed-negative", lambda tmp: ["fit-paths", ARM26, "--geometric", "--seed", "-1", "--out", tmp / "p"], E,
         ("--seed -1",)),
    Case("fp-band-negative", lambda tmp: ["fit-paths", ARM26, "--geometric", "--motion", ELBOW, "--band", "-5",
                                          "--out", tmp / "p"], E, ("--band -5",)),
    Case("fp-motion-time-backwards", lambda tmp: ["fit-paths", ARM26, "--geometric", "--motion", elbow_variant(
        tmp, "back.mot", swap_rows(40, 41)), "--out", tmp / "p"], E, ("{tmp}/back.mot",)),
    Case("fp-motion-of-another-model", lambda tmp: ["fit-paths", ARM26, "--geometric", "--motion", GAIT2D_MOTION,
                                                    "--out", tmp / "p"], E, ("referenceCoordinates.sto",
                                                                             "r_shoulder_elev")),
    Case("fp-quaternion-syntax", lambda tmp: ["fit-paths", ARM26, "--geometric", "--quaternion", "shoulder",
                                              "--out", tmp / "p"], E, ("--quaternion",)),
    Case("fp-train-csv-missing", lambda tmp: ["fit-paths", ARM26, "--train-csv", tmp / "train.csv",
                                              "--out", tmp / "p"], E, ("{tmp}/train.csv",)),
    Case("fp-train-csv-garbage", lambda tmp: ["fit-paths", ARM26, "--train-csv", write(tmp, "train.csv", "a,b\n1,2\n"),
                                              "--out", tmp / "p"], E, ("{tmp}/train.csv",)),
    Case("fp-heldout-csv-without-train-csv", lambda tmp: ["fit-paths", ARM26, "--geometric", "--heldout-csv",
                                                          EXAMPLES / "arm26" / "path_samples_heldout.csv.gz",
                                                          "--out", tmp / "p"], E, ("--heldout-csv", "--train-csv")),
    Case("fp-cut-along-without-pieces", lambda tmp: ["fit-paths", ARM26, "--geometric", "--cut-along",
                                                     "r_elbow_flex", "--out", tmp / "p"], E, ("--cut-along",)),
    Case("fp-opensim-xml-into-a-file", lambda tmp: ["fit-paths", ARM26, "--geometric", "--opensim-xml",
                                                    write(tmp, "f", "mine") / "paths.xml", "--out", tmp / "p"], E,
         ("{tmp}/f",)),
    Case("fp-rms-tolerance-negative", lambda tmp: ["fit-paths", ARM26, "--geometric", "--das3-rules",
                                                   "--rms-tolerance", "-0.001", "--out", tmp / "p"], E,
         ("--rms-tolerance -0.001",)),
    # --- batch --------------------------------------------------------------------------------------------------------
    Case("batch-spec-missing", lambda tmp: ["batch", tmp / "spec.toml", "--serial", "--out", tmp / "b"], E,
         ("{tmp}/spec.toml",)),
    Case("batch-spec-broken-toml", lambda tmp: ["batch", spec(tmp, 'task = "sleep\n'), "--serial",
                                                "--out", tmp / "b"], E, ("{tmp}/spec.toml",)),
    Case("batch-spec-task-misspelled", lambda tmp: ["batch", spec(tmp, 'task = "inverse_dynamics"\n'), "--serial",
                                                    "--out", tmp / "b"], E, ("inverse_dynamics",)),
    Case("batch-spec-broken-yaml", lambda tmp: ["batch", spec(tmp, "task: [sleep\n", "spec.yaml"), "--serial",
                                                "--out", tmp / "b"], E, ("{tmp}/spec.yaml", "YAML")),
    Case("batch-spec-json", lambda tmp: ["batch", spec(tmp, '{"task": "sleep"}', "spec.json"), "--serial",
                                         "--out", tmp / "b"], E, ("{tmp}/spec.json",)),
    Case("batch-spec-unknown-input", lambda tmp: ["batch", spec(
        tmp, 'task = "sleep"\n[inputs]\nvalue = 1.0\nsecond = 2\n'), "--serial", "--out", tmp / "b"], E,
        ("second",)),
    Case("batch-spec-sweep-step-zero", lambda tmp: ["batch", spec(
        tmp, 'task = "sleep"\n[sweep]\nvalue = {start = 0, stop = 1, step = 0}\n'), "--serial", "--out", tmp / "b"],
        E, ("sweep.value",)),
    Case("batch-sweep-duplicate-values", lambda tmp: ["batch", spec(
        tmp, 'task = "sleep"\n[sweep]\nvalue = [1.0, 2.0, 1.0]\n'), "--serial", "--out", tmp / "b"], E,
        ("{tmp}/spec.toml", "value=1")),
    Case("batch-set-without-value", lambda tmp: ["batch", sleep_spec(tmp), "--set", "seconds", "--serial",
                                                 "--out", tmp / "b"], E, ("--set seconds",)),
    Case("batch-set-wrong-type", lambda tmp: ["batch", sleep_spec(tmp), "--set", "seconds=fast", "--serial",
                                              "--out", tmp / "b"], E, ("--set seconds=fast",)),
    Case("batch-workers-zero", lambda tmp: ["batch", sleep_spec(tmp), "--workers", "0", "--out", tmp / "b"], E,
         ("--workers", "0")),
    Case("batch-force-without-resume", lambda tmp: ["batch", sleep_spec(tmp), "--force", "--serial",
                                                    "--out", tmp / "b"], E, ("--force",)),
    Case("batch-resume-nothing-there", lambda tmp: ["batch", sleep_spec(tmp), "--resume", "--serial", "--no-progress",
                                                    "--out", tmp / "b"], OK),
    Case("batch-tool-task-missing-motion", lambda tmp: ["batch", spec(
        tmp, f'task = "inverse-dynamics"\n[inputs]\nmodel = "{ARM26}"\nmotion = "nothing.mot"\n'), "--serial",
        "--out", tmp / "b"], E, ("nothing.mot",)),
    Case("batch-tool-task-bad-motion", lambda tmp: ["batch", spec(
        tmp, f'task = "inverse-dynamics"\n[inputs]\nmodel = "{ARM26}"\n'
             f'motion = "{elbow_variant(tmp, "back.mot", swap_rows(40, 41))}"\n'), "--serial", "--no-progress",
        "--out", tmp / "b"], E, ("back.mot",)),
    Case("batch-gait2d-intervals-zero", lambda tmp: ["batch", spec(
        tmp, 'task = "gait2d-prediction"\n[inputs]\nintervals = 0\n[sweep]\nspeed = [1.2]\n'), "--serial",
        "--no-progress", "--out", tmp / "b"], E, ("speed=1.2", "intervals", "got 0")),
    Case("batch-gait2d-speed-negative", lambda tmp: ["batch", spec(
        tmp, 'task = "gait2d-prediction"\n[inputs]\nintervals = 10\n[sweep]\nspeed = [-1.2]\n'), "--serial",
        "--no-progress", "--out", tmp / "b"], E, ("speed=-1.2", "got -1.2")),
    Case("batch-sleep", lambda tmp: ["batch", sleep_spec(tmp), "--serial", "--no-progress", "--out", tmp / "b"], OK),
    # --- run and bench with bad options -------------------------------------------------------------------------------
    Case("command-misspelled", lambda tmp: ["inverse-dynamic", ARM26, ELBOW], E, ("inverse-dynamic",)),
    Case("id-no-arguments", lambda tmp: [ID], E, ("model", "motion")),
    Case("run-no-problem", lambda tmp: ["run"], E, ("name a problem",)),
    Case("run-problem-misspelled", lambda tmp: ["run", "gait2d-predicton", "--out", tmp / "g"], E,
         ("gait2d-predicton",)),
    Case("run-gait2d-intervals-zero", lambda tmp: ["run", "gait2d-prediction", "--intervals", "0",
                                                   "--out", tmp / "g"], E, ("--intervals",)),
    Case("run-gait2d-speed-negative", lambda tmp: ["run", "gait2d-prediction", "--speed", "-1.2",
                                                   "--out", tmp / "g"], E, ("--speed",)),
    Case("run-gait2d-solver-misspelled", lambda tmp: ["run", "gait2d-prediction", "--solver", "ipopt-mesh",
                                                      "--out", tmp / "g"], E, ("ipopt-mesh",)),
    Case("run-gait2d-out-is-a-file", lambda tmp: ["run", "gait2d-prediction", "--intervals", "10",
                                                  "--out", write(tmp, "g", "mine")], E, ("{tmp}/g",)),
    Case("run-arm26-so-motion-missing", lambda tmp: ["run", "arm26-static-optimization", "--motion",
                                                     tmp / "elbow.mot", "--out", tmp / "a"], E, ("{tmp}/elbow.mot",)),
    Case("run-arm26-so-motion-of-another-model", lambda tmp: ["run", "arm26-static-optimization", "--motion",
                                                              GAIT2D_MOTION, "--out", tmp / "a"], E,
         ("referenceCoordinates.sto",)),
    Case("run-arm26-reaching-duration-word", lambda tmp: ["run", "arm26-reaching", "--duration", "half",
                                                          "--out", tmp / "r"], E, ("half",)),
    Case("run-arm26-reaching-duration-zero", lambda tmp: ["run", "arm26-reaching", "--duration", "0",
                                                          "--out", tmp / "r"], E, ("--duration",)),
    Case("run-arm26-reaching-target-nan", lambda tmp: ["run", "arm26-reaching", "--target", "nan", "0.5", "0.2",
                                                       "--out", tmp / "r"], E, ("--target", "nan")),
    Case("run-arm26-reaching-intervals-zero", lambda tmp: ["run", "arm26-reaching", "--intervals", "0",
                                                           "--out", tmp / "r"], E, ("--intervals",)),
    Case("run-shoulder-reaching-polynomial-out-is-a-file", lambda tmp: [
        "run", "shoulder-reaching-polynomial", "--out", write(tmp, "sr", "mine")], E, ("{tmp}/sr", "is a file")),
    Case("run-walk3d-prediction-out-is-a-file", lambda tmp: ["run", "walk3d-prediction", "--out",
                                                             write(tmp, "w3", "mine")], E, ("{tmp}/w3", "is a file")),
    Case("run-path-fits-out-is-a-file", lambda tmp: ["run", "path-fits", "--cases", "none", "--out",
                                                     write(tmp, "pf", "mine")], E, ("{tmp}/pf", "is a file")),
    Case("run-path-fits-case-misspelled", lambda tmp: ["run", "path-fits", "--cases", "arm62", "--out", tmp / "pf"],
         E, ("--cases arm62",)),
    Case("regenerate-results-only-misspelled", lambda tmp: ["regenerate-results", "--only", "gait3d"], E,
         ("--only gait3d",)),
    Case("regenerate-results-outside-the-repository", lambda tmp: ["regenerate-results", "--results",
                                                                   tmp / "results"], E, ("{tmp}/results",)),
    Case("bench-misspelled", lambda tmp: ["bench", "dynamic", "--out", tmp / "b"], E, ("dynamic",)),
    Case("bench-dynamics-states-zero", lambda tmp: ["bench", "dynamics", "--states", "0", "--out", tmp / "b"], E,
         ("--states", "0")),
    Case("bench-static-optimization-repeats-zero", lambda tmp: ["bench", "static-optimization", "--repeats", "0",
                                                                "--out", tmp / "b"], E, ("--repeats", "0")),
    Case("bench-paths-configurations-negative", lambda tmp: ["bench", "paths", "--configurations", "-10",
                                                             "--out", tmp / "b"], E, ("--configurations", "-10")),
    Case("bench-gait2d-intervals-zero", lambda tmp: ["bench", "gait2d", "--intervals", "0", "--out", tmp / "b"], E,
         ("intervals", "0")),
    Case("bench-out-is-a-file", lambda tmp: ["bench", "dynamics", "--states", "2", "--out",
                                             write(tmp, "b", "mine")], E, ("{tmp}/b",)),
]
