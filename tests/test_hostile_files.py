"""Hostile files and lost clusters: every case gives one clean error line, within a memory cap, and never hangs.

Each command runs in a child process whose address space is capped at the interpreter with its libraries loaded
plus 200 MB (tests/hostile.py): a reader that allocated what a file merely claims would fail with an out-of-memory
line instead of the limit's message. Times are recorded by benchmarks/bench_hostile.py, not asserted here.
"""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import zipfile

import numpy as np
import pytest

from tests import hostile, hostile_tables

hostile.WARM = True  # completed commands fork from a warm interpreter (tests/warm_runs.py)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _one_line_error(code, err, *needles):
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("Error: "), err[-2000:]
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert "out of memory" not in lines[0]


@pytest.mark.parametrize("index", [2 * 10**9, 2 * 10**7])
def test_libsvm_feature_index_is_refused_before_sizing_anything(tmp_path, index):
    code, _, err, _ = hostile.run_skframe(hostile.libsvm_index(tmp_path, index), tmp_path)
    _one_line_error(code, err, f"feature index {index}", "SKFRAME_MAX_FEATURES")


def test_libsvm_index_within_a_raised_limit_is_read(tmp_path):
    code, out, err, _ = hostile.run_skframe(hostile.libsvm_index(tmp_path, 3000), tmp_path,
                                            env={"SKFRAME_MAX_FEATURES": "4000"})
    assert code == 0, err


def test_npz_deflate_bomb_is_refused_before_inflating(tmp_path):
    code, _, err, _ = hostile.run_skframe(hostile.npz_bomb(tmp_path, 256 << 20), tmp_path)
    _one_line_error(code, err, "'X.npy'", "SKFRAME_MAX_EXPANSION")


@pytest.mark.parametrize("compress, needle", [(zipfile.ZIP_DEFLATED, "SKFRAME_MAX_EXPANSION"),
                                              (zipfile.ZIP_STORED, "does not use")])
def test_model_file_with_an_unused_array_is_refused(tmp_path, compress, needle):
    nbytes = (256 << 20) if compress == zipfile.ZIP_DEFLATED else 4096
    args = hostile.model_with_unused_array(tmp_path, nbytes, compress)
    code, _, err, _ = hostile.run_skframe(args, tmp_path)
    _one_line_error(code, err, needle)


def test_the_model_file_without_the_extra_array_predicts(tmp_path):
    hostile.model_with_unused_array(tmp_path, 4096, zipfile.ZIP_STORED)
    code, out, err, _ = hostile.run_skframe(["predict", tmp_path / "m.skf", tmp_path / "small.csv", "--targets", "1"],
                                            tmp_path)
    assert code == 0 and len(out.splitlines()) == 31, err


def test_molecule_of_1e5_atoms_is_refused_before_rdkit_reads_it(tmp_path):
    pytest.importorskip("rdkit")
    code, _, err, _ = hostile.run_skframe(hostile.smiles_atoms(tmp_path), tmp_path)
    _one_line_error(code, err, "100000 atoms", "line 2", "SKFRAME_MAX_ATOMS")


def test_smiles_field_over_the_csv_limit_is_one_line(tmp_path):
    pytest.importorskip("rdkit")
    code, _, err, _ = hostile.run_skframe(hostile.smiles_field(tmp_path), tmp_path)
    _one_line_error(code, err, "SKFRAME_MAX_FIELD_CHARS", "line 2")
    # a field longer than the csv module's default (131 072) but within the limit reaches the atom check
    code, _, err, _ = hostile.run_skframe(hostile.smiles_field(tmp_path, 140_000), tmp_path)
    _one_line_error(code, err, "140000 atoms", "SKFRAME_MAX_ATOMS")


def test_graph_of_1e7_nodes_is_refused_before_the_kernel_sizes_its_tables(tmp_path):
    code, _, err, _ = hostile.run_skframe(hostile.graph_nodes(tmp_path), tmp_path)
    _one_line_error(code, err, "10000000 nodes", "SKFRAME_MAX_GRAPH_NODES")


def test_json_nested_1e5_deep_is_one_line_in_fit_predict_and_evaluate(tmp_path):
    for args in hostile.graph_depth(tmp_path):
        code, _, err, _ = hostile.run_skframe(args, tmp_path)
        _one_line_error(code, err, "line 2", "nested 100001 levels", "SKFRAME_MAX_JSON_DEPTH")


# ---------------------------------------------------------------------------------------------- Dask clusters
def _scheduler_alone():
    distributed = pytest.importorskip("distributed")
    return distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp", host="127.0.0.1",
                                    dashboard_address=":0", silence_logs=50)


def _data(tmp_path, n):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    path = tmp_path / "d.npy"
    np.save(path, np.c_[X, X.sum(1)])
    return path


def test_dask_scheduler_without_workers_stops_with_one_line(tmp_path):
    with _scheduler_alone() as cluster:
        code, _, err, info = hostile.run_skframe(
            ["fit", _data(tmp_path, 200), "--sketch-size", "20", "--dask-scheduler", cluster.scheduler_address],
            tmp_path, extra_bytes=0, env={"SKFRAME_DASK_WORKER_TIMEOUT": "2"})
    _one_line_error(code, err, "no worker after 2 s", "SKFRAME_DASK_WORKER_TIMEOUT")


def _children(pid):
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry))
    return out


def _workers(pid):
    """The Dask worker processes among ``pid``'s children (not its interrupt watcher, nor multiprocessing's tracker)."""
    out = []
    for child in _children(pid):
        try:
            with open(f"/proc/{child}/cmdline", "rb") as fh:
                if b"spawn_main" in fh.read():
                    out.append(child)
        except OSError:
            continue
    return out


def test_dask_fit_whose_only_worker_dies_stops_with_one_line(tmp_path):
    data = _data(tmp_path, 200_000)
    with _scheduler_alone() as cluster:
        address = cluster.scheduler_address
        worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--no-nanny",
                                   "--nthreads", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            fit = subprocess.Popen([sys.executable, "-m", "skframe", "fit", data, "--sketch-size", "3000",
                                    "--dask-scheduler", address], cwd=tmp_path, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True,
                                   env=dict(os.environ, SKFRAME_DASK_WORKER_TIMEOUT="3"))
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not any(ws.processing for ws in cluster.scheduler.workers.values()):
                time.sleep(0.1)
            worker.kill()
            _, err = fit.communicate(timeout=120)
        finally:
            worker.kill()
            worker.wait()
    _one_line_error(fit.returncode, err, "no worker for 3 s", "SKFRAME_DASK_WORKER_TIMEOUT")


def test_ctrl_c_during_a_local_dask_fit_prints_at_most_one_line(tmp_path):
    pytest.importorskip("distributed")
    data = _data(tmp_path, 200_000)
    held = socket.socket()  # another cluster's default HTTP port, taken: the fit must not mention it
    with contextlib.suppress(OSError):
        held.bind(("", 8787))
        held.listen()
    proc = subprocess.Popen([sys.executable, "-m", "skframe", "fit", data, "--sketch-size", "3000", "--dask-local",
                             "2"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(_workers(proc.pid)) < 2 and proc.poll() is None:
        time.sleep(0.2)
    time.sleep(3)  # the workers are computing
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole process group
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    time.sleep(1)  # anything the workers would still print
    held.close()
    assert proc.returncode != 0 and len(err.strip().splitlines()) <= 1, err[-3000:]
    assert "Traceback" not in err


def test_dask_computation_that_stops_progressing_stops_with_one_error(monkeypatch):
    distributed = pytest.importorskip("distributed")
    import dask

    from skframe.compute._dask_cluster import _compute
    from skframe.exceptions import DistributedError

    monkeypatch.setenv("SKFRAME_DASK_STALL_TIMEOUT", "6")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0",
                                  silence_logs=50) as cluster, distributed.Client(cluster):
        stuck = dask.delayed(time.sleep, pure=False)(12)  # a task that neither finishes nor lets another start
        with pytest.raises(DistributedError, match="no progress for 6 s.*SKFRAME_DASK_STALL_TIMEOUT"):
            _compute(stuck, 0)


def test_gzip_table_expanding_to_2_gib_is_refused_before_it_is_parsed(tmp_path):
    code, _, err, _ = hostile.run_skframe(hostile_tables.gzip_bomb(tmp_path), tmp_path)
    _one_line_error(code, err, "bomb.csv.gz", "SKFRAME_MAX_EXPANSION")


def test_gzip_trailer_claiming_too_much_is_refused_at_once(tmp_path):
    # one member: its trailer says 256 MiB
    args = hostile_tables.gzip_bomb(tmp_path, nbytes=256 << 20, member=256 << 20)
    code, _, err, _ = hostile.run_skframe(args, tmp_path)
    _one_line_error(code, err, "bomb.csv.gz", "SKFRAME_MAX_EXPANSION")


def test_parquet_declaring_a_4_gib_table_is_refused_before_reading_it(tmp_path):
    pytest.importorskip("pyarrow")
    code, _, err, _ = hostile.run_skframe(hostile_tables.parquet_bomb(tmp_path), tmp_path)
    _one_line_error(code, err, "bomb.parquet", "SKFRAME_MAX_EXPANSION")
