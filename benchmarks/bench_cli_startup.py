"""Command-line start-up: ``skframe --help`` / ``--version``, the cold first fit of a process, the engine threshold.

Prints ONE JSON object (and writes ``benchmarks/out/cli_startup.json``):

* ``help``, ``version``, ``python_pass``: wall seconds (min / median over ``--runs`` fresh
  processes) of ``python -m skframe --help``, ``--version`` and ``python -c pass``;
* ``main_fit_process``: wall and CPU seconds of the whole process of the README's main job,
  ``skframe fit --json`` (embedded data, default settings), and of ``skframe fit --kernel gaussian
  --sketch psr --json``, alternated with the other checkouts; ``fit_compute`` the fit and predict
  seconds those processes report (their own ``fit_seconds`` and ``predict_seconds``);
* ``default_fit``: wall seconds of the whole process ``skframe fit --kernel gaussian --sketch psr
  --json`` (embedded data) in the two engine modes below;
* ``floor``: wall and CPU seconds of fresh processes that only import what the default fit cannot
  do without (NumPy; SciPy's linalg, sparse, spatial.distance and special; Typer with the Pydantic
  layer it parses options with) and scikit-learn's ``sklearn.base`` and ``sklearn.metrics`` (the
  estimators' base class, the metrics): with ``fit_compute`` they bound what a whole process can take;
* ``imports``: ``python -X importtime`` of ``skframe fit --json`` per checkout: the milliseconds of
  each top-level package (self times summed; the table is noisy on a shared machine);
* ``plugins``: ``skframe --help`` with and without a third-party plugin installed (a small
  distribution written to a temporary folder on ``PYTHONPATH``: a kernel and a command, against
  ``skframe.plugin.api``), per checkout: wall seconds over ``--runs`` fresh processes, alternated
  (``help_with_plugins``), the ``-X importtime`` table of each (``help_imports``) and the heavy
  libraries each process has loaded at its end (``help_heavy_modules``);
* ``rf1``: per fresh process, the first fit (cold) and the median of ``--warm`` later identical
  fits, and their difference ``cold_minus_warm``. The problem is the rf1 p-SR example of the
  README (sketch size 200, p = 0.005, inputs standardised, missing values as 0), read from
  ``$SKFRAME_DATA/rf1`` (``--data-dir``), else an rf1-shaped synthetic problem (4 108 x 64
  inputs, 8 targets);
* ``--sweep``: warm fit seconds of synthetic Gaussian p-SR problems of growing size on the plain
  NumPy engine and on numba (each forced), and numba's start-up cost in a fresh process: where
  numba's saving exceeds its start, :data:`skframe.core.engine.NUMBA_MIN_WORK` belongs.

Each measurement runs in two modes, alternated process by process because the machine may be
shared: ``auto`` (the engine chosen by problem size, :func:`skframe.core.engine.select_engine`) and
``numba`` (``SKFRAME_NUMBA_MIN_WORK=0``: compiled code whatever the size, the behaviour before
the size rule). ``--root DIR`` measures another checkout of skframe in the same way (e.g. an
older version); its rows are labelled with ``DIR``.

Child processes run without ``PYTHONDONTWRITEBYTECODE``, as an installed package does (its
bytecode is compiled at installation), so that they measure skframe and not the compilation of
its sources.

    python benchmarks/bench_cli_startup.py [--data-dir DIR] [--runs 5] [--processes 3] [--warm 5]
                                           [--root DIR ...] [--sweep]
                                           [--sections startup,fit,floor,imports,rf1,plugins]
                                           [--out cli_startup]

On a shared machine report differences and ratios measured in one run, not absolute times.
"""

import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
from _setup import ROOT

MODES = {"auto": {}, "numba": {"SKFRAME_NUMBA_MIN_WORK": "0"}, "numpy": {"SKFRAME_NUMBA_MIN_WORK": "1e18"}}

CHILD = r"""
import os, sys, time, json
import numpy as np
from skframe.datasets import FeatureScaler, load_dataset
data_dir, n_warm = sys.argv[1], int(sys.argv[2])
train = os.path.join(data_dir, "rf1", "rf1-train.arff")
if os.path.exists(train):
    ds = load_dataset(train, targets=8, missing="zero")
    X, Y, source = ds.X, ds.Y, "rf1"
else:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4108, 64)); Y = X[:, :8] ** 2 + 0.1 * rng.standard_normal((4108, 8))
    source = "synthetic rf1-shaped"
X = FeatureScaler("standard").fit_transform(X)
from skframe import SketchedKernelRidge
def fit():
    model = SketchedKernelRidge("gaussian", kernel_params={"gamma": 3e-7}, sketch="psr", sketch_size=200,
                                sketch_params={"p": 0.005}, lam=4e-8, random_state=0)
    t = time.perf_counter(); model.fit(X, Y); return time.perf_counter() - t
cold = fit()
warm = [fit() for _ in range(n_warm)]
print(json.dumps({"source": source, "cold": cold, "warm_median": float(np.median(warm)),
                  "warm_min": min(warm), "numba_loaded": "numba" in sys.modules}))
"""

SWEEP = r"""
import json, sys, time
import numpy as np
from skframe import SketchedKernelRidge
rng = np.random.default_rng(0)
out = []
for n in (2000, 4000, 8000, 16000):
    X = rng.standard_normal((n, 64)); y = X[:, 0] ** 2
    model = SketchedKernelRidge("gaussian", kernel_params={"gamma": 0.01}, sketch="psr", sketch_size=200,
                                sketch_params={"p": 0.005}, lam=1e-6, random_state=0)
    model.fit(X, y)  # warm-up (numba: loads the compiled functions)
    times = []
    for _ in range(3):
        t = time.perf_counter(); model.fit(X, y); times.append(time.perf_counter() - t)
    out.append({"n": n, "work": n * model.sketch_info_["s_prime"], "warm_median": float(np.median(times))})
print(json.dumps(out))
"""

NUMBA_START = r"""
import time
t = time.perf_counter()
import numba
t1 = time.perf_counter()
from skframe_kernels import _gram_numba
from skframe.core import _sketching_numba
import numpy as np
X = np.random.default_rng(0).standard_normal((50, 64))
out = X @ X[:20].T
_gram_numba.sqeuclidean_exp_from_cross(out, (X * X).sum(1), (X[:20] * X[:20]).sum(1), 0.1)
import scipy.sparse as sp
res = np.empty((50, 3)); _sketching_numba.dense_times_csr_t(out, sp.random(3, 20, density=0.3, format="csr"), res)
print(t1 - t, time.perf_counter() - t1)
"""


def _env(root, mode, extra_path=None):
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("SKFRAME_NUMBA_MIN_WORK", None)
    env.update(MODES[mode])
    src = Path(root) / "src"  # an older checkout, measured for comparison, kept its flat layout
    env["PYTHONPATH"] = str(src) if src.is_dir() else os.pathsep.join([str(root), str(Path(root) / "plugins")])
    if extra_path:
        env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], str(extra_path)])
    env.pop("SKFRAME_DISABLE_PLUGINS", None)
    return env


def _run(cmd, root, mode, cwd=None, extra_path=None):
    proc, seconds = _setup.timed(subprocess.run, cmd, check=True, capture_output=True, text=True,
                                 env=_env(root, mode, extra_path), cwd=cwd)
    return seconds, proc.stdout


def _summary(times):
    return {"min": min(times), "median": statistics.median(times)}


def _run_cpu(cmd, root, mode, cwd=None):
    """``(wall seconds, CPU seconds of the child (user + system), stdout)``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds, out = _run(cmd, root, mode, cwd=cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, out


#: what the floor processes import: the libraries the default fit cannot do without, then scikit-learn's share
FLOOR = {
    "python": "pass",
    "numpy": "import numpy",
    "numerics": "import numpy, scipy.linalg, scipy.sparse, scipy.spatial.distance, scipy.special",
    "numerics+typer": "import numpy, scipy.linalg, scipy.sparse, scipy.spatial.distance, scipy.special, "
                      "typer._adapters",
    "numerics+typer+sklearn": "import numpy, scipy.linalg, scipy.sparse, scipy.spatial.distance, scipy.special, "
                              "typer._adapters, sklearn.base, sklearn.metrics",
}


def _import_table(root, py, top=18, args=("fit", "--json"), extra_path=None):
    """Milliseconds per top-level package (self times summed) of ``skframe <args>`` under ``-X importtime``."""
    proc = subprocess.run([py, "-X", "importtime", "-m", "skframe", *args], capture_output=True, text=True,
                          env=_env(root, "auto", extra_path), cwd="/tmp", check=True)
    per = {}
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _, name = line[len("import time:"):].split("|")
        package = name.strip().split(".")[0]
        package = "skframe + built-in plugins" if package.startswith("skframe") else package
        per[package] = per.get(package, 0.0) + int(self_us) / 1000.0
    table = dict(sorted(per.items(), key=lambda kv: -kv[1])[:top])
    return {"total_ms": round(sum(per.values()), 1), "top_ms": {k: round(v, 1) for k, v in table.items()}}


#: a third-party plugin as a distribution would write it (the ``plugins`` section installs it in a temporary folder)
PLUGIN = """import numpy as np
from skframe.plugin.api import Kernel, KernelTags, hookimpl


class Cosine(Kernel):
    __skframe_tags__ = KernelTags(normalized=True)
    params = {}

    def __call__(self, X, Y=None):
        Y = X if Y is None else Y
        return (X @ Y.T) / np.outer(np.linalg.norm(X, axis=1), np.linalg.norm(Y, axis=1))


@hookimpl
def register_kernels(register):
    register("bench-cosine", Cosine)


@hookimpl
def register_commands(app):
    @app.command("bench-hello")
    def hello():
        print("hello")
"""

HEAVY_PROBE = ("import atexit, sys, runpy\n"
               "atexit.register(lambda: print('HEAVY:' + ','.join(m for m in ('scipy', 'numba', 'sklearn') "
               "if m in sys.modules), file=sys.stderr))\n"
               "sys.argv = ['skframe', '--help']\nrunpy.run_module('skframe', run_name='__main__')")


def _third_party_plugin(folder):
    """Write the distribution ``bench-plugin`` (entry point ``bench`` -> module ``bench_plugin``) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bench_plugin.py").write_text(PLUGIN)
    info = folder / "bench_plugin-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bench-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[skframe]\nbench = bench_plugin\n")
    return folder


def _help_with_plugins(report, args, py, roots, labels):
    """``help_with_plugins``, ``help_imports``, ``help_heavy_modules``: ``skframe --help`` without and with a plugin."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        plugin = _third_party_plugin(Path(tmp) / "site")
        cases = [(r, name, extra) for r in roots for name, extra in (("no_plugin", None), ("with_plugin", plugin))]
        for r, _, extra in cases:  # bytecode of the plugin and of each checkout, unmeasured
            _run([py, "-m", "skframe", "--help"], r, "auto", extra_path=extra)
        times = {}
        for _ in range(args.runs):
            for r, name, extra in cases:  # alternated process by process
                times.setdefault(f"{labels[r]}:{name}", []).append(
                    _run([py, "-m", "skframe", "--help"], r, "auto", extra_path=extra)[0])
        report["help_with_plugins"] = {k: {**_summary(v), "runs": len(v)} for k, v in times.items()}
        report["help_imports"] = {f"{labels[r]}:{name}": _import_table(r, py, args=("--help",), extra_path=extra)
                                  for r, name, extra in cases}
        heavy = {}
        for r, name, extra in cases:
            proc = subprocess.run([py, "-c", HEAVY_PROBE], capture_output=True, text=True, check=True,
                                  env=_env(r, "auto", extra), cwd="/tmp")
            heavy[f"{labels[r]}:{name}"] = [m for m in proc.stderr.rsplit("HEAVY:", 1)[1].strip().split(",") if m]
        report["help_heavy_modules"] = heavy


def main():
    parser = _setup.parser(__doc__, data_dir=os.environ.get("SKFRAME_DATA", str(ROOT.parent / "shared" / "data")),
                           runs=5, processes=3, warm=5, sections="startup,fit,floor,imports,rf1", out="cli_startup")
    # the section "plugins" (skframe --help with a third-party plugin installed) runs when named
    parser.add_argument("--root", action="append", default=[], help="another skframe checkout to measure too")
    parser.add_argument("--sweep", action="store_true", help="also measure the engines on growing problems")
    args = parser.parse_args()
    sections = set(args.sections.split(","))
    py = sys.executable
    roots = [str(ROOT)] + [str(Path(r).resolve()) for r in args.root]
    labels = {str(ROOT): "this"} | {r: r for r in roots[1:]}
    report = {"cwd_note": "child processes without PYTHONDONTWRITEBYTECODE", "data_dir": args.data_dir,
              "load_average_at_start": os.getloadavg()}
    for r in roots:  # write the bytecode and numba caches once, unmeasured
        _run([py, "-m", "skframe", "--help"], r, "numba")
        if sections - {"plugins", "startup"}:
            _run([py, "-c", CHILD, args.data_dir, "1"], r, "numba")
            _run([py, "-m", "skframe", "fit", "--json"], r, "auto", cwd="/tmp")

    if "startup" in sections:
        times = {}
        for _ in range(args.runs):
            for r in roots:
                for name, cmd in (("help", ["--help"]), ("version", ["--version"])):
                    times.setdefault((labels[r], name), []).append(_run([py, "-m", "skframe", *cmd], r, "auto")[0])
            times.setdefault(("python", "pass"), []).append(_run([py, "-c", "pass"], roots[0], "auto")[0])
        report["startup"] = {f"{k[0]}:{k[1]}": _summary(v) for k, v in times.items()}

    jobs = {"main": ["fit", "--json"], "gaussian_psr": ["fit", "--kernel", "gaussian", "--sketch", "psr", "--json"]}
    if "fit" in sections:
        wall, cpu, compute = {}, {}, {}
        for _ in range(args.runs):
            for r in roots:  # alternate checkouts process by process
                for job, cmd in jobs.items():
                    key = f"{labels[r]}:{job}"
                    seconds, cpu_seconds, out = _run_cpu([py, "-m", "skframe", *cmd], r, "auto", cwd="/tmp")
                    wall.setdefault(key, []).append(seconds)
                    cpu.setdefault(key, []).append(cpu_seconds)
                    rep = json.loads(out.strip().splitlines()[-1])
                    compute.setdefault(key, []).append(rep["fit_seconds"] + rep["predict_seconds"])
        report["main_fit_process"] = {k: {"wall": _summary(v), "cpu": _summary(cpu[k]), "runs": len(v)}
                                      for k, v in wall.items()}
        report["fit_compute"] = {k: _summary(v) for k, v in compute.items()}
    if "floor" in sections:
        wall, cpu = {}, {}
        for _ in range(args.runs):
            for name, code in FLOOR.items():
                seconds, cpu_seconds, _ = _run_cpu([py, "-c", code], roots[0], "auto", cwd="/tmp")
                wall.setdefault(name, []).append(seconds)
                cpu.setdefault(name, []).append(cpu_seconds)
        report["floor"] = {name: {"imports": FLOOR[name], "wall": _summary(wall[name]), "cpu": _summary(cpu[name])}
                           for name in FLOOR}
    if "imports" in sections:
        report["imports"] = {labels[r]: _import_table(r, py) for r in roots}
    if "rf1" in sections:
        _default_fit_and_rf1(report, args, py, roots, labels)
    if "plugins" in sections:
        _help_with_plugins(report, args, py, roots, labels)
    report["NUMBA_MIN_WORK"] = int(_run([py, "-c", "from skframe.core.engine import NUMBA_MIN_WORK as w; print(w)"],
                                        roots[0], "auto")[1])
    report["load_average_at_end"] = os.getloadavg()
    report["versions"] = _setup.versions()
    _setup.emit(report, _setup.OUT / f"{args.out}.json")


def _default_fit_and_rf1(report, args, py, roots, labels):
    """``default_fit_process``, ``rf1`` (and ``sweep``): the engine modes, alternated process by process."""
    cases = [(r, m) for r in roots for m in ("auto", "numba")]
    fit_cmd = [py, "-m", "skframe", "fit", "--kernel", "gaussian", "--sketch", "psr", "--json"]
    default_fit, rf1 = {}, {}
    for _ in range(args.processes):
        for r, mode in cases:  # alternate checkouts and modes process by process
            key = f"{labels[r]}:{mode}"
            default_fit.setdefault(key, []).append(_run(fit_cmd, r, mode, cwd="/tmp")[0])
            out = _run([py, "-c", CHILD, args.data_dir, str(args.warm)], r, mode)[1]
            row = json.loads(out.strip().splitlines()[-1])
            row["cold_minus_warm"] = row["cold"] - row["warm_median"]
            rf1.setdefault(key, []).append(row)
    report["default_fit_process"] = {k: _summary(v) for k, v in default_fit.items()}
    report["rf1"] = {
        k: {"rows": rows, "median_cold": statistics.median(r["cold"] for r in rows),
            "median_warm": statistics.median(r["warm_median"] for r in rows),
            "median_cold_minus_warm": statistics.median(r["cold_minus_warm"] for r in rows)}
        for k, rows in rf1.items()
    }
    if args.sweep:
        sweep = {}
        for mode in ("numpy", "numba"):
            sweep[mode] = json.loads(_run([py, "-c", SWEEP], roots[0], mode)[1].strip().splitlines()[-1])
        starts = [tuple(map(float, _run([py, "-c", NUMBA_START], roots[0], "numba")[1].split()))
                  for _ in range(3)]
        report["sweep"] = {
            "warm_fit": sweep,
            "numba_import_s": statistics.median(s[0] for s in starts),
            "numba_first_calls_s": statistics.median(s[1] for s in starts),
        }


if __name__ == "__main__":
    main()
