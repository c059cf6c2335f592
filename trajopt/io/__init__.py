"""Numbers in and out: OpenSim .mot/.sto and CSV tables, coordinate motions."""

from trajopt.io.motion import coordinate_name, read_motion
from trajopt.io.external_loads import read_external_loads
from trajopt.io.tables import Table, read_table, write_csv, write_sto

__all__ = ["Table", "coordinate_name", "read_external_loads", "read_motion", "read_table", "write_csv", "write_sto"]
