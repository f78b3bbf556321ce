"""Hostile and unlucky runs of the command line: a model is verified before it replaces anything, degenerate data
are refused or warned about in one line, nothing is left behind, messages name the user's paths, files reproduce.

Each command runs in a subprocess whose address space is limited (``resource.RLIMIT_AS``: what a normal run of the
same interpreter and libraries reserves, plus 200 MB) and whose peak resident memory is checked against a normal run;
it must end with a one-line error (or a correct result), no traceback, and the previous files byte-identical.
Interruptions in the save window use the test hook ``SKFRAME_TEST_PAUSE_BEFORE_REPLACE`` of
:mod:`skframe.io.atomic` (the write pauses once its temporary file is complete and checked, before the rename).
"""

from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import skframe
from skframe.contract.registry import get_kernel, spec_of
from skframe.exceptions import DegenerateDataWarning, InvalidInputError, PersistenceError, SketchSizeWarning
from skframe.io import atomic
from skframe.models import SketchedKernelRidge, _degenerate
from tests.warm_runs import run_python

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and sends POSIX signals")

MB = 1 << 20
HEADROOM = 200 * MB
TIMEOUT = 180  # a hang guard only: nothing here asserts on time

# the child: the command line, reporting its peak virtual and resident memory (from /proc) into a file at exit
CHILD = """
import atexit, os, sys
def _peak():
    with open('/proc/self/status') as fh:
        fields = dict(line.split(':', 1) for line in fh if ':' in line)
    with open(os.environ['HOSTILE_PEAK_FILE'], 'w') as out:
        out.write(fields['VmPeak'].split()[0] + ' ' + fields['VmHWM'].split()[0])
atexit.register(_peak)
from skframe.cli import main
main(sys.argv[1:])
"""


def _limits(address_space=None, file_size=None):
    def apply():
        # Ctrl-C as a terminal delivers it: a run started in the background by a non-interactive shell
        # inherits SIGINT ignored, and Python then installs no KeyboardInterrupt handler
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if address_space is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
        if file_size is not None:
            import resource

            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG), as on a full disk
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))

    return apply


class Run:
    def __init__(self, proc, stdout, stderr, peak):
        self.rc, self.stdout, self.stderr = proc.returncode, stdout, stderr
        self.vm, self.rss = peak

    @property
    def lines(self):
        return [line for line in self.stderr.splitlines() if line.strip()]


def _start(args, tmp, env=None, address_space=None, file_size=None):
    peak_file = tmp / f"peak-{time.monotonic_ns()}"
    full_env = {k: v for k, v in os.environ.items() if k != atomic.PAUSE_HOOK}
    full_env.update(HOSTILE_PEAK_FILE=str(peak_file), SKFRAME_DEBUG="0", **(env or {}))
    proc = subprocess.Popen([sys.executable, "-c", CHILD, *map(str, args)], cwd=tmp, env=full_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_limits(address_space, file_size))
    return proc, peak_file


def _finish(proc, peak_file):
    stdout, stderr = proc.communicate(timeout=TIMEOUT)
    peak = (None, None)
    if peak_file.exists():
        vm, rss = peak_file.read_text().split()
        peak = (int(vm) * 1024, int(rss) * 1024)
    return Run(proc, stdout, stderr, peak)


def _run(args, tmp, env=None, address_space=None, file_size=None, fresh=False):
    """``_start`` and ``_finish`` in one: the command forked from a warm interpreter (tests/warm_runs.py) with the
    same environment, limits and pipes, unless ``env`` sets a variable read at start-up or ``fresh`` asks for a
    fresh interpreter (its own hash seed, say), a plain process then."""
    peak_file = tmp / f"peak-{time.monotonic_ns()}"
    base = {k: v for k, v in os.environ.items() if k != atomic.PAUSE_HOOK}
    base["SKFRAME_DEBUG"] = "0"
    full_env = dict(base, HOSTILE_PEAK_FILE=str(peak_file), **(env or {}))
    limits = {"sigint": True, "address_space": address_space, "file_size": file_size}
    proc = run_python(CHILD, args, tmp, full_env, TIMEOUT, limits=limits, warm_base=None if fresh else base)
    peak = (None, None)
    if peak_file.exists():
        vm, rss = peak_file.read_text().split()
        peak = (int(vm) * 1024, int(rss) * 1024)
    return Run(proc, proc.stdout, proc.stderr, peak)


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") or p.name.endswith((".tmp", ".part")))


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Data files, a good model, and the memory of normal runs (the baseline of the limits)."""
    tmp = tmp_path_factory.mktemp("hostile")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = X.sum(axis=1) + 0.1 * rng.normal(size=300)
    np.savetxt(tmp / "normal.csv", np.c_[X, y], delimiter=",")
    np.savetxt(tmp / "huge.csv", np.c_[X * 1e300, y], delimiter=",")
    np.savetxt(tmp / "tiny.csv", np.c_[X * 1e-300, y], delimiter=",")
    Xb = rng.normal(size=(5000, 4))
    np.savetxt(tmp / "big.csv", np.c_[Xb, Xb.sum(axis=1)], delimiter=",")
    runs = [_run(["fit", "normal.csv", "--seed", "0", "--model-out", "good.skf"], tmp),
            _run(["fit", "big.csv", "--memory-budget", "10MB", "--seed", "0"], tmp),
            _run(["predict", "good.skf", "big.csv", "--targets", "1", "--out", "p0.csv"], tmp)]
    for r in runs:
        assert r.rc == 0 and r.vm is not None, r.stderr
    return {"dir": tmp, "vm": max(r.vm for r in runs), "rss": max(r.rss for r in runs)}


def _hostile(world, args, folder=None, **kwargs):
    """Run ``args`` with the address space limited to a normal run's + 200 MB; check memory, one line, no traceback."""
    r = _run(args, folder or world["dir"], address_space=world["vm"] + HEADROOM, **kwargs)
    assert "Traceback" not in r.stderr, r.stderr
    if r.rss is not None:
        assert r.rss <= world["rss"] + HEADROOM, (r.rss, world["rss"])
    return r


def _one_error(r, *fragments):
    assert r.rc == 2 and len(r.lines) == 1 and r.lines[0].startswith("Error: "), r.stderr
    for fragment in fragments:
        assert fragment in r.lines[0], r.lines[0]
    return r.lines[0]


@pytest.fixture
def folder(world, tmp_path):
    """A folder holding the data files and a copy of the good model (``m.skf``)."""
    for name in ("normal.csv", "huge.csv", "tiny.csv", "big.csv"):
        os.link(world["dir"] / name, tmp_path / name)
    (tmp_path / "m.skf").write_bytes((world["dir"] / "good.skf").read_bytes())
    return tmp_path


# ------------------------------------------------------------------ 1. an unloadable model never replaces a good one
def test_huge_features_with_a_data_set_bandwidth_are_refused_and_the_model_is_kept(world, folder):
    before = _digest(folder / "m.skf")
    r = _hostile(world, ["fit", "huge.csv", "--kernel", "laplacian", "--model-out", "m.skf"], folder)
    _one_error(r, "the features reach 3.9e+300", "rescale")
    assert _digest(folder / "m.skf") == before and _leftovers(folder) == []
    r = _hostile(world, ["predict", "m.skf", "normal.csv", "--targets", "1"], folder)
    assert r.rc == 0 and r.lines == [] and len(r.stdout.splitlines()) == 301


def test_a_model_that_would_not_load_back_is_not_saved(tmp_path):
    X = np.random.default_rng(1).normal(size=(60, 3))
    model = SketchedKernelRidge("laplacian", sketch_size=10, random_state=0).fit(X, X.sum(axis=1))
    path = tmp_path / "m.skf"
    skframe.save(model, path)
    before = path.read_bytes()
    model.kernel_.gamma = 0.0  # what gamma="scale" gave on features of magnitude 1e300
    with pytest.raises(PersistenceError, match=r"not saved to .*m\.skf.*left unchanged.*gamma=0\.0"):
        skframe.save(model, path)
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["m.skf"]


def test_a_data_set_parameter_outside_the_kernels_range_is_refused():
    kernel = get_kernel("laplacian", gamma=1.0)
    kernel.gamma = 0.0
    with pytest.raises(InvalidInputError, match=r"laplacian kernel \(gamma=0\.0\).*set from the training data"):
        _degenerate.check_kernel_parameters(kernel, spec_of(None, kernel))


# ------------------------------------------------------------------ 5. degenerate data are not silent
def _beside_lam_edge(lines):
    """The stderr lines other than lam='auto''s note that its choice lies at an end of its grid."""
    return [line for line in lines if not line.startswith("Warning: --lam auto chose ")]


def test_tiny_features_warn_once_that_the_kernel_is_constant(world, folder):
    r = _hostile(world, ["fit", "tiny.csv", "--model-out", "m.skf"], folder)
    lines = _beside_lam_edge(r.lines)  # a constant kernel also leaves lam='auto' at an end of its grid (said)
    assert r.rc == 0 and len(lines) == 1 and lines[0].startswith("Warning: "), r.stderr
    assert "numerically constant" in lines[0] and "3.77e-300" in lines[0] and "rescale" in lines[0]


def test_tiny_features_warn_in_the_library():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(80, 3))
    with pytest.warns(DegenerateDataWarning, match="numerically constant"):
        model = SketchedKernelRidge(sketch_size=10, random_state=0).fit(X * 1e-300, X.sum(axis=1))
    assert np.ptp(model.predict(X * 1e-300)) == 0.0  # what the warning says: a constant model
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)
        SketchedKernelRidge(sketch_size=10, random_state=0).fit(X, X.sum(axis=1))  # normal data: no warning


@pytest.mark.parametrize("data,fragments", [
    ("huge.csv", ["the features reach 3.9e+300"]),
    ("tiny.csv", ["the linear kernel (no parameters) is zero", "3.77e-300"]),
])
def test_the_linear_kernel_is_not_blamed_for_a_gamma_it_does_not_have(world, folder, data, fragments):
    r = _hostile(world, ["fit", data, "--kernel", "linear", "--model-out", "m.skf"], folder)
    assert "gamma" not in _one_error(r, *fragments)


def test_a_zero_gram_matrix_names_the_kernels_own_parameters():
    X = np.random.default_rng(3).normal(size=(20, 2))
    linear = get_kernel("linear")
    gaussian = get_kernel("gaussian", gamma=0.5)
    spec = spec_of
    assert "gamma" not in str(_degenerate.zero_gram_error(linear, spec(None, linear), X))
    assert "gamma=0.5 is too large" in str(_degenerate.zero_gram_error(gaussian, spec(None, gaussian), X))


def test_an_auto_sketch_that_the_budget_cuts_below_the_rule_warns_once(world, folder):
    r = _hostile(world, ["fit", "big.csv", "--memory-budget", "1MB"], folder)
    lines = _beside_lam_edge(r.lines)  # the target, a sum of the features, wants the least lam of the grid (said)
    assert r.rc == 0 and len(lines) == 1, r.stderr
    assert re.search(r"^Warning: the memory budget \(1 MB, given\) caps the 'auto' sketch size at m=\d+, below the "
                     r"rule's minimum of 100", lines[0]), lines[0]
    assert "--memory-budget" in lines[0] and "--sketch-size" in lines[0]


def test_budget_cut_warning_in_the_library():
    X = np.random.default_rng(4).normal(size=(3000, 4))
    with pytest.warns(SketchSizeWarning, match="below the rule's minimum of 100"):
        SketchedKernelRidge(memory_budget="1MB", random_state=0).fit(X, X.sum(axis=1))


def test_a_collapsed_sketch_rank_warns_for_a_normalized_kernel_only():
    gaussian, linear = get_kernel("gaussian", gamma=1.0), get_kernel("linear")
    info = {"rank": 1, "m": 50, "s_prime": 80}
    with pytest.warns(DegenerateDataWarning, match=r"rank collapsed to 1 \(of m=50\)"):
        _degenerate.warn_rank_collapse(gaussian, info)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _degenerate.warn_rank_collapse(linear, info)  # a linear kernel on one feature has rank 1 by nature
        _degenerate.warn_rank_collapse(gaussian, dict(info, rank=40))


# ------------------------------------------------------------------ 6. one temporary file; nothing left behind
def _pause_and_signal(world, folder, args, sig):
    """Start ``args`` with the save-window hook, check the one temporary file, send ``sig``; return the run."""
    marker = folder / "in-window"
    proc, peak = _start(args, folder, env={"SKFRAME_TEST_PAUSE_BEFORE_REPLACE": str(marker)},
                        address_space=world["vm"] + HEADROOM)
    deadline = time.monotonic() + TIMEOUT
    while not marker.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    time.sleep(0.1)  # the marker is written before the pause begins
    temps = [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]
    proc.send_signal(sig)
    return _finish(proc, peak), temps


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_and_sigint_in_the_save_window_keep_the_model_and_remove_the_temporary_file(world, folder, sig):
    before = _digest(folder / "m.skf")
    r, temps = _pause_and_signal(world, folder, ["fit", "normal.csv", "--seed", "5", "--model-out", "m.skf"], sig)
    assert len(temps) == 1 and re.fullmatch(r"\.m\.skf\.skframe-[0-9a-f]{8}-\d+-\w+\.tmp", temps[0]), temps
    assert r.rc == 130 and "Traceback" not in r.stderr and len(r.lines) == 1, r.stderr
    assert r.stderr.startswith("Interrupted: the unfinished "), r.stderr
    assert _digest(folder / "m.skf") == before
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_sigkill_in_the_save_window_leaves_a_temporary_file_that_the_next_save_removes(world, folder):
    before = _digest(folder / "m.skf")
    r, temps = _pause_and_signal(world, folder, ["fit", "normal.csv", "--seed", "5", "--model-out", "m.skf"],
                                 signal.SIGKILL)
    assert r.rc == -signal.SIGKILL and _digest(folder / "m.skf") == before
    assert [p.name for p in folder.iterdir() if p.name.endswith(".tmp")] == temps
    r = _hostile(world, ["fit", "normal.csv", "--seed", "5", "--model-out", "other.skf"], folder)
    assert r.rc == 0 and not [p for p in folder.iterdir() if p.name.endswith(".tmp")]
    assert _digest(folder / "m.skf") == before


def test_a_killed_predict_out_leaves_its_partial_file_to_the_next_write(world, folder):
    (folder / "p.csv").write_text("previous predictions\n")
    r, temps = _pause_and_signal(world, folder, ["predict", "m.skf", "big.csv", "--targets", "1", "--out", "p.csv"],
                                 signal.SIGKILL)
    assert len(temps) == 1 and temps[0].startswith(".p.csv.skframe-")
    assert (folder / "p.csv").read_text() == "previous predictions\n"
    r = _hostile(world, ["predict", "m.skf", "normal.csv", "--targets", "1", "--out", "q.csv"], folder)
    assert r.rc == 0 and not [p for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_the_spill_folder_of_a_killed_budgeted_fit_is_removed_by_the_next_one(world, folder):
    spills = folder / "tmpdir"
    spills.mkdir()
    env = {"TMPDIR": str(spills)}
    args = ["fit", "big.csv", "--memory-budget", "10MB", "--model-out", "m.skf"]
    marker = folder / "in-window"
    proc, peak = _start(args, folder, env=dict(env, SKFRAME_TEST_PAUSE_BEFORE_REPLACE=str(marker)))
    deadline = time.monotonic() + TIMEOUT
    while not marker.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    left = [p.name for p in spills.iterdir()]
    assert len(left) == 1 and left[0].startswith("skframe-stream-")
    proc.kill()
    _finish(proc, peak)
    assert [p.name for p in spills.iterdir()] == left  # a killed process cannot clean up
    alive = spills / (atomic.owned_name(kind="stream") + "keep")  # this test process runs: its folder is kept
    alive.mkdir()
    r = _hostile(world, ["fit", "big.csv", "--memory-budget", "10MB"], folder, env=env)
    assert r.rc == 0, r.stderr
    assert [p.name for p in spills.iterdir()] == [alive.name]


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_remove_stale_removes_only_what_ended_processes_of_this_machine_left(tmp_path):
    dead, host = _dead_pid(), atomic.owned_name()[len("skframe-"):].split("-")[0]
    stale = tmp_path / f".m.skf.skframe-{host}-{dead}-abc123.tmp"
    alive = tmp_path / f".m.skf.skframe-{host}-{os.getpid()}-abc123.tmp"
    elsewhere = tmp_path / f".m.skf.skframe-{'0' * 8 if host != '0' * 8 else '1' * 8}-{dead}-abc123.tmp"
    foreign = tmp_path / f".m.skf.{dead}.tmp"
    for p in (stale, alive, elsewhere, foreign):
        p.write_text("x")
    assert atomic.remove_stale(tmp_path) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in (alive, elsewhere, foreign))


# ------------------------------------------------------------------ 7. messages name the user's paths and options
def _invoke(args, folder, monkeypatch):
    """``skframe ARGS`` in this process (for wording checks), run in ``folder``; returns the result."""
    from typer.testing import CliRunner

    from skframe.cli import app

    monkeypatch.chdir(folder)
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.mark.parametrize("args", [
    ["fit", "normal.csv", "--model-out", "missing/m.skf"],
    ["predict", "m.skf", "normal.csv", "--targets", "1", "--out", "missing/p.csv"],
])
def test_a_missing_output_folder_is_named(folder, args, monkeypatch):
    res = _invoke(args, folder, monkeypatch)
    line = res.stderr.strip()
    assert res.exit_code == 2 and line.count("\n") == 0 and line.startswith("Error: "), res.stderr
    assert f"the folder {folder / 'missing'} does not exist" in line and ".tmp" not in line and ".part" not in line


@pytest.mark.parametrize("args,fragments", [
    (["fit", "normal.csv", "--sketch", "subsample", "--sketch-size", "300", "--model-out", "m.skf"],
     ["cannot write model file 'm.skf': File too large"]),
    (["predict", "m.skf", "big.csv", "--targets", "1", "--out", "p.csv"], ["File too large: p.csv"]),
    (["predict", "m.skf", "big.csv", "--targets", "1", "--out", "p.npz"], ["File too large: p.npz"]),
    (["fit", "big.csv", "--memory-budget", "10MB"], ["File too large while writing the parsed rows of big.csv",
                                                     "TMPDIR", "skframe-stream-"]),
])
def test_a_full_disk_names_the_path(world, folder, args, fragments):
    before = _digest(folder / "m.skf")
    # files may not grow past 20 kB: writes fail as on a full disk (EFBIG instead of ENOSPC)
    r = _hostile(world, args, folder, file_size=20_000)
    line = _one_error(r, *fragments)
    assert "Errno" not in line and ".tmp" not in line
    assert _digest(folder / "m.skf") == before and not [p for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_no_space_left_while_predicting_names_the_out_file(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from skframe.cli import app

    X = np.random.default_rng(5).normal(size=(30, 2))
    np.savetxt(tmp_path / "d.csv", np.c_[X, X.sum(axis=1)], delimiter=",")
    model, out = tmp_path / "m.skf", tmp_path / "p.csv"
    assert CliRunner().invoke(app, ["fit", str(tmp_path / "d.csv"), "--model-out", str(model)]).exit_code == 0

    def full(fh, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savetxt", full)
    res = CliRunner().invoke(app, ["predict", str(model), str(tmp_path / "d.csv"), "--targets", "1", "--out",
                                   str(out)])
    assert res.exit_code == 2 and res.stderr.strip() == f"Error: No space left on device: {out}"


def test_a_budgeted_huber_fit_suggests_the_option(folder, monkeypatch):
    res = _invoke(["fit", "big.csv", "--memory-budget", "10MB", "--loss", "huber"], folder, monkeypatch)
    line = res.stderr.strip()
    assert res.exit_code == 2 and line.count("\n") == 0 and "--solver adam" in line, res.stderr
    assert "solver='adam'" not in line


def test_dask_large_graph_warning_is_not_shown(capsys):
    from skframe.cli import _warnings

    with warnings.catch_warnings():
        _warnings.install()
        warnings.warn("Sending large graph of size 30.52 MiB.\nThis may cause some slowdown.", UserWarning,
                      stacklevel=1)
        warnings.warn("something else", UserWarning, stacklevel=1)
    assert capsys.readouterr().err == "Warning: something else\n"


# ------------------------------------------------------------------ 8. model files reproduce byte for byte
@pytest.mark.parametrize("extra", [[], ["--memory-budget", "10MB"]], ids=["plain", "budget"])
def test_the_same_fit_gives_the_same_file(world, folder, extra):
    data = "big.csv" if extra else "normal.csv"
    for name in ("a.skf", "b.skf"):  # two fresh interpreters: string hashing (set order) differs between them
        assert _hostile(world, ["fit", data, "--seed", "7", *extra, "--model-out", name], folder, fresh=True).rc == 0
    assert (folder / "a.skf").read_bytes() == (folder / "b.skf").read_bytes()


def test_the_same_machine_fit_gives_the_same_file(tmp_path):
    from skframe.models import SketchedKernelMachine

    X = np.random.default_rng(7).normal(size=(200, 3))
    for name in ("a.skf", "b.skf"):
        skframe.save(SketchedKernelMachine(loss="huber", sketch_size=20, random_state=3).fit(X, X.sum(axis=1)),
                     tmp_path / name)
    assert (tmp_path / "a.skf").read_bytes() == (tmp_path / "b.skf").read_bytes()


def test_saved_models_hold_no_timings_or_machine_state(tmp_path):
    X = np.random.default_rng(6).normal(size=(100, 3))
    model = SketchedKernelRidge(sketch_size=10, random_state=0).fit(X, X.sum(axis=1))
    skframe.save(model, tmp_path / "a.skf")
    model.fit_seconds_, model.execution_["machine"]["memory_bytes"] = 123.0, 1  # as another run would measure
    model.execution_["memory_budget"] += 1
    skframe.save(model, tmp_path / "b.skf")
    assert (tmp_path / "a.skf").read_bytes() == (tmp_path / "b.skf").read_bytes()
    back = skframe.load(tmp_path / "a.skf")
    assert not hasattr(back, "fit_seconds_") and "machine" not in back.execution_
    assert back.execution_["executor"] == model.execution_["executor"]
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
