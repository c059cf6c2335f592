"""Threads and linear solvers under IPOPT: BLAS threads, MUMPS settings, HSL detection.

The settings follow what `trajopt bench linear-solvers` records on the gait predictions (where IPOPT's time goes,
MUMPS's own counts; the numbers: results/benchmarks/README.md):

- casadi's IPOPT links its own OpenBLAS (libcasadi-tp-openblas), which starts one thread per core. On the small
  dense fronts of these KKT systems a second thread only spins (counted as system time) and slows other jobs on
  the cores; `set_blas_threads(1)` (the default of `trajopt.core.ocp.Ipopt`) keeps the solve on one core. A second
  thread pays only on large fronts (3D walking).
- IPOPT's default ``mumps_mem_percent`` = 1000 makes MUMPS allocate (and page-fault) about ten times its estimated
  workspace at every factorization; 100 keeps a margin (MUMPS re-factorizes with more memory when short; IPOPT
  doubles the percentage then).
- MUMPS's automatic ordering picks QAMD on the smaller KKT systems, which with the few dense rows and columns of
  these problems (duration, the end-point coordinates of a divide-by-displacement objective) needs more
  floating-point operations and larger fronts than METIS; METIS (``mumps_pivot_order`` 5) is the default here.
- Large KKT systems have factors above glibc's mmap threshold, so every factorization maps and unmaps them again;
  `keep_freed_memory()` raises glibc's mmap and trim thresholds (1 GiB) so freed blocks are reused.
- What remains is the factorization itself, linear in the mesh, about two per iteration (IPOPT first tries the
  Hessian unperturbed; it has one or two negative eigenvalues too many at most iterates). SPRAL, built into
  casadi's IPOPT (``linear_solver="spral"``), is much slower per iteration on these problems.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import sys
from pathlib import Path

import casadi as ca

from trajopt.errors import TrajoptInputError

# IPOPT options for MUMPS (see the module docstring); a user's `Ipopt.options` override them.
MUMPS_OPTIONS = {"mumps_pivot_order": 5, "mumps_mem_percent": 100}

# HSL solvers IPOPT can load at run time from a user's libhsl (never shipped with trajopt).
HSL_SOLVERS = ("ma27", "ma57", "ma77", "ma86", "ma97")
_HSL_NAMES = ("libhsl.so", "libcoinhsl.so", "libhsl.dylib", "libcoinhsl.dylib", "libhsl.dll", "libcoinhsl.dll")


@functools.lru_cache(maxsize=1)
def _openblas() -> ctypes.CDLL | None:
    """casadi's bundled OpenBLAS (the one IPOPT and MUMPS call), or None if this casadi has none."""
    folder = Path(ca.__file__).resolve().parent
    for name in ("libcasadi-tp-openblas.so.0", "libcasadi-tp-openblas.so", "libcasadi-tp-openblas.dylib",
                 "libcasadi-tp-openblas.dll"):
        if (folder / name).exists():
            try:
                library = ctypes.CDLL(str(folder / name))
                library.openblas_set_num_threads.argtypes = [ctypes.c_int]
                library.openblas_get_num_threads.restype = ctypes.c_int
                return library
            except (OSError, AttributeError):
                return None
    return None


def blas_threads() -> int | None:
    """Threads casadi's OpenBLAS uses now (None if it has no OpenBLAS)."""
    library = _openblas()
    return None if library is None else int(library.openblas_get_num_threads())


def set_blas_threads(threads: int) -> int | None:
    """Set casadi's OpenBLAS threads (process-wide); returns the previous count (None without OpenBLAS)."""
    library = _openblas()
    if library is None:
        return None
    previous = int(library.openblas_get_num_threads())
    if threads != previous:
        library.openblas_set_num_threads(int(threads))
    return previous


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc mallopt parameters
KEPT_MEMORY_BYTES = 1 << 30


@functools.lru_cache(maxsize=1)
def keep_freed_memory() -> bool:
    """Let glibc reuse freed blocks up to 1 GiB instead of returning them to the system (process-wide, once);
    False where the C library is not glibc."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(M_MMAP_THRESHOLD, KEPT_MEMORY_BYTES)) and \
            bool(libc.mallopt(M_TRIM_THRESHOLD, KEPT_MEMORY_BYTES))
    except (OSError, AttributeError):
        return False


@functools.lru_cache(maxsize=1)
def hsl_library() -> str | None:
    """Path or name of a loadable HSL library (``$TRAJOPT_HSL``, ``$IPOPT_HSLLIB`` or libhsl/libcoinhsl on the
    loader's path), or None. Detection only tries to load it; trajopt never ships HSL."""
    candidates = [os.environ.get("TRAJOPT_HSL"), os.environ.get("IPOPT_HSLLIB")]
    candidates += list(_HSL_NAMES)
    found = ctypes.util.find_library("hsl") or ctypes.util.find_library("coinhsl")
    candidates.append(found)
    for candidate in candidates:
        if not candidate:
            continue
        try:
            library = ctypes.CDLL(candidate)
        except OSError:
            continue
        if any(hasattr(library, symbol) for symbol in ("ma27ad_", "ma57ad_", "ma97_analyse_d", "ma86_analyse_d")):
            return candidate
    return None


def linear_solver_options(linear_solver: str) -> dict:
    """IPOPT options for `linear_solver` ("mumps", an HSL solver "ma27".."ma97", or "hsl" = ma57 if libhsl loads)."""
    if linear_solver == "mumps":
        return {"linear_solver": "mumps", **MUMPS_OPTIONS}
    if linear_solver in HSL_SOLVERS or linear_solver == "hsl":
        library = hsl_library()
        if library is None:
            raise TrajoptInputError(f"linear_solver {linear_solver!r} needs the HSL library (libhsl), which did "
                                    f"not load; set TRAJOPT_HSL to its path or use 'mumps'")
        return {"linear_solver": "ma57" if linear_solver == "hsl" else linear_solver, "hsllib": library}
    return {"linear_solver": linear_solver}
