"""Hostile files: small files that claim a lot, and a runner that executes ``skframe`` on them under a memory cap.

Shared by tests/test_hostile_files.py (each case as a test) and benchmarks/bench_hostile.py (times and memory of
every case, and the long fuzz run). Each maker writes its file(s) into a folder and returns the command-line
arguments that exercise them.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

#: memory a command may take above the interpreter with its libraries loaded (RLIMIT_AS in the child)
EXTRA_BYTES = 200 << 20

# The child loads what the commands use before the cap is set, then runs the command line. Its peak resident
# memory before and after the command is written to HOSTILE_REPORT.
_LAUNCH = r"""
import atexit, json, os, resource, sys
import numpy, scipy.sparse, sklearn.linear_model, numba  # the libraries the commands load
import skframe.cli, skframe.models, skframe.io, skframe.persistence, skframe.graphs
from skframe.plugin.loader import get_plugin_registry
get_plugin_registry()
try:
    import rdkit.Chem, rdkit.Chem.rdFingerprintGenerator
except ImportError:
    pass

def vm():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024

import time
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
t0 = time.perf_counter()
extra = int(os.environ.get("HOSTILE_EXTRA_BYTES", "0"))
if extra:
    cap = vm() + extra
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

def report():
    path = os.environ.get("HOSTILE_REPORT")
    if path:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        with open(path, "w") as fh:
            json.dump({"rss_before": rss0, "rss_peak": peak, "seconds": time.perf_counter() - t0}, fh)

atexit.register(report)
sys.argv = ["skframe", *sys.argv[1:]]
skframe.cli.main()
"""


def run_skframe(args, cwd, *, extra_bytes=EXTRA_BYTES, env=None, timeout=120):
    """Run ``skframe ARGS`` in a child capped at its loaded size + ``extra_bytes`` (0: no cap).

    Returns ``(returncode, stdout, stderr, info)``; ``info`` has ``seconds`` (the command's wall time, its
    libraries loaded before), ``total_seconds`` (the child's, loading included) and ``rss_above_bytes`` (peak
    resident memory above the loaded interpreter).
    """
    report = Path(tempfile.mkstemp(prefix="hostile-", suffix=".json")[1])
    child_env = dict(os.environ, HOSTILE_EXTRA_BYTES=str(extra_bytes), HOSTILE_REPORT=str(report),
                     OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", NUMBA_NUM_THREADS="1",
                     MALLOC_ARENA_MAX="2", **(env or {}))
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _LAUNCH, *map(str, args)], cwd=cwd, env=child_env,
                          capture_output=True, text=True, timeout=timeout)
    seconds = time.perf_counter() - start
    info = {"total_seconds": seconds}
    try:
        mem = json.loads(report.read_text() or "{}")
        info["rss_above_bytes"] = mem["rss_peak"] - mem["rss_before"]
        info["seconds"] = mem["seconds"]
    except (ValueError, KeyError):
        pass
    report.unlink()
    return proc.returncode, proc.stdout, proc.stderr, info


# ----------------------------------------------------------------------------------------------- data files
def libsvm_index(folder, index):
    """A LIBSVM file of two rows, one of which names feature ``index`` (37 bytes for 2e9)."""
    path = Path(folder, f"index{index}.svm")
    path.write_text(f"1 1:0.5 3:1\n-1 {index}:1\n1 2:0.25\n")
    return ["fit", path, "--sketch", "none"]


def _deflated_npy_zip(path, members):
    """A zip of ``.npy`` members {name: (header_array_shape, dtype, n_zero_bytes_or_bytes)} deflated in chunks."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
        for name, arr in members.items():
            with zf.open(f"{name}.npy", "w", force_zip64=True) as out:
                if isinstance(arr, np.ndarray):
                    np.lib.format.write_array(out, arr, allow_pickle=False)
                    continue
                shape, dtype = arr
                header = io.BytesIO()
                np.lib.format.write_array_header_1_0(header, {"descr": np.dtype(dtype).str, "fortran_order": False,
                                                              "shape": shape})
                out.write(header.getvalue())
                left = int(np.prod(shape)) * np.dtype(dtype).itemsize
                block = bytes(1 << 24)
                while left:
                    out.write(block[:min(left, len(block))])
                    left -= min(left, len(block))


def npz_bomb(folder, nbytes=2 << 30):
    """An NPZ whose X member (zeros, deflated) inflates to ``nbytes`` (2 GiB: a ~2 MB file)."""
    path = Path(folder, "bomb.npz")
    rows = nbytes // 8
    _deflated_npy_zip(path, {"X": ((rows, 1), "<f8"), "Y": np.zeros(rows % 1000 + 1)})
    return ["fit", path, "--sketch", "none"]


def model_with_unused_array(folder, nbytes=2 << 30, compress=zipfile.ZIP_DEFLATED):
    """A model file (fitted on 30 rows) with one more array, declared consistently: ``nbytes`` zeros, deflated.

    With ``compress=zipfile.ZIP_STORED`` the array is stored as is (keep ``nbytes`` small then).
    Returns the ``predict`` arguments; the data file is written beside it.
    """
    folder = Path(folder)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    np.savetxt(folder / "small.csv", np.c_[X, X.sum(1)], delimiter=",", header="a,b,y", comments="")
    model = folder / "m.skf"
    code, _, err, _ = run_skframe(["fit", folder / "small.csv", "--sketch", "none", "--model-out", model],
                                  folder, extra_bytes=0)
    assert code == 0, err
    with zipfile.ZipFile(model) as zf:
        entries = {info.filename: zf.read(info) for info in zf.infolist()}
    manifest = json.loads(np.load(io.BytesIO(entries["__manifest__.npy"])).tobytes())
    rows = nbytes // 8
    digest = hashlib.sha256()
    block = bytes(1 << 24)
    for start in range(0, nbytes, len(block)):
        digest.update(block[:min(len(block), nbytes - start)])
    manifest["arrays"]["unused"] = {"dtype": "<f8", "shape": [rows], "fortran_order": False,
                                    "sha256": digest.hexdigest()}
    blob = np.frombuffer(json.dumps(manifest).encode(), np.uint8)
    out = folder / f"inflated{compress}.skf"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        with zf.open("__manifest__.npy", "w") as fh:
            np.lib.format.write_array(fh, blob)
        for name, data in entries.items():
            if name != "__manifest__.npy":
                zf.writestr(name, data)
    with zipfile.ZipFile(out, "a", compress, allowZip64=True) as zf:
        with zf.open("unused.npy", "w", force_zip64=True) as fh:
            header = io.BytesIO()
            np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (rows,)})
            fh.write(header.getvalue())
            for start in range(0, nbytes, len(block)):
                fh.write(block[:min(len(block), nbytes - start)])
    return ["predict", out, folder / "small.csv", "--targets", "1"]


def smiles_atoms(folder, atoms=100_000):
    """A SMILES CSV whose first molecule is a chain of ``atoms`` carbons (about 100 KB for 1e5)."""
    path = Path(folder, "atoms.csv")
    path.write_text("smiles,y\n" + "C" * atoms + ",1.0\nCCO,2.0\nCCN,3.0\n")
    return ["fit", path, "--inputs", "smiles", "--input-column", "smiles", "--featurize", "morgan",
            "--kernel", "tanimoto", "--sketch", "none"]


def smiles_field(folder, chars=(1 << 20) + 10):
    """A SMILES CSV with one field of ``chars`` characters (longer than the field limit)."""
    path = Path(folder, "field.csv")
    path.write_text("smiles,y\n" + "C" * chars + ",1.0\nCCO,2.0\n")
    return ["fit", path, "--inputs", "smiles", "--input-column", "smiles", "--featurize", "morgan",
            "--kernel", "tanimoto", "--sketch", "none"]


def graph_nodes(folder, nodes=10**7):
    """A JSON-lines file whose first graph has ``nodes`` nodes (40 MB for 1e7), fitted with shortest paths."""
    path = Path(folder, "nodes.jsonl")
    with open(path, "w") as fh:
        fh.write('{"nodes": [' + ",".join(['"C"'] * nodes) + '], "edges": [[0, 1]], "y": 1.0}\n')
        fh.write('{"nodes": ["C", "O"], "edges": [[0, 1]], "y": 2.0}\n')
    return ["fit", path, "--kernel", "shortest-path", "--sketch", "none"]


def graph_depth(folder, depth=100_000):
    """A JSON-lines file whose second line is nested ``depth`` levels deep, and a graph model to read it with.

    Returns the argument lists of ``fit``, ``predict`` and ``evaluate`` on it.
    """
    folder = Path(folder)
    good = folder / "good.jsonl"
    good.write_text('{"nodes": ["C", "O"], "edges": [[0, 1]], "y": 1.0}\n'
                    '{"nodes": ["C", "C", "O"], "edges": [[0, 1], [1, 2]], "y": 2.0}\n'
                    '{"nodes": ["N", "O"], "edges": [[0, 1]], "y": 3.0}\n')
    model = folder / "g.skf"
    code, _, err, _ = run_skframe(["fit", good, "--kernel", "wl-subtree", "--sketch", "none", "--model-out", model],
                                  folder, extra_bytes=0)
    assert code == 0, err
    deep = folder / "deep.jsonl"
    deep.write_text('{"nodes": ["C", "O"], "edges": [[0, 1]], "y": 1.0}\n'
                    '{"nodes": ["C"], "y": ' + "[" * depth + "]" * depth + "}\n")
    return [["fit", deep, "--kernel", "wl-subtree", "--sketch", "none"], ["predict", model, deep],
            ["evaluate", model, deep]]
