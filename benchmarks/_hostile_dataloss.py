"""Sections of bench_hostile.py about data loss: outputs re-pointed at inputs while a command runs (``repointed``),
files cut short (``truncated``) and model files that name another file (``gram_reference``).

Each row: exit status, the error line, the command's time and peak memory above the loaded interpreter (the cap of
tests/hostile.py), and whether every input is byte-identical afterwards (SHA-256).
"""

import hashlib
import io
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from tests import hostile


def _sha(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _table(path, rows, seed=0):
    X = np.random.default_rng(seed).normal(size=(rows, 3))
    np.savetxt(path, np.c_[X, X.sum(1)], delimiter=",", header="a,b,c,y", comments="", fmt="%.6f")
    return Path(path)


def _row(name, code, err, seconds, inputs, before, **extra):
    lines = err.strip().splitlines()
    row = {"case": name, "returncode": code, "stderr_lines": len(lines), "error": lines[-1][:400] if lines else "",
           "seconds": round(seconds, 3), "inputs_unchanged": {p.name: _sha(p) for p in inputs} == before, **extra}
    print(row, file=sys.stderr)
    return row


def _in_the_save_window(folder, args, link, target):
    """Run ``skframe ARGS``; once its result is complete, re-point ``link`` at ``target``; then let it rename."""
    marker = folder / "in-window"
    env = dict(os.environ, SKFRAME_TEST_PAUSE_BEFORE_REPLACE=str(marker), OMP_NUM_THREADS="1")
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", "import sys, skframe.cli; sys.argv[0] = 'skframe'; "
                             "skframe.cli.main()", *map(str, args)], cwd=folder, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    while not marker.exists():
        if proc.poll() is not None or time.perf_counter() - start > 600:
            raise RuntimeError(proc.communicate())
        time.sleep(0.02)
    os.unlink(folder / link)
    os.symlink(target, folder / link)
    marker.unlink()
    _, err = proc.communicate(timeout=600)
    return proc.returncode, err, time.perf_counter() - start, proc.pid


def repointed(folder):
    folder = Path(folder, "repointed")
    folder.mkdir()
    train, data = _table(folder / "train.csv", 50_000), _table(folder / "data.csv", 20_000, seed=1)
    code, _, err, _ = hostile.run_skframe(["fit", train, "--sketch-size", "200", "--model-out", "m.skf"], folder,
                                          extra_bytes=0)
    assert code == 0, err
    (folder / "safe.skf").write_bytes(b"previous")
    rows = []
    for name, args, link, target, inputs in (
            ("fit 50 000 rows --model-out a link re-pointed at the training file before the rename",
             ["fit", "train.csv", "--sketch-size", "200", "--lam", "1e-3", "--model-out", "out.skf"], "out.skf",
             "train.csv",
             [train, folder / "safe.skf"]),
            ("predict 20 000 rows --out a link re-pointed at DATA before the rename",
             ["predict", "m.skf", "data.csv", "--targets", "1", "--out", "p.csv"], "p.csv", "data.csv",
             [data, folder / "m.skf"])):
        os.symlink("safe.skf", folder / link)
        before = {p.name: _sha(p) for p in inputs}
        code, err, seconds, pid = _in_the_save_window(folder, args, link, target)
        kept = folder / f"{link}.{pid}.kept"
        rows.append(_row(name, code, err, seconds, inputs, before, kept_bytes=kept.stat().st_size
                         if kept.exists() else None))
    rows.append(_check_cost(folder))
    return rows


def _check_cost(folder, n=300):
    """Microseconds one write spends resolving its destination again and comparing it with three inputs."""
    from skframe.io import atomic

    inputs = [("input", _table(folder / f"in{i}.csv", 10)) for i in range(3)]
    seconds = {}
    for label, protected in (("without inputs", []), ("with 3 inputs", inputs)):
        atomic.protect(protected)
        start = time.perf_counter()
        for _ in range(n):
            with atomic.atomic_write(folder / "w.txt", "w") as fh:
                fh.write("x\n")
        seconds[label] = (time.perf_counter() - start) / n
    atomic.protect([])
    t0 = time.perf_counter()
    for _ in range(n):
        atomic._changed(str(folder / "w.txt"), str(folder / "w.txt"))
    return {"case": f"cost of the check at the rename ({n} writes of 2 bytes, fsync included)",
            "write_us": {k: round(v * 1e6, 1) for k, v in seconds.items()},
            "check_us": round((time.perf_counter() - t0) / n * 1e6, 1)}


def _arrow(table, new):
    import pyarrow.ipc  # noqa: F401 (bench extra)

    buf = io.BytesIO()
    with new(buf, table.schema) as writer:
        for batch in table.to_batches(max_chunksize=10_000):
            writer.write_batch(batch)
    return buf.getvalue()


def truncated(folder, rows=100_000):
    import bz2
    import gzip
    import lzma

    folder = Path(folder, "truncated")
    folder.mkdir()
    raw = _table(folder / "t.csv", rows).read_bytes()
    files = {"t.csv.gz": gzip.compress(raw)[:-1], "t.csv.bz2": bz2.compress(raw)[:-1],
             "t.csv.xz": lzma.compress(raw)[:-1]}
    try:
        import zstandard as zstd

        whole = zstd.ZstdCompressor().compress(raw)
        files.update({"t.csv.zst": whole[:-1], "full.csv.zst": whole,
                      "nosize.csv.zst": zstd.ZstdCompressor(write_content_size=False).compress(raw)[:-1]})
    except ImportError:
        pass
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        X = np.loadtxt(folder / "t.csv", delimiter=",", skiprows=1)
        table = pa.table({n: X[:, j] for j, n in enumerate("abcy")})
        stream = _arrow(table, pa.ipc.new_stream)
        files.update({"stream.arrow": stream[:-8], "file.arrow": _arrow(table, pa.ipc.new_file)[:-1]})
        buf = io.BytesIO()
        pq.write_table(table, buf)
        files["t.parquet"] = buf.getvalue()[:-1]
    except ImportError:
        pass
    out = []
    for name, data in files.items():
        path = folder / name
        path.write_bytes(data)
        before = {name: _sha(path)}
        code, _, err, info = hostile.run_skframe(["fit", path, "--sketch-size", "100", "--lam", "1e-3"], folder,
                                                 timeout=600)
        what = "whole" if name.startswith("full") else "stream without its end marker" if name == "stream.arrow" \
            else "last byte cut"
        out.append(_row(f"fit {rows} rows, {name} ({what})", code, err, info.get("seconds", float("nan")), [path],
                        before, rss_above_mb=round(info.get("rss_above_bytes", 0) / 2**20, 1)))
    if "full.csv.zst" in files:
        out.append(_walk_cost(folder / "full.csv.zst"))
    return out


def _walk_cost(path, n=20):
    """The frame walk of a zstd file against its counted decompression (both once per file)."""
    from skframe.io import compressed

    start = time.perf_counter()
    for _ in range(n):
        compressed._zstd_walk(path)
    walk = (time.perf_counter() - start) / n
    start = time.perf_counter()
    for _ in range(n):
        with compressed._open_capped(path, "zstd", 1 << 40) as fh:
            while fh.read(1 << 20):
                pass
    count = (time.perf_counter() - start) / n
    return {"case": f"zstd frame walk vs counted decompression ({path.stat().st_size} bytes)",
            "walk_ms": round(walk * 1e3, 3), "count_ms": round(count * 1e3, 2)}


def gram_reference(folder):
    from tests.test_hostile_dataloss import _model_naming  # the same file as the test

    folder = Path(folder, "gram_reference")
    folder.mkdir()
    _model_naming(folder, "gram.dat")  # named.skf: every Gram entry replaced by "gram.dat", a valid .npy beside it
    np.savetxt(folder / "te.csv", np.c_[np.arange(30, 40), np.zeros(10)], delimiter=",", header="id,y",
               comments="")
    inputs = [folder / "named.skf", folder / "te.csv", folder / "gram.dat"]
    before = {p.name: _sha(p) for p in inputs}
    code, _, err, info = hostile.run_skframe(["predict", "named.skf", "te.csv", "--targets", "1"], folder)
    return [_row("predict with a precomputed-kernel model whose gram names gram.dat (a valid .npy)", code, err,
                 info.get("seconds", float("nan")), inputs, before)]


SECTIONS = {"repointed": repointed, "truncated": truncated, "gram_reference": gram_reference}
