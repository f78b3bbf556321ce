"""Hostile files: every size-claiming file at its full size, and a long fuzz run of every reader and the model loader.

Part one runs ``skframe`` on each file in a child process capped at the interpreter with its libraries loaded
plus 200 MB (tests/hostile.py), and reports the exit status, the error line, the command's wall time (libraries
loaded before) and its peak resident memory above the loaded interpreter; a Dask scheduler without workers is
one more case. Part two reads ``--fuzz-n`` files whose sizes lie (tests/hostile.py, ``fuzz_case``) in this
process: each must give a result or one skframe error, within ``fuzz_bound`` of tracemalloc peak.

Part three, one section per promise (``--sections``): outputs never replace what the command reads (``outputs``), a
model file's compressed arrays bounded together and non-regular model paths (``model_total``), a million columns
(``wide``), precomputed-kernel models without their Gram file (``precomputed``), peers that do not speak Dask
(``dask_handshake``) and one line for every error (``errors``); ``path_fuzz`` fuzzes output destinations and wide
files (``--path-fuzz-n`` cases). Data loss (benchmarks/_hostile_dataloss.py): outputs re-pointed at an input in the
save window (``repointed``), files cut short (``truncated``), a model naming its Gram file (``gram_reference``).
Values (benchmarks/_hostile_values.py): one-line refusals of integers beyond 2**53, seeds, ``SKFRAME_*`` variables
and coverage levels (``values``); CQR's time against the plain fit (``cqr``, no memory cap). Bounds before work
(benchmarks/_hostile_bounds.py, ``bounds``, under a cap of + 2 GiB): long cells, wide tables, many labels, FIFOs,
model-file extra arrays, Parquet and Arrow files that decode to far more than they declare, gzip text.
Each row: exit status, error line, the command's time and peak memory above the loaded interpreter, under the
same cap (the wide files: + 1 GiB, their names being Python objects).

Usage: ``python benchmarks/bench_hostile.py [--sections all] [--fuzz-n 1000] [--path-fuzz-n 60] [--seed 0]
[--out benchmarks/out/hostile.json]``. Sections not run keep their previous results in the JSON file.
"""

import json
import os
import socket
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers

sys.path.insert(0, str(_setup.ROOT))
from _hostile_bounds import SECTIONS as BOUNDS  # noqa: E402
from _hostile_dataloss import SECTIONS as DATALOSS  # noqa: E402
from _hostile_values import SECTIONS as VALUES  # noqa: E402

from tests import hostile  # noqa: E402


def _case(name, args, folder, env=None, extra_bytes=hostile.EXTRA_BYTES):
    code, _, err, info = hostile.run_skframe(args, folder, env=env, extra_bytes=extra_bytes, timeout=600)
    lines = err.strip().splitlines()
    row = {"case": name, "returncode": code, "stderr_lines": len(lines), "error": lines[-1][:400] if lines else "",
           "seconds": round(info.get("seconds", float("nan")), 3),
           "rss_above_mb": round(info.get("rss_above_bytes", 0) / 2**20, 1)}
    print(row, file=sys.stderr)
    return row


def repros(folder):
    folder = Path(folder)
    rows = [_case("libsvm feature index 2e9 (37-byte file)", hostile.libsvm_index(folder, 2 * 10**9), folder),
            _case("libsvm feature index 2e7", hostile.libsvm_index(folder, 2 * 10**7), folder),
            _case("npz deflate bomb (2 GiB of X)", hostile.npz_bomb(folder), folder),
            _case("model file with an unused 2 GiB deflated array",
                  hostile.model_with_unused_array(folder), folder),
            _case("SMILES of 1e5 atoms", hostile.smiles_atoms(folder), folder),
            _case("SMILES field of 140 000 characters", hostile.smiles_field(folder, 140_000), folder),
            _case("SMILES field over 1 MiB", hostile.smiles_field(folder), folder),
            _case("JSONL graph of 1e7 nodes, shortest-path kernel", hostile.graph_nodes(folder), folder)]
    for args in hostile.graph_depth(folder):
        rows.append(_case(f"JSONL nested 1e5 deep ({args[0]})", args, folder))
    try:
        import distributed
    except ImportError:
        return rows
    import numpy as np

    np.save(folder / "d.npy", np.c_[np.ones((200, 3)), np.arange(200.0)])
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp", host="127.0.0.1",
                                  dashboard_address=":0", silence_logs=50) as cluster:
        rows.append(_case("Dask scheduler without workers (SKFRAME_DASK_WORKER_TIMEOUT=5)",
                          ["fit", folder / "d.npy", "--sketch-size", "20", "--dask-scheduler",
                           cluster.scheduler_address], folder, env={"SKFRAME_DASK_WORKER_TIMEOUT": "5"},
                          extra_bytes=0))
    return rows


# ----------------------------------------------------------------------------------------------- one section a promise
def _small_data(folder, n=300, name="normal.csv"):
    import numpy as np

    X = np.random.default_rng(0).normal(size=(n, 4))
    np.savetxt(Path(folder, name), np.c_[X, X.sum(1)], delimiter=",")
    return name


def _model(folder, data="normal.csv", out="m.skf"):
    code, _, err, _ = hostile.run_skframe(["fit", data, "--model-out", out], folder, extra_bytes=0)
    assert code == 0, err
    return out


def outputs(folder):
    folder = Path(folder, "outputs")
    folder.mkdir()
    data = _small_data(folder)
    _small_data(folder, 200_000, "big.csv")  # a long fit: the checks come before it
    model = _model(folder)
    os.mkfifo(folder / "pipe.skf")
    (folder / "dir.csv").mkdir()
    os.symlink(data, folder / "link.csv")
    return [_case("fit --model-out the training file", ["fit", data, "--model-out", data], folder),
            _case("fit --model-out a symbolic link to the training file", ["fit", data, "--model-out", "link.csv"],
                  folder),
            _case("predict --out DATA", ["predict", model, data, "--targets", "1", "--out", data], folder),
            _case("fit --model-out a FIFO", ["fit", data, "--model-out", "pipe.skf"], folder),
            _case("predict --out a directory", ["predict", model, data, "--targets", "1", "--out", "dir.csv"], folder),
            _case("fit of 200 000 rows --model-out in a missing folder",
                  ["fit", "big.csv", "--sketch-size", "2000", "--model-out", "missing/m.skf"], folder),
            _case("tune --png out.txt", ["tune", data, "--png", "out.txt"], folder)]


def model_total(folder):
    sys.path.insert(0, str(_setup.ROOT))
    from tests.test_hostile_paths import _rewrite_model  # the same file as the test

    folder = Path(folder, "model_total")
    folder.mkdir()
    data = _small_data(folder)
    _rewrite_model(folder / _model(folder), folder / "deflated.skf", compress=True)
    return [_case("model file whose compressed arrays exceed SKFRAME_MAX_DECOMPRESSED=4kB together",
                  ["predict", "deflated.skf", data, "--targets", "1"], folder,
                  env={"SKFRAME_MAX_DECOMPRESSED": "4kB"}),
            _case("predict /dev/zero", ["predict", "/dev/zero", data, "--targets", "1"], folder)]


def wide(folder):
    folder = Path(folder, "wide")
    folder.mkdir()
    n = 10**6
    with open(folder / "wide.csv", "w") as fh:
        fh.write(",".join(f"c{j}" for j in range(n)) + "\n")
        fh.write(",".join("1" for _ in range(n)) + "\n" + ",".join("2" for _ in range(n)) + "\n")
    m = 900_000
    with open(folder / "wide.arff", "w") as fh:
        fh.write("@relation wide\n" + "".join(f"@attribute a{j} numeric\n" for j in range(m)) + "@data\n")
        fh.write(f"{{0 1,5 2,{m - 1} 1}}\n{{3 1,{m - 1} 2}}\n{{1 1,{m - 1} 3}}\n")
    extra = 1 << 30
    return [_case("fit a CSV of 10^6 named columns, one dropped by name",
                  ["fit", "wide.csv", "--sketch", "none", "--drop", "c7", "--model-out", "w.skf"], folder,
                  extra_bytes=extra),
            _case("predict on it (columns matched by name)", ["predict", "w.skf", "wide.csv", "--targets", "1",
                                                              "--drop", "c7"], folder, extra_bytes=extra),
            _case("fit a sparse ARFF of 900 000 attributes", ["fit", "wide.arff", "--sketch", "none"], folder,
                  extra_bytes=extra)]


def precomputed(folder):
    import numpy as np

    folder = Path(folder, "precomputed")
    folder.mkdir()
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(2000, 3))
    np.save(folder / "gram.npy", np.exp(-((Z[:, None] - Z[None]) ** 2).sum(-1)))
    ids, y = np.arange(2000), Z.sum(1)
    np.savetxt(folder / "tr.csv", np.c_[ids[:1500], y[:1500]], delimiter=",", header="id,y", comments="")
    np.savetxt(folder / "te.csv", np.c_[ids[1500:], y[1500:]], delimiter=",", header="id,y", comments="")
    rows = [_case("fit --kernel precomputed (a 2000 x 2000 Gram file)",
                  ["fit", "tr.csv", "--kernel", "precomputed", "--kernel-param", "gram=gram.npy", "--sketch",
                   "subsample", "--sketch-size", "100", "--scale", "none", "--model-out", "m.skf"], folder)]
    first = hostile.run_skframe(["predict", "m.skf", "te.csv", "--targets", "1"], folder)[1]
    (folder / "gram.npy").unlink()
    rows.append(_case("predict once the Gram file is deleted", ["predict", "m.skf", "te.csv", "--targets", "1",
                                                                  "--out", "p.csv"], folder))
    rows[-1]["same_predictions"] = (folder / "p.csv").read_text() == first
    return rows


class _Peer:
    """A loopback listener that accepts and stays silent, or answers ``reply``."""

    def __init__(self, reply=None):
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


def dask_handshake(folder):
    try:
        import distributed  # noqa: F401
    except ImportError:
        return []
    folder = Path(folder, "dask")
    folder.mkdir()
    data = _small_data(folder)
    rows = []
    for name, reply in (("a listener that never speaks (SKFRAME_DASK_WORKER_TIMEOUT=5)", None),
                        ("a peer answering HTTP bytes", b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello" * 20)):
        peer = _Peer(reply)
        try:
            rows.append(_case(name, ["fit", data, "--dask-scheduler", peer.address], folder,
                              env={"SKFRAME_DASK_WORKER_TIMEOUT": "5"}))
        finally:
            peer.close()
    rows.append(_case("--dask-scheduler foo://bar", ["fit", data, "--dask-scheduler", "foo://bar"], folder))
    return rows


BAD_KERNELS = """
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
"""


def errors(folder):
    import numpy as np

    sys.path.insert(0, str(_setup.ROOT))
    from tests.test_hostile_paths import _drop_a_row, _five, _rewrite_model

    folder = Path(folder, "errors")
    folder.mkdir()
    data = _small_data(folder)
    model = _model(folder)
    _rewrite_model(folder / model, folder / "rows.skf", _drop_a_row)
    _rewrite_model(folder / model, folder / "five.skf", _five)
    X = np.random.default_rng(0).normal(size=(50, 3))
    np.savetxt(folder / "big_y.csv", np.c_[X, 1e160 * X.sum(1)], delimiter=",")
    (folder / "sm.csv").write_text("smiles,y\n" + "X" * 100_000 + ",1.0\nCCO,2.0\nCCN,3.0\n")
    lines = (folder / data).read_text().splitlines()
    (folder / "dup.csv").write_text("a,b,a,c,y\n" + "\n".join(lines) + "\n")
    plugin = folder / "plugin"
    plugin.mkdir()
    (plugin / "skf_bad_kernels.py").write_text(BAD_KERNELS)
    info = plugin / "skf_bad_kernels-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: skf-bad-kernels\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[skframe]\nbad = skf_bad_kernels\n")
    with_plugin = {"PYTHONPATH": os.pathsep.join([str(plugin), os.environ.get("PYTHONPATH", "")])}
    rows = [_case("SKFRAME_MAX_FEATURES=inf", ["fit", data], folder, env={"SKFRAME_MAX_FEATURES": "inf"}),
            _case("model file with a row of an array dropped (checksums consistent)",
                  ["predict", "rows.skf", data, "--targets", "1"], folder),
            _case('model file with n_features_in_="five"', ["predict", "five.skf", data, "--targets", "1"], folder),
            _case("plugin kernel that raises", ["fit", data, "--kernel", "raising-kernel", "--sketch-size", "10"],
                  folder, env=with_plugin),
            _case("plugin kernel that returns a string", ["fit", data, "--kernel", "text-kernel", "--sketch-size",
                                                          "10"], folder, env=with_plugin),
            _case("targets of 1e160", ["fit", "big_y.csv"], folder),
            _case("an unknown option", ["fit", data, "--bogus"], folder),
            _case("duplicate column names (fit)", ["fit", "dup.csv"], folder),
            _case("duplicate column names (predict)", ["predict", model, "dup.csv", "--targets", "1"], folder)]
    try:
        import rdkit  # noqa: F401
    except ImportError:
        return rows
    rows.append(_case("a bad SMILES of 100 kB", ["fit", "sm.csv", "--inputs", "smiles", "--input-column", "smiles",
                                                 "--featurize", "morgan", "--kernel", "tanimoto", "--sketch", "none"],
                      folder))
    rows[-1]["error_chars"] = len(rows[-1]["error"])
    return rows


SECTIONS = {"outputs": outputs, "model_total": model_total, "wide": wide, "precomputed": precomputed,
            "dask_handshake": dask_handshake, "errors": errors, **DATALOSS, **VALUES, **BOUNDS}
ALL = ("repros", "fuzz", *SECTIONS, "path_fuzz")


def _fuzz_summary(cases, failures, n, seed):
    worst = max(cases, key=lambda c: c["peak_bytes"] / c["bound_bytes"])
    return {
        "n": n, "seed": seed, "failures": failures,
        "outcomes": dict(Counter(c["outcome"] for c in cases)),
        "by_mutation": {f"{k[0]}: {k[1]}": v for k, v in
                        sorted(Counter((c["kind"], c["mutation"]) for c in cases).items())},
        "max_seconds": round(max(c["seconds"] for c in cases), 3),
        "max_peak_mb": round(max(c["peak_bytes"] for c in cases) / 2**20, 1),
        "worst_peak_over_bound": round(worst["peak_bytes"] / worst["bound_bytes"], 4),
        "bound": "tracemalloc peak <= 64 MiB + 32 x file size + 128 B x declared features "
                 "(LIBSVM, ARFF: within the features limit); times under tracemalloc",
    }


def main():
    ap = _setup.parser(__doc__, fuzz_n=1000, path_fuzz_n=60, seed=0, sections="all",
                       out=str(_setup.OUT / "hostile.json"))
    args = ap.parse_args()
    wanted = ALL if args.sections == "all" else tuple(args.sections.split(","))
    unknown = sorted(set(wanted) - set(ALL))
    if unknown:
        ap.error(f"unknown section(s) {unknown}; choose among {', '.join(ALL)}")
    out = Path(args.out)
    report = json.loads(out.read_text()) if out.exists() and wanted != ALL else {}
    report.update({"benchmark": "hostile files",
                   "memory_cap": "RLIMIT_AS = loaded interpreter + 200 MB (repros and sections; wide: + 1 GiB)"})
    with tempfile.TemporaryDirectory(prefix="skframe-hostile-") as folder:
        if "repros" in wanted:
            report["repros"] = repros(folder)
        if "fuzz" in wanted:
            cases, failures = hostile.run_fuzz(args.fuzz_n, args.seed, folder)
            report["fuzz"] = _fuzz_summary(cases, failures, args.fuzz_n, args.seed)
        sections = report.setdefault("sections", {})
        for name, run in SECTIONS.items():
            if name in wanted:
                sections[name] = run(folder)
        if "path_fuzz" in wanted:
            fuzz_dir = Path(folder, "path_fuzz")
            fuzz_dir.mkdir()
            cases, failures = hostile.run_path_fuzz(args.path_fuzz_n, args.seed, fuzz_dir)
            report["path_fuzz"] = _fuzz_summary(cases, failures, args.path_fuzz_n, args.seed)
    report["versions"] = _setup.versions()
    _setup.emit(report, args.out)


if __name__ == "__main__":
    main()
