"""NLP functions compiled to C (CasADi code generation), cached on disk and reused across solves and processes.

`compiled_nlp(discrete, hessian)` generates C for the five functions IPOPT calls (nlp_f, nlp_g,
nlp_grad_f, nlp_jac_g, nlp_hess_l; the last two from the point-by-point derivatives of
`trajopt.core.ocp.derivatives`), compiles them with the system C compiler into a shared library and
loads them as `casadi.external` Functions. The library is stored in the user cache directory under
a key hashing the generated C source, the compiler, its flags and the casadi version: the same
problem structure and numbers give the same source, so later solves (in this or another process)
load it in milliseconds instead of compiling again. Without a C compiler it returns None with a
warning and the solver evaluates the functions in CasADi's virtual machine.

Environment: ``TRAJOPT_CACHE_DIR`` (default ``$XDG_CACHE_HOME/trajopt`` or ``~/.cache/trajopt``),
``CC`` (default cc, gcc or clang, the first found).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import casadi as ca

# -O1: compiles a 2D gait NLP (0.5 MB of C) in a few seconds; -O2/-O3 take longer for a few % less run time.
COMPILER_FLAGS = ("-O1", "-fPIC", "-shared")
FUNCTION_NAMES = ("nlp_f", "nlp_g", "nlp_grad_f", "nlp_jac_g", "nlp_hess_l")


def cache_directory() -> Path:
    """Where compiled NLP libraries are kept (``TRAJOPT_CACHE_DIR``, else the user cache dir)/compiled."""
    root = os.environ.get("TRAJOPT_CACHE_DIR")
    if root:
        return Path(root) / "compiled"
    base = os.environ.get("XDG_CACHE_HOME") or (
        os.environ.get("LOCALAPPDATA") if sys.platform == "win32" else None) or Path.home() / ".cache"
    return Path(base) / "trajopt" / "compiled"


def c_compiler() -> str | None:
    """The C compiler to use ($CC, cc, gcc, clang), or None."""
    candidates = [os.environ.get("CC"), "cc", "gcc", "clang"]
    for candidate in candidates:
        if candidate and shutil.which(candidate.split()[0]):
            return candidate
    return None


@dataclass(frozen=True)
class CompiledNlp:
    """External Functions of a compiled NLP and where they came from."""

    functions: dict  # name -> casadi.Function (external)
    library: Path
    key: str
    compiled_now: bool  # False: loaded from the cache
    seconds: float  # generation + (compilation or loading)

    def nlpsol_problem(self) -> tuple[dict, dict]:
        """(nlp dict, nlpsol options) using the compiled functions."""
        f = self.functions["nlp_f"]
        x, p = ca.MX.sym("x", f.size1_in(0)), ca.MX.sym("p", f.size1_in(1))
        nlp = {"x": x, "p": p, "f": f(x, p), "g": self.functions["nlp_g"](x, p)}
        # IPOPT returns f, g and the multipliers itself: no "nlp_grad" (it would differentiate the externals).
        options = {"grad_f": self.functions["nlp_grad_f"], "jac_g": self.functions["nlp_jac_g"], "expand": False,
                   "no_nlp_grad": True, "calc_lam_p": False, "calc_lam_x": False, "calc_f": False, "calc_g": False}
        if "nlp_hess_l" in self.functions:
            options["hess_lag"] = self.functions["nlp_hess_l"]
        return nlp, options


def _trajopt_source_fingerprint() -> str:
    """Hash of the modules that build the derivative functions: a new trajopt recompiles."""
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for name in ("compiled.py", "derivatives.py"):
        digest.update((here / name).read_bytes())
    return digest.hexdigest()


def _source(functions: list[ca.Function], directory: Path, name: str = "trajopt_nlp.c") -> Path:
    generator = ca.CodeGenerator(name, {"with_header": False, "verbose": False})
    for function in functions:
        generator.add(function)
    return Path(generator.generate(str(directory) + os.sep))


def compile_functions(oracle: ca.Function, build, tag: str = "") -> CompiledNlp | None:
    """Compiled NLP functions, from the disk cache when this NLP was compiled before.

    `oracle`: (x, p) -> (f, g); its generated C source (with the compiler, flags, casadi version, trajopt's
    derivative code and `tag`) is the cache key, so the derivatives are only built on a cache miss:
    `build()` returns the Functions nlp_f, nlp_g, nlp_grad_f, nlp_jac_g[, nlp_hess_l] to compile then.
    None (with a warning) without a working C compiler.
    """
    started = time.perf_counter()
    compiler = c_compiler()
    if compiler is None:
        warnings.warn("no C compiler found ($CC, cc, gcc, clang): the NLP functions are evaluated by CasADi's "
                      "virtual machine, uncompiled", stacklevel=3)
        return None
    directory = cache_directory()
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=directory) as scratch:
        source = _source([oracle], Path(scratch), "oracle.c").read_text()
        key = hashlib.sha256("\n".join([source, compiler, " ".join(COMPILER_FLAGS), ca.__version__, sys.platform,
                                        _trajopt_source_fingerprint(), tag]).encode()).hexdigest()[:24]
        library = directory / f"nlp_{key}.so"
        compiled_now = not library.exists()
        if compiled_now:
            source_file, built = _source(build(), Path(scratch)), Path(scratch) / "nlp.so"
            command = [*compiler.split(), *COMPILER_FLAGS, str(source_file), "-o", str(built), "-lm"]
            run = subprocess.run(command, capture_output=True, text=True)
            if run.returncode != 0:
                warnings.warn(f"C compiler {compiler!r} failed ({run.stderr.strip()[:300]}): the NLP functions are "
                              f"evaluated uncompiled", stacklevel=3)
                return None
            os.replace(built, library)  # atomic: concurrent processes never load a half-written library
    importer = ca.Importer(str(library), "dll")
    loaded = {name: ca.external(name, importer) for name in FUNCTION_NAMES if importer.has_function(name)}
    return CompiledNlp(loaded, library, key, compiled_now, time.perf_counter() - started)


def nlp_functions(discrete, hessian: bool = True) -> list[ca.Function]:
    """The MX Functions IPOPT calls, with nlpsol's signatures (x, p[, lam_f, lam_g])."""
    w = discrete.layout.w
    p = ca.MX.sym("p", 0, 1)
    f, g = discrete.nlp["f"], discrete.nlp["g"]
    functions = [ca.Function("nlp_f", [w, p], [f], ["x", "p"], ["f"]),
                 ca.Function("nlp_g", [w, p], [g], ["x", "p"], ["g"]),
                 ca.Function("nlp_grad_f", [w, p], [f, ca.gradient(f, w)], ["x", "p"], ["f", "grad_f_x"])]
    derivatives = discrete.derivative_functions(hessian=hessian)
    functions.append(derivatives["jac_g"])
    if hessian:
        functions.append(derivatives["hess_lag"])
    return functions


def generic_nlp_functions(oracle: ca.Function, hessian: bool = True) -> list[ca.Function]:
    """nlp_f, nlp_g, nlp_grad_f, nlp_jac_g[, nlp_hess_l] of an (x, p) -> (f, g) Function, differentiated in SX."""
    oracle = oracle.expand() if oracle.is_a("MXFunction") else oracle
    x, p = ca.SX.sym("x", oracle.sparsity_in(0)), ca.SX.sym("p", oracle.sparsity_in(1))
    f, g = oracle(x, p)
    functions = [ca.Function("nlp_f", [x, p], [f], ["x", "p"], ["f"]),
                 ca.Function("nlp_g", [x, p], [g], ["x", "p"], ["g"]),
                 ca.Function("nlp_grad_f", [x, p], [f, ca.gradient(f, x)], ["x", "p"], ["f", "grad_f_x"]),
                 ca.Function("nlp_jac_g", [x, p], [g, ca.jacobian(g, x)], ["x", "p"], ["g", "jac_g_x"])]
    if hessian:
        lam_f, lam_g = ca.SX.sym("lam_f"), ca.SX.sym("lam_g", g.sparsity())
        lagrangian = lam_f * f + ca.dot(lam_g, g)
        functions.append(ca.Function("nlp_hess_l", [x, p, lam_f, lam_g], [ca.triu(ca.hessian(lagrangian, x)[0])],
                                     ["x", "p", "lam_f", "lam_g"], ["triu_hess_gamma_x_x"]))
    return functions


def compiled_nlp(discrete, hessian: bool = True) -> CompiledNlp | None:
    """The transcribed NLP's functions compiled (or loaded from the cache); None (with a warning) without a
    C compiler. Jacobian and Hessian come from `trajopt.core.ocp.derivatives` (point by point)."""
    w, p = discrete.layout.w, ca.MX.sym("p", 0, 1)
    oracle = ca.Function("nlp", [w, p], [discrete.nlp["f"], discrete.nlp["g"]], ["x", "p"], ["f", "g"])
    return compile_functions(oracle, lambda: nlp_functions(discrete, hessian), tag=f"point derivatives {hessian}")
