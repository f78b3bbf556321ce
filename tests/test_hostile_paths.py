"""Hostile runs, continued: outputs that would destroy what the user named, files that lie about their size, wide
files, models that depend on files outside them, silent peers, and errors that must stay one line.

Same style and helpers as tests/test_hostile_runs.py: each command runs in a subprocess whose address space is
limited to a normal run's plus 200 MB; it ends with one ``Error:`` line (or a correct result), no traceback, and the
user's files byte-identical.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from tests import test_hostile_runs as hr

pytestmark = hr.pytestmark

world = hr.world  # the data files, a good model and the memory of normal runs
folder = hr.folder  # a folder holding the data files and a copy of the good model (m.skf)
_hostile, _one_error, _digest = hr._hostile, hr._one_error, hr._digest


def _files(folder):
    return {p.name: _digest(p) for p in folder.iterdir() if p.is_file() and not p.name.startswith("peak-")}


# ------------------------------------------------------------------ 1. outputs never replace what the user named
@pytest.mark.parametrize("args,fragments", [
    (["fit", "normal.csv", "--model-out", "normal.csv"], ["--model-out normal.csv is the same file as the training "
                                                          "file normal.csv", "give another file name"]),
    (["fit", "normal.csv", "--test", "tiny.csv", "--model-out", "tiny.csv"], ["same file as --test tiny.csv"]),
    (["fit", "normal.csv", "--model-out", "data-link.csv"], ["--model-out data-link.csv is the same file as the "
                                                             "training file normal.csv"]),
    (["fit", "normal.csv", "--model-out", "hard.csv"], ["is the same file as the training file normal.csv"]),
    (["predict", "m.skf", "normal.csv", "--targets", "1", "--out", "normal.csv"], ["--out normal.csv is the same "
                                                                                   "file as DATA normal.csv"]),
    (["predict", "m.skf", "normal.csv", "--targets", "1", "--out", "model-link.csv"], ["same file as the model"]),
    (["tune", "normal.csv", "--png", "curve.png", "--model-out", "curve.png"], ["--png curve.png and --model-out "
                                                                                 "name the same file"]),
])
def test_an_output_that_is_an_input_is_refused_before_any_work(world, folder, args, fragments):
    os.symlink("normal.csv", folder / "data-link.csv")
    os.symlink("m.skf", folder / "model-link.csv")
    os.link(folder / "normal.csv", folder / "hard.csv")
    before = _files(folder)
    _one_error(_hostile(world, args, folder), *fragments)
    assert _files(folder) == before
    assert (folder / "data-link.csv").is_symlink() and hr._leftovers(folder) == []


@pytest.mark.parametrize("kind", ["directory", "fifo", "socket", "link to a fifo"])
@pytest.mark.parametrize("command", ["fit", "predict", "tune"])
def test_an_output_that_is_not_a_regular_file_is_refused(world, folder, kind, command):
    name = {"fit": "out.skf", "predict": "out.csv", "tune": "out.png"}[command]
    target = folder / name
    held = None
    if kind == "directory":
        target.mkdir()
    elif kind == "socket":
        held = socket.socket(socket.AF_UNIX)
        held.bind(str(target))
    else:
        os.mkfifo(folder / "fifo" if kind == "link to a fifo" else target)
        if kind == "link to a fifo":
            os.symlink("fifo", target)
    args = {"fit": ["fit", "normal.csv", "--model-out", name],
            "predict": ["predict", "m.skf", "normal.csv", "--targets", "1", "--out", name],
            "tune": ["tune", "normal.csv", "--cv", "2", "--lam", "1e-3", "--png", name]}[command]
    try:
        what = {"directory": "a directory", "socket": "a socket"}.get(kind, "a FIFO")
        line = _one_error(_hostile(world, args, folder), f"{name} is {what}")
    finally:
        if held is not None:
            held.close()
    assert ".tmp" not in line and "skframe-" not in line
    assert target.is_dir() if kind == "directory" else not target.is_file()
    assert hr._leftovers(folder) == []


def test_a_symbolic_link_is_written_through_to_its_target(world, folder):
    (folder / "models").mkdir()
    os.symlink("models/current.skf", folder / "link.skf")  # a dangling link: its target is created
    r = _hostile(world, ["fit", "normal.csv", "--model-out", "link.skf"], folder)
    assert r.rc == 0, r.stderr
    assert (folder / "link.skf").is_symlink() and (folder / "models" / "current.skf").is_file()
    first = _digest(folder / "models" / "current.skf")
    r = _hostile(world, ["fit", "normal.csv", "--seed", "3", "--model-out", "link.skf"], folder)
    assert r.rc == 0 and (folder / "link.skf").is_symlink(), r.stderr
    assert _digest(folder / "models" / "current.skf") != first
    r = _hostile(world, ["predict", "link.skf", "normal.csv", "--targets", "1", "--out", "p.csv"], folder)
    assert r.rc == 0 and len((folder / "p.csv").read_text().splitlines()) == 301, r.stderr
    assert hr._leftovers(folder) == [] and hr._leftovers(folder / "models") == []


def test_a_missing_or_unwritable_folder_fails_before_the_data_are_read(world, folder):
    (folder / "garbage.csv").write_text("this is not,a table\n1,2,3\n")  # reading it would fail differently
    r = _hostile(world, ["fit", "garbage.csv", "--model-out", "missing/m.skf"], folder)
    _one_error(r, f"--model-out missing/m.skf: the folder {folder / 'missing'} does not exist")
    r = _hostile(world, ["tune", "garbage.csv", "--png", "missing/cv.png"], folder)
    _one_error(r, "--png missing/cv.png: the folder")
    if os.geteuid() != 0:  # root writes into a read-only folder
        (folder / "ro").mkdir(mode=0o555)
        r = _hostile(world, ["fit", "garbage.csv", "--model-out", "ro/m.skf"], folder)
        _one_error(r, "--model-out ro/m.skf: cannot create a file in the folder", "choose a writable folder")


def test_wrong_suffixes_are_refused_in_one_line(world, folder):
    _one_error(_hostile(world, ["tune", "normal.csv", "--png", "out.txt"], folder), "--png out.txt", ".png")
    _one_error(_hostile(world, ["predict", "m.skf", "normal.csv", "--out", "p.txt"], folder), ".csv or .npz")


def test_the_library_refuses_a_device_and_writes_through_links(tmp_path):
    import skframe
    from skframe.exceptions import InvalidParameterError
    from skframe.models import SketchedKernelRidge

    X = np.random.default_rng(0).normal(size=(30, 2))
    model = SketchedKernelRidge(sketch_size=5, random_state=0).fit(X, X.sum(1))
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(InvalidParameterError, match="is a FIFO"):
        skframe.save(model, tmp_path / "pipe")
    with pytest.raises(InvalidParameterError, match="is a directory"):
        skframe.save(model, tmp_path)
    os.symlink("real.skf", tmp_path / "link.skf")
    skframe.save(model, tmp_path / "link.skf")
    assert (tmp_path / "link.skf").is_symlink() and (tmp_path / "real.skf").is_file()
    np.testing.assert_array_equal(skframe.load(tmp_path / "link.skf").predict(X), model.predict(X))


def _signal_after(world, folder, args, hook, sig, marker_name="mark"):
    marker = folder / marker_name
    proc, peak = hr._start(args, folder, env={hook: str(marker)}, address_space=world["vm"] + hr.HEADROOM)
    deadline = time.monotonic() + hr.TIMEOUT
    while not marker.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    time.sleep(0.1)
    proc.send_signal(sig)
    return hr._finish(proc, peak)


def test_sigterm_just_after_the_rename_ends_in_one_line_and_keeps_the_new_file(world, folder):
    r = _signal_after(world, folder, ["fit", "normal.csv", "--seed", "5", "--model-out", "new.skf"],
                      "SKFRAME_TEST_PAUSE_AFTER_REPLACE", signal.SIGTERM)
    assert r.rc == 130 and r.lines == ["Interrupted after writing new.skf completely."], (r.rc, r.stderr)
    r = _hostile(world, ["predict", "new.skf", "normal.csv", "--targets", "1"], folder)
    assert r.rc == 0 and len(r.stdout.splitlines()) == 301


def test_ctrl_c_while_nothing_is_written_says_so(world, folder):
    # the bound on a computation that holds the GIL after Ctrl-C (skframe.cli._watchdog, tested on its own) is
    # lifted: a loaded machine can spend 20 s in one compiled call, and this test is about the message
    proc, peak = hr._start(["fit", "big.csv", "--sketch-size", "2000", "--sketch", "gaussian"], folder,
                           env={"SKFRAME_INTERRUPT_GRACE": "600"}, address_space=world["vm"] + hr.HEADROOM)
    time.sleep(3.0)  # loading, reading or fitting: nothing is being written
    proc.send_signal(signal.SIGINT)
    r = hr._finish(proc, peak)
    if r.rc == 0:
        pytest.skip("the fit ended before the interruption")
    assert r.rc == 130 and r.lines == ["Interrupted; no file was written."], r.stderr


# ------------------------------------------------------------------ 2. model files: one total bound, regular files
def _rewrite_model(src, dst, edit=None, compress=False):
    """``src`` rewritten to ``dst`` with consistent checksums: ``edit(manifest, arrays)`` first; every entry deflated
    with ``compress``."""
    import zipfile

    from skframe.persistence.file_format import describe_array, read_model_file, write_model_file

    manifest, arrays = read_model_file(src)
    if edit is not None:
        edit(manifest, arrays)
    manifest["arrays"] = {k: describe_array(v) for k, v in arrays.items()}
    write_model_file(dst, manifest, arrays)
    if compress:
        with zipfile.ZipFile(dst) as zf:
            entries = [(info.filename, zf.read(info)) for info in zf.infolist()]
        with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, data in entries:
                zf.writestr(name, data)


def test_compressed_model_arrays_are_bounded_together_before_any_is_read(world, folder):
    _rewrite_model(folder / "m.skf", folder / "deflated.skf", compress=True)
    args = ["predict", "deflated.skf", "normal.csv", "--targets", "1"]
    r = _hostile(world, args, folder)
    assert r.rc == 0 and len(r.stdout.splitlines()) == 301, r.stderr  # a genuine compressed file loads
    r = _hostile(world, args, folder, env={"SKFRAME_MAX_DECOMPRESSED": "4kB"})
    _one_error(r, "deflated.skf", "the model file (its compressed entries together) decompresses to",
               "SKFRAME_MAX_DECOMPRESSED")


@pytest.mark.parametrize("model", ["/dev/zero", "pipe", "."])
def test_a_model_that_is_not_a_regular_file_is_refused(world, folder, model):
    os.mkfifo(folder / "pipe")
    _one_error(_hostile(world, ["predict", model, "normal.csv", "--targets", "1"], folder),
               f"model file '{model}' is not a regular file")


def _drop_a_row(manifest, arrays):
    key = next(k for k, a in arrays.items() if a.ndim == 2 and a.shape[0] > 2)
    arrays[key] = np.ascontiguousarray(arrays[key][:-1])


def _five(manifest, arrays):
    manifest["model"]["state"]["__dict__"]["n_features_in_"] = "five"


@pytest.mark.parametrize("edit,command,fragments", [
    (_drop_a_row, "predict", ["holds arrays that do not fit together", "fit the model again"]),
    (_drop_a_row, "evaluate", ["holds arrays that do not fit together"]),
    (_drop_a_row, "predict --out", ["holds arrays that do not fit together"]),
    (_five, "predict", ["n_features_in_='five'", "not a number of features"]),
])
def test_a_model_with_consistent_checksums_but_wrong_arrays_gives_one_line(world, folder, edit, command, fragments):
    _rewrite_model(folder / "m.skf", folder / "bad.skf", edit)
    args = {"predict": ["predict", "bad.skf", "normal.csv", "--targets", "1"],
            "evaluate": ["evaluate", "bad.skf", "normal.csv"],
            "predict --out": ["predict", "bad.skf", "big.csv", "--targets", "1", "--out", "p.csv"]}[command]
    _one_error(_hostile(world, args, folder), "bad.skf", *fragments)
    assert not (folder / "p.csv").exists()


# ------------------------------------------------------------------ 6. environment limits that are not numbers
@pytest.mark.parametrize("variable", ["SKFRAME_MAX_FEATURES", "SKFRAME_MAX_DECOMPRESSED", "SKFRAME_NUMBA_MIN_WORK"])
@pytest.mark.parametrize("value", ["inf", "nan", "1e400", "-inf", "lots"])
def test_a_non_finite_or_garbage_limit_is_refused_in_one_line(variable, value):
    env = dict(os.environ, **{variable: value})
    code = ("import sys, numpy as np\nfrom skframe.limits import limit\nfrom skframe.core.engine import "
            "numba_min_work\nname = sys.argv[1]\nfn = {'SKFRAME_MAX_FEATURES': lambda: limit('features'), "
            "'SKFRAME_MAX_DECOMPRESSED': lambda: limit('decompressed'), 'SKFRAME_NUMBA_MIN_WORK': numba_min_work}"
            "[name]\ntry:\n    fn()\nexcept Exception as exc:\n    print(type(exc).__name__, exc)\n")
    out = subprocess.run([sys.executable, "-c", code, variable], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert out.stdout.startswith("InvalidParameterError ") and f"{variable}='{value}'" in out.stdout, out.stdout


# ------------------------------------------------------------------ 3. wide files: linear in the number of columns
def _wide_csv(path, n, header=True, names=None):
    names = names or [f"c{j}" for j in range(n)]
    with open(path, "w") as fh:
        if header:
            fh.write(",".join(names) + "\n")
        fh.write(",".join("1" for _ in range(n)) + "\n")
        fh.write(",".join("2" for _ in range(n)) + "\n")


WIDE_EXTRA = 1 << 30


def _within_read_bound(world, args, folder):
    """Run ``args`` with the address space capped at a normal run's + 1 GiB (not + 200 MB): a million columns'
    names and positions are Python objects while they are parsed, matched and saved (about 450 MB at the peak,
    measured by benchmarks/bench_hostile.py); the point here is that the work is linear, not quadratic."""
    r = hr._run(args, folder, address_space=world["vm"] + WIDE_EXTRA)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.rss is None or r.rss <= world["rss"] + WIDE_EXTRA, (r.rss, world["rss"])
    return r


@pytest.mark.parametrize("header", [True, False])
def test_a_million_columns_are_fitted_and_predicted(world, tmp_path, header):
    n = 10**6  # the documented limit is 1 048 576 columns
    _wide_csv(tmp_path / "wide.csv", n, header)
    drop = "c7" if header else "8"
    r = _within_read_bound(world, ["fit", "wide.csv", "--sketch", "none", "--drop", drop, "--model-out", "w.skf"],
                           tmp_path)
    assert r.rc == 0, r.stderr
    r = _within_read_bound(world, ["predict", "w.skf", "wide.csv", "--targets", "1", "--drop", drop], tmp_path)
    assert r.rc == 0 and len(r.stdout.splitlines()) == 3, r.stderr


def test_a_sparse_arff_of_900000_attributes_is_read(world, tmp_path):
    n = 900_000
    with open(tmp_path / "wide.arff", "w") as fh:
        fh.write("@relation wide\n" + "".join(f"@attribute a{j} numeric\n" for j in range(n)) + "@data\n")
        fh.write(f"{{0 1,5 2,{n - 1} 1}}\n{{3 1,{n - 1} 2}}\n{{1 1,{n - 1} 3}}\n")
    r = _hostile(world, ["fit", "wide.arff", "--sketch", "none"], tmp_path)
    assert r.rc == 0, r.stderr


def test_duplicate_column_names_are_refused_by_fit_and_predict_alike(world, folder):
    lines = (folder / "normal.csv").read_text().splitlines()
    (folder / "dup.csv").write_text("a,b,a,c,y\n" + "\n".join(lines) + "\n")
    for args in (["fit", "dup.csv", "--model-out", "d.skf"], ["fit", "dup.csv", "--drop", "b"],
                 ["predict", "m.skf", "dup.csv", "--targets", "1"], ["evaluate", "m.skf", "dup.csv"]):
        _one_error(_hostile(world, args, folder), "dup.csv has several columns named 'a'", "rename them")
    assert not (folder / "d.skf").exists()


# ------------------------------------------------------------------ 4. precomputed kernels: the model holds the matrix
@pytest.fixture
def gram_folder(tmp_path):
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(40, 3))
    np.save(tmp_path / "gram.npy", np.exp(-((Z[:, None] - Z[None]) ** 2).sum(-1)))
    ids, y = np.arange(40), Z.sum(1)
    np.savetxt(tmp_path / "tr.csv", np.c_[ids[:30], y[:30]], delimiter=",", header="id,y", comments="")
    np.savetxt(tmp_path / "te.csv", np.c_[ids[30:], y[30:]], delimiter=",", header="id,y", comments="")
    return tmp_path


def test_a_precomputed_kernel_model_predicts_the_same_after_its_gram_file_changes_moves_or_goes(world, gram_folder):
    args = ["fit", "tr.csv", "--kernel", "precomputed", "--kernel-param", "gram=gram.npy", "--sketch", "subsample",
            "--sketch-size", "10", "--scale", "none", "--model-out", "m.skf"]
    assert _hostile(world, args, gram_folder).rc == 0
    predict = ["predict", "m.skf", "te.csv", "--targets", "1"]
    first = _hostile(world, predict, gram_folder).stdout
    gram = gram_folder / "gram.npy"
    np.save(gram, 2 * np.load(gram))  # changed
    assert _hostile(world, predict, gram_folder).stdout == first
    gram.rename(gram_folder / "moved.npy")  # moved
    assert _hostile(world, predict, gram_folder).stdout == first
    (gram_folder / "moved.npy").unlink()  # deleted
    r = _hostile(world, predict, gram_folder)
    assert r.rc == 0 and r.stdout == first and len(first.splitlines()) == 11, r.stderr


def test_an_old_model_file_naming_its_gram_file_is_refused_unread(world, gram_folder):
    import skframe
    from skframe.models import SketchedKernelRidge

    X, y = np.arange(30.0)[:, None], np.arange(30.0)
    skframe.save(SketchedKernelRidge("precomputed", kernel_params={"gram": str(gram_folder / "gram.npy")},
                                     sketch="subsample", sketch_size=10, random_state=0).fit(X, y),
                 gram_folder / "new.skf")

    def as_older_files_were(manifest, arrays):  # the kernel's parameter: the path, as older versions saved it
        stack = [manifest["model"]]
        while stack:
            node = stack.pop()
            if isinstance(node, dict) and isinstance(node.get("gram"), dict) and "__array__" in node["gram"]:
                arrays.pop(node["gram"]["__array__"], None)
                node["gram"] = "big.npy"
            stack.extend(node.values() if isinstance(node, dict) else node if isinstance(node, list) else [])

    _rewrite_model(gram_folder / "new.skf", gram_folder / "old.skf", as_older_files_were)
    big = gram_folder / "big.npy"
    with open(big, "wb") as fh:  # a large matrix: reading it would take 2 GB
        np.lib.format.write_array_header_1_0(fh, {"descr": "<f8", "fortran_order": False, "shape": (16384, 16384)})
        fh.truncate(16384 * 16384 * 8 + 128)
    r = _hostile(world, ["predict", "old.skf", "te.csv", "--targets", "1"], gram_folder)
    _one_error(r, "refers to the file 'big.npy'", "fit the model again")


# ------------------------------------------------------------------ 5. Dask: a peer that is not a scheduler
class _Peer:
    """A loopback listener that accepts connections and then says nothing, or answers ``reply`` bytes."""

    def __init__(self, reply=None):
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.reply, self.conns = reply, []
        self.address = "tcp://127.0.0.1:%d" % self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            if self.reply:
                conn.sendall(self.reply)

    def close(self):
        for conn in self.conns:
            conn.close()
        self.sock.close()


@pytest.mark.parametrize("reply,fragments", [
    (None, ["did not answer as a Dask scheduler within 3 s", "SKFRAME_DASK_WORKER_TIMEOUT"]),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello" * 20, ["does not speak the Dask protocol"]),
])
def test_a_peer_that_does_not_speak_dask_ends_in_one_line_within_the_timeout(world, folder, reply, fragments):
    pytest.importorskip("distributed")
    peer = _Peer(reply)
    try:
        start = time.monotonic()
        r = _hostile(world, ["fit", "normal.csv", "--dask-scheduler", peer.address], folder,
                     env={"SKFRAME_DASK_WORKER_TIMEOUT": "3", "SKFRAME_DASK_STALL_TIMEOUT": "5"})
        elapsed = time.monotonic() - start
    finally:
        peer.close()
    line = _one_error(r, peer.address, *fragments)
    assert "out of memory" not in line
    assert elapsed < 60, elapsed  # a hang guard (the timeout is 3 s), not a timing


def test_a_scheduler_address_with_an_unknown_scheme_is_one_line(world, folder):
    pytest.importorskip("distributed")
    _one_error(_hostile(world, ["fit", "normal.csv", "--dask-scheduler", "foo://bar"], folder),
               "--dask-scheduler 'foo://bar' is not a Dask address", "tcp://HOST:8786")


def test_a_local_cluster_that_cannot_start_its_threads_is_one_line(monkeypatch):
    distributed = pytest.importorskip("distributed")
    from skframe.compute._dask_cluster import dask_client
    from skframe.exceptions import DistributedError

    def refuse(*args, **kwargs):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(distributed, "LocalCluster", refuse)
    with pytest.raises(DistributedError, match=r"could not start a local Dask cluster of 64 workers .*can't start "
                                               r"new thread.*smaller --dask-local"):
        with dask_client(local=64):
            pass


# ------------------------------------------------------------------ 6. one line for every error
BAD_KERNELS = '''
import skframe


class Raises:
    def __call__(self, X, Y=None):
        raise ZeroDivisionError("the plugin's own bug")


class Text:
    def __call__(self, X, Y=None):
        return "not a matrix"


@skframe.hookimpl
def register_kernels(register):
    register("raising-kernel", Raises)
    register("text-kernel", Text)
'''


@pytest.mark.parametrize("kernel,fragments", [
    ("raising-kernel", ["kernel Raises failed", "ZeroDivisionError: the plugin's own bug", "--kernel"]),
    ("text-kernel", ["kernel Text returned a str, not numbers"]),
])
def test_a_plugin_kernel_that_raises_or_returns_text_is_one_line(world, folder, kernel, fragments):
    root = folder / "plugin"
    root.mkdir()
    (root / "skf_bad_kernels.py").write_text(BAD_KERNELS)
    info = root / "skf_bad_kernels-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: skf-bad-kernels\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[skframe]\nbad = skf_bad_kernels\n")
    path = os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])
    r = _hostile(world, ["fit", "normal.csv", "--kernel", kernel, "--sketch-size", "10"], folder,
                 env={"PYTHONPATH": path})
    _one_error(r, *fragments)


def test_targets_whose_squares_overflow_are_refused(world, folder):
    X = np.random.default_rng(0).normal(size=(50, 3))
    np.savetxt(folder / "big_y.csv", np.c_[X, 1e160 * X.sum(1)], delimiter=",")
    for extra in ([], ["--loss", "huber", "--solver", "adam"]):
        _one_error(_hostile(world, ["fit", "big_y.csv", *extra], folder), "the targets reach", "rescale the targets")


def test_a_bad_smiles_of_100_kb_is_quoted_short(world, folder):
    pytest.importorskip("rdkit")
    (folder / "sm.csv").write_text("smiles,y\n" + "X" * 100_000 + ",1.0\nCCO,2.0\nCCN,3.0\n")
    r = _hostile(world, ["fit", "sm.csv", "--inputs", "smiles", "--input-column", "smiles", "--featurize", "morgan",
                         "--kernel", "tanimoto", "--sketch", "none"], folder)
    line = _one_error(r, "(100000 characters) cannot be parsed")
    assert len(line) < 400, len(line)


@pytest.mark.parametrize("args,fragments", [
    (["fit", "normal.csv", "--bogus"], ["No such option: --bogus", "see skframe fit --help"]),
    (["predict"], ["Missing argument 'MODEL'", "see skframe predict --help"]),
    (["fit", "normal.csv", "--targets", "x"], ["Invalid value for '--targets'"]),
    (["no-such-command"], ["No such command 'no-such-command'", "see skframe --help"]),
])
def test_a_usage_error_is_one_line(world, folder, args, fragments):
    r = _hostile(world, args, folder)
    _one_error(r, *fragments)
    assert "╭" not in r.stderr and "Usage:" not in r.stderr


def test_an_infinite_limit_in_the_environment_is_one_line_in_the_cli(world, folder):
    r = _hostile(world, ["fit", "normal.csv"], folder, env={"SKFRAME_MAX_FEATURES": "inf"})
    _one_error(r, "SKFRAME_MAX_FEATURES='inf' is not a positive whole number")
