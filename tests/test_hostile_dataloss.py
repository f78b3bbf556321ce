"""Hostile runs that would lose data: outputs re-pointed at inputs while a command runs, files cut short, and model
files that name other files.

Every refusal is one exception of :mod:`skframe.exceptions` naming the value and the fix; in the command line one
``Error:`` line, exit status 2, no traceback, and every input byte-identical afterwards (compared by SHA-256).
Everything is deterministic: a link is re-pointed by a hook called just before the result is renamed into place
(or in the save window of a child process, which waits on a marker file), never after a sleep.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from typer.testing import CliRunner

import skframe
from skframe.cli import app
from skframe.exceptions import DataFormatError, InvalidParameterError, PersistenceError
from skframe.io import atomic
from skframe.io.compressed import open_binary
from skframe.io.table import read_table
from tests import hostile

hostile.WARM = True  # completed commands fork from a warm interpreter (tests/warm_runs.py)

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="symbolic links and FIFOs"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

runner = CliRunner()


def _sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def _one_line(result, *fragments):
    """A CliRunner result (or ``(code, stderr)``) ending in one ``Error:`` line holding every fragment."""
    code, err = (result.exit_code, result.stderr) if hasattr(result, "exit_code") else result
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("Error: "), err[-3000:]
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def _table(path, rows, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, 3))
    np.savetxt(path, np.c_[X, X.sum(1)], delimiter=",", header="a,b,c,y", comments="", fmt="%.6f")
    return path


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A folder (the working directory) with train.csv, data.csv and a model m.skf fitted on train.csv."""
    monkeypatch.chdir(tmp_path)
    _table(tmp_path / "train.csv", 200)
    _table(tmp_path / "data.csv", 50, seed=1)
    res = runner.invoke(app, ["fit", "train.csv", "--lam", "1e-3", "--sketch-size", "20", "--seed", "0",
                              "--model-out", "m.skf"])
    assert res.exit_code == 0, res.output
    return tmp_path


def _repoint_before_the_save(monkeypatch, link, target):
    """Re-point ``link`` at ``target`` when the write of the result begins (after the fit, before the rename)."""
    begin = atomic._temporary

    def repointed(path):
        os.unlink(link)
        os.symlink(target, link)
        return begin(path)

    monkeypatch.setattr(atomic, "_temporary", repointed)


# ------------------------------------------------------------------ 1. a destination that became an input
def test_a_model_out_link_repointed_at_the_training_file_during_the_fit_is_refused(work, monkeypatch):
    (work / "safe.skf").write_bytes(b"previous model")
    os.symlink("safe.skf", "out.skf")
    before = {p: _sha(p) for p in ("train.csv", "safe.skf")}
    _repoint_before_the_save(monkeypatch, "out.skf", "train.csv")
    res = runner.invoke(app, ["fit", "train.csv", "--lam", "1e-3", "--sketch-size", "20", "--model-out", "out.skf"])
    line = _one_line(res, "out.skf is now the same file as the training file train.csv", "nothing was replaced",
                     f"out.skf.{os.getpid()}.kept")
    assert {p: _sha(p) for p in before} == before
    kept = line.split("the result is kept in ")[1].split(";")[0]
    assert skframe.load(kept).predict(np.zeros((1, 3))).shape == (1,)  # the fit is not lost
    assert not [p for p in os.listdir(work) if p.endswith(".tmp")]


def test_a_predict_out_link_repointed_at_the_data_file_is_refused(work, monkeypatch):
    os.symlink("elsewhere.csv", "pred.csv")
    before = {p: _sha(p) for p in ("data.csv", "m.skf")}
    _repoint_before_the_save(monkeypatch, "pred.csv", "data.csv")
    res = runner.invoke(app, ["predict", "m.skf", "data.csv", "--targets", "1", "--out", "pred.csv"])
    line = _one_line(res, "pred.csv is now the same file as DATA data.csv", "kept in")
    assert {p: _sha(p) for p in before} == before
    kept = line.split("the result is kept in ")[1].split(";")[0]
    assert len(open(kept).read().splitlines()) == 51  # a header and the 50 predictions
    assert not os.path.exists("elsewhere.csv")


def test_a_link_repointed_in_the_save_window_of_a_running_fit_is_refused(work):
    """The child waits just before the rename on a marker; the link is re-pointed, then the marker removed."""
    (work / "safe.skf").write_bytes(b"previous model")
    os.symlink("safe.skf", "out.skf")
    before = {p: _sha(p) for p in ("train.csv", "safe.skf")}
    marker = work / "in-window"
    env = dict(os.environ, SKFRAME_TEST_PAUSE_BEFORE_REPLACE=str(marker), OMP_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, "-c", "import sys, skframe.cli; sys.argv[0] = 'skframe'; "
                             "skframe.cli.main()", "fit", "train.csv", "--lam", "1e-3", "--sketch-size", "20",
                             "--model-out", "out.skf"], cwd=work, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    os.unlink(work / "out.skf")
    os.symlink("train.csv", work / "out.skf")
    marker.unlink()
    _, err = proc.communicate(timeout=120)
    _one_line((proc.returncode, err), "out.skf is now the same file as the training file train.csv",
              f"out.skf.{proc.pid}.kept")
    assert {p: _sha(work / p) for p in before} == before
    assert (work / f"out.skf.{proc.pid}.kept").stat().st_size > 0


def test_the_library_refuses_a_write_whose_destination_changed(tmp_path):
    src, other = tmp_path / "in.csv", tmp_path / "other.txt"
    src.write_text("data\n")
    other.write_text("other\n")
    link = tmp_path / "out.txt"
    os.symlink(tmp_path / "first.txt", link)
    atomic.protect([("the input", src)])
    try:
        for target, words in ((src, "is now the same file as the input"), (other, "was re-pointed from")):
            with pytest.raises(InvalidParameterError, match=words) as info:
                with atomic.atomic_write(link, "w") as fh:
                    fh.write("result\n")
                    os.unlink(link)
                    os.symlink(target, link)
            kept = str(info.value).split("the result is kept in ")[1].split(";")[0]
            assert open(kept).read() == "result\n"
            assert src.read_text() == "data\n" and other.read_text() == "other\n"
            os.unlink(kept)
        plain = tmp_path / "plain.txt"  # a plain destination replaced by a link to the input during the write
        with pytest.raises(InvalidParameterError, match="same file as the input"):
            with atomic.atomic_write(plain, "w") as fh:
                fh.write("result\n")
                os.symlink(src, plain)
        assert src.read_text() == "data\n"
        with atomic.atomic_write(tmp_path / "fine.txt", "w") as fh:  # an unchanged destination is written
            fh.write("ok\n")
        assert (tmp_path / "fine.txt").read_text() == "ok\n"
    finally:
        atomic.protect([])


# ------------------------------------------------------------------ 2. files cut short
def _zstd():
    return pytest.importorskip("zstandard")


def test_a_zstd_table_missing_its_last_byte_is_refused_not_fitted_short(tmp_path):
    zstd = _zstd()
    raw = _table(tmp_path / "t.csv", 8192).read_bytes()
    path = tmp_path / "train.csv.zst"
    path.write_bytes(zstd.ZstdCompressor().compress(raw)[:-1])
    before = _sha(path)
    code, _, err, _ = hostile.run_skframe(["fit", path, "--lam", "1e-3", "--sketch-size", "20"], tmp_path)
    line = _one_line((code, err), "train.csv.zst is truncated", "copy it again")
    assert "empty" not in line and _sha(path) == before


@pytest.mark.parametrize("kind", ["gzip", "bz2", "xz", "zstd", "zstd without sizes", "zstd of two frames"])
def test_every_cut_of_a_compressed_table_is_refused_as_truncated(tmp_path, kind):
    raw = _table(tmp_path / "t.csv", 300).read_bytes()
    first = None
    if kind.startswith("zstd"):
        zstd = _zstd()
        compress = zstd.ZstdCompressor(write_checksum=True, write_content_size="sizes" not in kind).compress
        if "two" in kind:
            first = compress(raw[:4000])
            data = first + compress(raw[4000:])
        else:
            data = compress(raw)
    else:
        data = {"gzip": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[kind](raw)
    path = tmp_path / "cut.csv"
    with open(path, "wb") as fh:  # the whole file reads back
        fh.write(data)
    with open_binary(path) as fh:
        assert fh.read() == raw
    magic = 6 if kind == "xz" else 4 if kind.startswith("zstd") else 3 if kind == "bz2" else 2
    for n in range(magic, len(data), 7):  # every 7th cut: ~1 000 cuts; a cut between two frames is a valid file
        if first is not None and n == len(first):
            continue
        path.write_bytes(data[:n])
        os.utime(path, ns=(n, n))  # a new file for the count's memory
        with pytest.raises(DataFormatError, match=r"cut\.csv is truncated"), open_binary(path) as fh:
            fh.read()


def test_a_truncated_gzip_is_not_told_to_raise_the_expansion_limit(tmp_path):
    raw = _table(tmp_path / "t.csv", 3000).read_bytes()
    data = gzip.compress(raw)
    path = tmp_path / "t.csv.gz"
    for cut in (1, len(data) // 2):  # the last four bytes read as a trailer would claim any size
        path.write_bytes(data[:-cut])
        with pytest.raises(DataFormatError) as info:
            read_table(path)
        assert "is truncated" in str(info.value) and "SKFRAME_MAX_EXPANSION" not in str(info.value)


def test_a_small_truncated_zstd_is_truncated_not_empty(tmp_path):
    zstd = _zstd()
    path = tmp_path / "small.csv.zst"
    path.write_bytes(zstd.ZstdCompressor().compress(b"a,y\n1,2\n3,4\n")[:-1])
    with pytest.raises(DataFormatError, match="small.csv.zst is truncated") as info:
        read_table(path)
    assert "empty" not in str(info.value)


def test_the_expansion_refusal_never_says_64_times_over_a_limit_of_64(tmp_path, monkeypatch):
    from skframe.io import compressed

    monkeypatch.setattr(compressed, "_FLOOR", 0)  # the ratio alone decides
    rng = np.random.default_rng(0)
    raw = b"".join(b"%d\n" % v for v in rng.integers(0, 2, 60_000)) + bytes(200_000)
    data = gzip.compress(raw, mtime=0)
    monkeypatch.setenv("SKFRAME_MAX_EXPANSION", str(len(raw) // len(data)))  # just under the file's ratio
    path = tmp_path / "r.csv.gz"
    path.write_bytes(data)
    with pytest.raises(DataFormatError, match="SKFRAME_MAX_EXPANSION") as info:
        read_table(path)
    text, lim = str(info.value), len(raw) // len(data)
    assert f"expands {lim} times" not in text and "expands to more than" in text, text
    z = _zstd().ZstdCompressor().compress(raw)  # a zstd frame states its size: the ratio said, rounded up
    monkeypatch.setenv("SKFRAME_MAX_EXPANSION", str(len(raw) // len(z)))
    path = tmp_path / "r.csv.zst"
    path.write_bytes(z)
    with pytest.raises(DataFormatError, match=f"expands {-(-len(raw) // len(z))} times"):
        read_table(path)


def _arrow_files():
    pa = pytest.importorskip("pyarrow")
    import pyarrow.ipc  # noqa: F401 (pa.ipc)
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    table = pa.table({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": X.sum(1)})
    out, ends = {}, {}
    for name, new in (("stream.arrow", pa.ipc.new_stream), ("file.arrow", pa.ipc.new_file)):
        buf = io.BytesIO()
        with new(buf, table.schema) as writer:
            ends[name] = []
            for batch in table.to_batches(max_chunksize=250):
                writer.write_batch(batch)
                ends[name].append(buf.tell())  # a cut here leaves whole batches only
        out[name] = buf.getvalue()
    buf = io.BytesIO()
    pq.write_table(table, buf, row_group_size=250)
    out["t.parquet"], ends["t.parquet"] = buf.getvalue(), []
    return out, ends


@pytest.mark.parametrize("name", ["stream.arrow", "file.arrow", "t.parquet"])
def test_every_cut_of_an_arrow_or_parquet_file_is_refused_as_truncated(tmp_path, name):
    files, ends = _arrow_files()
    data = files[name]
    path = tmp_path / name
    path.write_bytes(data)
    assert read_table(path).n_rows == 2000
    for n in [*range(8, len(data), len(data) // 500), *ends[name], len(data) - 1, len(data) - 8]:
        path.write_bytes(data[:n])
        with pytest.raises(DataFormatError, match=f"{name} is truncated"):
            read_table(path)


@pytest.mark.parametrize("name", ["t.npy", "t.npz"])
def test_every_cut_of_an_npy_or_npz_file_is_refused_as_truncated(tmp_path, name):
    from skframe.io import load_dataset

    rng = np.random.default_rng(0)
    buf = io.BytesIO()
    if name.endswith(".npy"):
        np.save(buf, rng.normal(size=(300, 4)))
    else:
        np.savez_compressed(buf, X=rng.normal(size=(300, 3)), Y=rng.normal(size=300))
    data, path = buf.getvalue(), tmp_path / name
    for n in [*range(8, len(data), 11), len(data) - 1]:  # from the end of the magic string on
        path.write_bytes(data[:n])
        with pytest.raises(DataFormatError, match=f"{name} is truncated"):
            load_dataset(path)


def test_an_arrow_stream_cut_at_a_batch_boundary_is_refused_in_the_cli(tmp_path):
    data = _arrow_files()[0]["stream.arrow"]
    path = tmp_path / "train.arrow"
    path.write_bytes(data[:-8])  # every batch there, the end-of-stream marker gone
    code, _, err, _ = hostile.run_skframe(["fit", path, "--lam", "1e-3", "--sketch-size", "20"], tmp_path)
    _one_line((code, err), "train.arrow is truncated", "end-of-stream marker")


# ------------------------------------------------------------------ 3. a model file never makes skframe read a file
def _model_naming(tmp_path, name, where=("kernel_", "kernel_spec_", "kernel_params")):
    """A precomputed-kernel model whose Gram entries (at ``where``) are replaced by the string ``name``; beside it
    ``name`` holds another Gram matrix, a valid .npy whatever its suffix."""
    from skframe.models import SketchedKernelRidge
    from skframe.persistence.file_format import describe_array, read_model_file, write_model_file

    rng = np.random.default_rng(0)
    Z = rng.normal(size=(40, 3))
    gram = np.exp(-((Z[:, None] - Z[None]) ** 2).sum(-1))
    model = SketchedKernelRidge("precomputed", kernel_params={"gram": gram}, sketch="subsample", sketch_size=10,
                                random_state=0).fit(np.arange(30.0)[:, None], Z[:30].sum(1))
    skframe.save(model, tmp_path / "good.skf")
    with open(tmp_path / name, "wb") as fh:
        np.save(fh, 5 * gram)
    manifest, arrays = read_model_file(tmp_path / "good.skf")
    state = manifest["model"]["state"]["__dict__"]
    for key in where:  # the component, the spec a refit would build it from, the estimator's parameter
        node = state[key]
        if "__component__" in node:
            node = node["params"]
        elif "__object__" in node:
            node = node["state"]["__dict__"]["params"]
        node["__dict__"]["gram"] = name
    used, stack = set(), [manifest["model"]]
    while stack:  # the arrays still referred to; a file with others is refused as tampered with
        node = stack.pop()
        if isinstance(node, dict):
            used.update(v for k, v in node.items() if k == "__array__")
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    arrays = {k: v for k, v in arrays.items() if k in used}
    manifest["arrays"] = {k: describe_array(v) for k, v in arrays.items()}
    write_model_file(tmp_path / "named.skf", manifest, arrays)
    return tmp_path / "named.skf"


@pytest.mark.parametrize("name", ["gram.dat", "gram", "gram.txt", "sub/../gram.bin"])
def test_a_model_whose_gram_names_a_file_of_any_suffix_is_refused_unread(tmp_path, monkeypatch, name):
    if "/" in name:
        (tmp_path / "sub").mkdir()
    path = _model_naming(tmp_path, name)
    monkeypatch.chdir(tmp_path)
    opened = []

    def audit(event, args):
        if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            opened.append(os.fspath(args[0]))

    sys.addaudithook(audit)  # hooks stay for the process: it only records
    before = len(opened)
    with pytest.raises(PersistenceError, match=f"refers to the file '{name}' \\(gram\\)") as info:
        skframe.load(path)
    assert "fit the model again" in str(info.value)
    assert not [p for p in opened[before:] if os.path.basename(p) == os.path.basename(name)], opened[before:]


def test_a_spec_alone_naming_the_gram_file_is_refused(tmp_path):
    path = _model_naming(tmp_path, "gram.dat", where=("kernel_spec_",))
    with pytest.raises(PersistenceError, match="refers to the file 'gram.dat'"):
        skframe.load(path)


def test_predict_with_a_model_naming_its_gram_file_is_one_line(tmp_path):
    path = _model_naming(tmp_path, "gram.dat")
    np.savetxt(tmp_path / "te.csv", np.c_[np.arange(30, 40), np.zeros(10)], delimiter=",", header="id,y",
               comments="")
    before = {p: _sha(tmp_path / p) for p in ("te.csv", "gram.dat", "named.skf")}
    code, out, err, _ = hostile.run_skframe(["predict", path, "te.csv", "--targets", "1", "--out", "p.csv"],
                                            tmp_path)
    _one_line((code, err), "refers to the file 'gram.dat' (gram)", "fit the model again")
    assert {p: _sha(tmp_path / p) for p in before} == before and not (tmp_path / "p.csv").exists()
