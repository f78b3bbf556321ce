"""Imported first by every benchmark script, before NumPy: the runtime settings they are measured with.

``OPENBLAS_THREAD_TIMEOUT=4`` makes idle OpenBLAS threads sleep almost at once instead of
spinning for ~2^28 cycles after each call, so they do not compete with numba's parallel
kernels for the cores. The ``skframe`` command line sets the same default. A value already
in the environment is kept.

``SKFRAME_DATA`` (the data directory of :mod:`skframe.datasets`) is set to the folder
``../shared/data`` beside the repository when that folder exists and the variable is unset,
so the benchmarks find rf1, Bibtex and the molecules there; :func:`load_or_exit` turns a
missing data file into one message and exit status 3.

The repository's ``src`` folder (under :data:`ROOT`) goes first on ``sys.path``: the scripts
measure this checkout, installed or not.

The measuring helpers every script shares: :func:`parser` (command-line options from a table of
defaults), :func:`timed` and :func:`best_of` (wall time), :func:`traced` (``tracemalloc`` peak),
:func:`peak_rss_mb` (the process's peak resident memory), :func:`proc_status_bytes` and
:func:`reset_peak_rss` (Linux memory counters, the peak of one stage), :func:`versions` and
:func:`emit` (the JSON report, printed and optionally written); and the data most of them fit,
Friedman's first regression problem (:func:`friedman_target`, :func:`friedman_data`).
"""

import argparse
import json
import os
import resource
import sys
import time
import tracemalloc
from pathlib import Path

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

#: the repository this script belongs to
ROOT = Path(__file__).resolve().parents[1]
#: where the reports quoted in benchmarks/README.md are written
OUT = ROOT / "benchmarks" / "out"
sys.path[:0] = [str(ROOT / "src")]

_SHARED_DATA = ROOT.parent / "shared" / "data"
if "SKFRAME_DATA" not in os.environ and _SHARED_DATA.is_dir():
    os.environ["SKFRAME_DATA"] = os.path.normpath(_SHARED_DATA)

#: Exit status of a benchmark whose data files are missing.
EXIT_NO_DATA = 3


def load_or_exit(loader, **kwargs):
    """Call a ``skframe.datasets`` loader; on a missing or corrupt file print why and exit with status 3."""
    from skframe.exceptions import SkframeError

    try:
        return loader(**kwargs)
    except SkframeError as exc:
        print(f"{os.path.basename(sys.argv[0])}: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_NO_DATA) from None


def versions():
    """Interpreter, library versions and machine of the run (for the JSON reports)."""
    import platform

    import numba
    import numpy
    import scipy
    import sklearn

    return {
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "numba": numba.__version__,
        "sklearn": sklearn.__version__,
        "cpu_count": os.cpu_count(),
        "machine": platform.machine(),
    }


def parser(doc, **defaults):
    """An ``argparse`` parser described by the first line of ``doc``, one option per keyword.

    ``n_test=10_000`` gives ``--n-test`` of type int and default 10 000 (int, float or str
    defaults); options with choices, flags or help are added to the returned parser as usual.
    """
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    for name, default in defaults.items():
        if type(default) not in (int, float, str):
            raise TypeError(f"option --{name}: give an int, float or str default, or add it with add_argument")
        ap.add_argument("--" + name.replace("_", "-"), type=type(default), default=default)
    return ap


def timed(fn, *args, **kwargs):
    """``(fn(*args, **kwargs), seconds)``, the wall time by ``time.perf_counter``."""
    t0 = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - t0


def best_of(fn, repeats):
    """``(seconds, result)``: the smallest wall time of ``repeats`` calls ``fn()`` and the last result."""
    times, result = [], None
    for _ in range(repeats):
        result, seconds = timed(fn)
        times.append(seconds)
    return min(times), result


def traced(fn, *args, **kwargs):
    """``(result, seconds, peak_bytes)``: ``fn`` run under ``tracemalloc`` (NumPy's buffers included)."""
    tracemalloc.start()
    try:
        result, seconds = timed(fn, *args, **kwargs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return result, seconds, peak


def peak_rss_mb():
    """Peak resident memory of this process so far, in MiB (``ru_maxrss``)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def proc_status_bytes(key):
    """A memory line of ``/proc/self/status`` in bytes (``"VmHWM"``: peak resident, ``"VmRSS"``, ``"RssAnon"``).

    0 where the line (or the file: not Linux) is absent.
    """
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def reset_peak_rss():
    """Reset the peak resident memory (``VmHWM``) to the current resident size; False where not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def friedman_target(X, rng=None):
    """Friedman's first function ``10 sin(pi x1 x2) + 20 (x3 - 1/2)^2 + 10 x4 + 5 x5`` (+ N(0, 1) noise by ``rng``)."""
    import numpy as np

    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4]
    if rng is not None:
        y += rng.normal(size=X.shape[0])
    return y


def friedman_data(n, d=10, seed=0, step=100_000, X=None, y=None):
    """``(X, y)`` of Friedman's first problem, X uniform in [0, 1]^d, noisy targets.

    Filled ``step`` rows at a time (uniform rows, then their noise), into ``X`` and ``y`` when
    given (e.g. a memory map): generating them leaves no transient copy of the data behind.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    X = np.empty((n, d)) if X is None else X
    y = np.empty(n) if y is None else y
    for start in range(0, n, step):
        stop = min(n, start + step)
        X[start:stop] = rng.uniform(size=(stop - start, d))
        y[start:stop] = friedman_target(np.asarray(X[start:stop]), rng)
    return X, y


def emit(report, path=None, indent=1, **dumps):
    """Print ``report`` as JSON and, with ``path``, write it there too (folders made); return the text."""
    text = json.dumps(report, indent=indent, **dumps)
    if path is not None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    print(text)
    return text


def chosen_sections(text, known):
    """The sections named in ``--sections`` (comma-separated), refused when one is not in ``known``."""
    chosen = [s.strip() for s in text.split(",") if s.strip()]
    bad = sorted(set(chosen) - set(known))
    if bad:
        raise SystemExit(f"unknown section {bad[0]!r}; choose among {', '.join(known)}")
    return chosen


def previous_report(path):
    """The report already at ``path`` ({} when there is none): a run of some sections keeps the others' figures."""
    if path and os.path.exists(path):
        with open(path) as fh:
            return json.load(fh)
    return {}


def run_sections(benchmark, sections, args, run):
    """Run the sections of ``sections`` named in ``args.sections`` (``run(section)`` returns one's figures, a dict)
    and emit the report to ``args.out``, the figures of the sections not run kept from the report already there.

    Each section's figures get its seconds, the command that made them and the load averages before and after it
    (the machine is shared: ratios are of one run).
    """
    chosen = chosen_sections(args.sections, sections)
    report = {"benchmark": benchmark, "versions": versions(), "command": " ".join(sys.argv[1:])}
    for section in sections:
        if section in chosen:
            t0, load_before = time.perf_counter(), os.getloadavg()
            result = run(section)
            result["section_seconds"] = time.perf_counter() - t0
            result["run"] = f"python benchmarks/bench_{benchmark}.py " + " ".join(sys.argv[1:])
            result["load_average_before"] = load_before
            result["load_average_after"] = os.getloadavg()
            report[section] = result
    previous = previous_report(args.out)  # read last: a run of other sections that ended meanwhile is kept
    report.update({s: previous[s] for s in sections if s not in chosen and s in previous})
    emit(report, args.out or None)


def nystrom_features(X, centres, kernel, block=20_000):
    """Plain NumPy Nyström features ``k(X, C) T`` with ``T = U diag(s)^(-1/2)`` over the kept eigenpairs of
    ``k(C, C)`` (eigenvalues above 1e-10 of the largest), computed ``block`` rows at a time."""
    import numpy as np

    s, U = np.linalg.eigh(kernel(centres, centres))
    keep = s > 1e-10 * s[-1]
    T = U[:, keep] / np.sqrt(s[keep])
    Z = np.empty((len(X), int(keep.sum())))
    for a in range(0, len(X), block):
        Z[a:a + block] = kernel(X[a:a + block], centres) @ T
    return Z
