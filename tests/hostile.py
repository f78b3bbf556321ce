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

#: True: :func:`run_skframe` forks each command from an interpreter that has loaded the libraries already
#: (tests/warm_runs.py; the tests set it), False: a fresh interpreter each time (the benchmarks)
WARM = False

# The child loads what the commands use before the cap is set, then runs the command line. Its peak resident
# memory before and after the command is written to HOSTILE_REPORT.
_LAUNCH = r"""
import atexit, json, os, resource, sys
import numpy, scipy.sparse, sklearn.linear_model, numba  # the libraries the commands load
import skframe.cli, skframe.models, skframe.io, skframe.persistence, skframe.graphs
from skframe.contract.loader import get_plugin_registry
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
    if WARM:
        from tests.warm_runs import run_python

        base = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                    NUMBA_NUM_THREADS="1", MALLOC_ARENA_MAX="2")
        proc = run_python(_LAUNCH, args, cwd, child_env, timeout, warm_base=base)
    else:
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


# ----------------------------------------------------------------------------------------------- fuzzing
#: the memory a read may take: what the file holds many times over, never what it merely claims
def fuzz_bound(file_size, width=0):
    """Peak bytes (tracemalloc: NumPy's and Python's allocations) a read of a ``file_size``-byte file may take.

    ``width``: the number of features a sparse file declares (its largest index); within the ``features`` limit
    it may cost 128 bytes a feature (a name, a few per-column numbers).
    """
    from skframe.limits import limit  # lazy: see _small_model

    return (64 << 20) + 32 * file_size + 128 * min(width, limit("features"))


def _patch_uncompressed_size(path, member, size):
    """Rewrite the uncompressed size a zip declares for ``member`` (local header and central directory)."""
    data = bytearray(Path(path).read_bytes())
    name = member.encode()
    for sig, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        pos = data.find(sig)
        while pos >= 0:
            name_at = pos + (30 if sig == b"PK\x03\x04" else 46)
            length = int.from_bytes(data[pos + (26 if sig == b"PK\x03\x04" else 28):][:2], "little")
            if bytes(data[name_at:name_at + length]) == name:
                data[pos + offset:pos + offset + 4] = int(size).to_bytes(4, "little")
            pos = data.find(sig, pos + 4)
    Path(path).write_bytes(bytes(data))


def _npy_bytes(shape, dtype="<f8", payload=b""):
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": dtype, "fortran_order": False, "shape": tuple(shape)})
    return out.getvalue() + payload


_SMALL_MODEL = {}


def _small_model(folder):
    """A small fitted model file (saved once per folder), its bytes."""
    if folder not in _SMALL_MODEL:
        import skframe  # lazy: the fuzzing helpers are also imported by scripts that only write files

        rng = np.random.default_rng(1)
        X = rng.normal(size=(40, 3))
        model = skframe.SketchedKernelRidge(sketch="subsample", sketch_size=10, random_state=0).fit(X, X.sum(1))
        path = Path(folder, "base.skf")
        skframe.save(model, path)
        _SMALL_MODEL[folder] = path.read_bytes()
    return _SMALL_MODEL[folder]


def fuzz_case(rng, folder, index):
    """One mutated file whose sizes lie: ``(kind, mutation, path, width)``; ``kind`` says which reader reads it,
    ``width`` is the number of features a sparse file declares (0 for the others)."""
    folder = Path(folder)
    kind = str(rng.choice(["svm", "arff", "csv", "npy", "npz", "model", "jsonl", "smiles"]))
    big = int(10 ** rng.uniform(3, 12))
    path = folder / f"case{index}.{ {'model': 'skf', 'smiles': 'csv'}.get(kind, kind) }"
    if kind == "svm":
        mutation = "feature index"
        path.write_text(f"1 1:0.5 2:1\n-1 {big}:1\n1 3:2\n")
    elif kind == "arff":
        mutation = "sparse index"
        path.write_text(f"@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute t numeric\n@data\n"
                        f"{{0 1,2 1}}\n{{{big} 1,2 0}}\n")
    elif kind == "csv":
        mutation = "columns"
        n = int(rng.integers(2, 20_000)) if rng.random() < 0.5 else int(rng.integers(1_100_000, 3_000_000))
        path.write_text(",".join(f"c{j}" for j in range(n)) + "\n" + ",".join("1" for _ in range(n)) + "\n")
    elif kind == "npy":
        mutation = "shape"
        path.write_bytes(_npy_bytes((big, 3), payload=bytes(48)))
    elif kind == "npz":
        mutation = str(rng.choice(["deflate bomb", "member shape", "declared size", "sparse shape"]))
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            if mutation == "deflate bomb":
                zf.writestr("X.npy", _npy_bytes((int(rng.integers(1, 8)) << 20, 1), payload=bytes(
                    (int(rng.integers(1, 8)) << 20) * 8)))
            elif mutation == "member shape":
                zf.writestr("X.npy", _npy_bytes((big, 2), payload=bytes(64)))
            elif mutation == "sparse shape":
                for key, arr in (("X_data", np.ones(2)), ("X_indices", np.array([0, 1])),
                                 ("X_indptr", np.array([0, 1, 2])), ("X_shape", np.array([2, big]))):
                    zf.writestr(f"{key}.npy", _npy_bytes(arr.shape, arr.dtype.str, arr.tobytes()))
            else:
                zf.writestr("X.npy", _npy_bytes((4, 2), payload=bytes(64)))
            zf.writestr("Y.npy", _npy_bytes((2,), payload=bytes(16)))
        if mutation == "declared size":
            _patch_uncompressed_size(path, "X.npy", min(big, 0xFFFFFFF0))
    elif kind == "model":
        mutation = str(rng.choice(["unused array", "deflate bomb", "declared size", "manifest shape"]))
        path.write_bytes(_small_model(str(folder)))
        if mutation == "unused array":
            with zipfile.ZipFile(path, "a", zipfile.ZIP_STORED) as zf:
                count = int(rng.integers(1, 1000))
                zf.writestr("extra.npy", _npy_bytes((count,), payload=bytes(8 * count)))
        elif mutation == "deflate bomb":
            with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as zf:
                zf.writestr("bomb.npy", _npy_bytes((int(rng.integers(1, 8)) << 20,),
                                                   payload=bytes((int(rng.integers(1, 8)) << 20) * 8)))
        elif mutation == "declared size":
            _patch_uncompressed_size(path, "a0.npy", min(big, 0xFFFFFFF0))
        else:
            raw = path.read_bytes()
            at = raw.find(b'"shape": [')
            path.write_bytes(raw[:at] + f'"shape": [{big}, '.encode() + raw[at + len(b'"shape": ['):])
    elif kind == "jsonl":
        mutation = str(rng.choice(["depth", "nodes", "edge index"]))
        if mutation == "depth":
            depth = int(rng.integers(1, 5000))
            body = '{"nodes": ["C", "O"], "edges": [[0, 1]], "y": ' + "[" * depth + "1" + "]" * depth + "}"
        elif mutation == "nodes":
            body = '{"nodes": [' + ",".join(['"C"'] * int(rng.integers(2, 40_000))) + '], "edges": [], "y": 1}'
        else:
            body = '{"nodes": ["C", "O"], "edges": [[0, %d]], "y": 1}' % big
        path.write_text('{"nodes": ["N", "O"], "edges": [[0, 1]], "y": 2}\n' + body + "\n")
    else:
        mutation = str(rng.choice(["atoms", "field"]))
        size = int(rng.integers(100, 6000)) if mutation == "atoms" else int(rng.integers(1 << 20, 3 << 20))
        path.write_text("smiles,y\nCCO,1\n" + "C" * size + ",2\n")
    return kind, mutation, path, big if kind in ("svm", "arff") else 0


_SMILES_REP = {"kind": "csv", "inputs": "smiles", "outputs": "table", "input_column": "smiles",
               "output_column": None, "target_fields": ["y"], "targets": 1, "featurize": "morgan",
               "featurize_params": {"radius": 2, "n_bits": 2048}, "split_column": None}


def read_case(kind, path):
    """Read a fuzzed file with the reader of its kind (and, for row formats, in chunks too)."""
    import skframe  # lazy: see _small_model
    from skframe.io import iter_chunks, load_dataset
    from skframe.io.graphs import read_graph_jsonl
    from skframe.io.molecules import read_smiles_csv

    if kind == "model":
        return skframe.load(path)
    if kind == "jsonl":
        return read_graph_jsonl(path)
    if kind == "smiles":
        return read_smiles_csv(path, _SMILES_REP)
    out = load_dataset(path, targets=1)
    if kind in ("csv", "svm", "npy"):
        for _ in iter_chunks(path, rows=2, targets=1):
            pass
    return out


def run_fuzz(n, seed, folder):
    """Read ``n`` fuzzed files; a result per case and the failures (another exception, or memory over the bound)."""
    import traceback
    import tracemalloc

    from skframe.exceptions import SkframeError

    rng = np.random.default_rng(seed)
    cases, failures = [], []
    for i in range(n):
        kind, mutation, path, width = fuzz_case(rng, folder, i)
        size = path.stat().st_size
        tracemalloc.start()
        start = time.perf_counter()
        outcome = "read"
        try:
            read_case(kind, path)
        except SkframeError as exc:
            outcome = "refused"
            message = str(exc)
        except Exception:  # noqa: BLE001 - any other exception is what the fuzzing looks for
            outcome = "crash"
            message = traceback.format_exc()
        else:
            message = ""
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        case = {"kind": kind, "mutation": mutation, "file_bytes": size, "outcome": outcome, "seconds": seconds,
                "peak_bytes": peak, "bound_bytes": fuzz_bound(size, width), "message": message[:300]}
        cases.append(case)
        if outcome == "crash" or peak > case["bound_bytes"] or "\n" in message.strip() and outcome != "crash":
            failures.append(dict(case, message=message))
        path.unlink()
    return cases, failures


# ----------------------------------------------------------------------------------------------- fuzzing outputs, wide
#: what stands at an output path in :func:`fuzz_path_case`
DESTINATIONS = ("new file", "existing file", "directory", "fifo", "socket", "link to the input",
                "hard link to the input", "dangling link", "link to a directory", "missing folder", "the input itself")


def fuzz_path_case(rng, folder, index, max_columns=10**6):
    """One output destination or one wide file: ``(kind, mutation, path, width)``.

    ``output``: an input file and a destination of a random kind (:data:`DESTINATIONS`) beside it; the check of
    :mod:`skframe.io.destinations` decides, then an atomic write to what it accepts. ``wide``: a CSV whose header names
    10^3 to ``max_columns`` columns (log-uniform), read with one column dropped by name.
    """
    folder = Path(folder, f"p{index}")
    folder.mkdir()
    if rng.random() < 0.5:
        kind, mutation = "output", str(rng.choice(DESTINATIONS))
        data = folder / "data.csv"
        data.write_text("a,b,y\n1,2,3\n4,5,6\n")
        path = folder / "out.csv"
        if mutation == "existing file":
            path.write_text("previous\n")
        elif mutation == "directory":
            path.mkdir()
        elif mutation == "fifo":
            os.mkfifo(path)
        elif mutation == "socket":
            import socket

            held = socket.socket(socket.AF_UNIX)
            held.bind(str(path))
            held.close()  # the socket file stays
        elif mutation == "link to the input":
            os.symlink("data.csv", path)
        elif mutation == "hard link to the input":
            os.link(data, path)
        elif mutation == "dangling link":
            os.symlink("target.csv", path)
        elif mutation == "link to a directory":
            (folder / "sub").mkdir()
            os.symlink("sub", path)
        elif mutation == "missing folder":
            path = folder / "missing" / "out.csv"
        elif mutation == "the input itself":
            path = data
        return kind, mutation, path, 0
    n = int(10 ** rng.uniform(3, np.log10(max_columns)))
    path = folder / "wide.csv"
    with open(path, "w") as fh:
        fh.write(",".join(f"c{j}" for j in range(n)) + "\n")
        fh.write(",".join("1" for _ in range(n)) + "\n" + ",".join("2" for _ in range(n)) + "\n")
    return "wide", f"10^{int(np.log10(n))} to 10^{int(np.log10(n)) + 1} columns", path, n


def read_path_case(kind, path):
    """Check (and write) an output destination, or read a wide file with a column dropped by name."""
    from skframe.io import Columns, load_dataset
    from skframe.io.atomic import atomic_write
    from skframe.io.destinations import check_destination

    if kind == "output":
        data = Path(path).parent / "data.csv"
        if not data.exists():
            data = Path(path).parent.parent / "data.csv"
        before = data.read_bytes()
        check_destination(path, "--out", inputs=[("DATA", str(data))])
        with atomic_write(path, "w") as fh:
            fh.write("y\n1\n")
        assert data.read_bytes() == before, "the input was replaced"
        return None
    return load_dataset(path, targets=1, columns=Columns(drop=("c1",)))


def run_path_fuzz(n, seed, folder, max_columns=10**6):
    """:func:`run_fuzz` for :func:`fuzz_path_case`: a result per case, and the failures (another exception, an
    input replaced, a multi-line message or memory over the bound)."""
    import shutil
    import traceback
    import tracemalloc

    from skframe.exceptions import SkframeError

    rng = np.random.default_rng([seed, 32])
    cases, failures = [], []
    for i in range(n):
        kind, mutation, path, width = fuzz_path_case(rng, folder, i, max_columns)
        size = path.stat().st_size if path.is_file() else 0
        tracemalloc.start()
        start = time.perf_counter()
        outcome, message = "read" if kind == "wide" else "written", ""
        try:
            read_path_case(kind, path)
        except SkframeError as exc:
            outcome, message = "refused", str(exc)
        except Exception:  # noqa: BLE001 - any other exception is what the fuzzing looks for
            outcome, message = "crash", traceback.format_exc()
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        case = {"kind": kind, "mutation": mutation, "file_bytes": size, "outcome": outcome, "seconds": seconds,
                "peak_bytes": peak, "bound_bytes": fuzz_bound(size, 0), "message": message[:300]}
        cases.append(case)
        if outcome == "crash" or peak > case["bound_bytes"] or "\n" in message.strip() and outcome != "crash":
            failures.append(dict(case, message=message))
        shutil.rmtree(Path(folder, f"p{i}"), ignore_errors=True)
    return cases, failures
