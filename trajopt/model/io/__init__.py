"""Numbers in and out: OpenSim .mot/.sto and CSV tables, coordinate motions, signal processing of tables, and the
OpenSim child process that reference numbers come from."""

from trajopt.model.io.motion import coordinate_name, read_motion
from trajopt.model.io.motion_processor import MotionProcessor, motion_processor
from trajopt.model.io.tables import Table, read_table, write_csv, write_sto

__all__ = ["MotionProcessor", "Table", "coordinate_name", "motion_processor", "read_motion", "read_table", "write_csv",
           "write_sto"]
