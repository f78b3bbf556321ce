"""Hostile files: every size-claiming file at its full size, and a long fuzz run of every reader and the model loader.

Part one runs ``skframe`` on each file in a child process capped at the interpreter with its libraries loaded
plus 200 MB (tests/hostile.py), and reports the exit status, the error line, the command's wall time (libraries
loaded before) and its peak resident memory above the loaded interpreter; a Dask scheduler without workers is
one more case. Part two reads ``--fuzz-n`` files whose sizes lie (tests/hostile.py, ``fuzz_case``) in this
process: each must give a result or one skframe error, within ``fuzz_bound`` of tracemalloc peak.

Usage: ``python benchmarks/bench_hostile.py [--fuzz-n 1000] [--seed 0] [--out benchmarks/out/hostile.json]``.
"""

import sys
import tempfile
from collections import Counter
from pathlib import Path

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers

sys.path.insert(0, str(_setup.ROOT))
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


def main():
    args = _setup.parser(__doc__, fuzz_n=1000, seed=0, out=str(_setup.OUT / "hostile.json")).parse_args()
    with tempfile.TemporaryDirectory(prefix="skframe-hostile-") as folder:
        rows = repros(folder)
        cases, failures = hostile.run_fuzz(args.fuzz_n, args.seed, folder)
    worst = max(cases, key=lambda c: c["peak_bytes"] / c["bound_bytes"])
    report = {
        "benchmark": "hostile files",
        "memory_cap": "RLIMIT_AS = loaded interpreter + 200 MB (repros)",
        "repros": rows,
        "fuzz": {
            "n": args.fuzz_n, "seed": args.seed, "failures": failures,
            "outcomes": dict(Counter(c["outcome"] for c in cases)),
            "by_mutation": {f"{k[0]}: {k[1]}": v for k, v in
                            sorted(Counter((c["kind"], c["mutation"]) for c in cases).items())},
            "max_seconds": round(max(c["seconds"] for c in cases), 3),
            "max_peak_mb": round(max(c["peak_bytes"] for c in cases) / 2**20, 1),
            "worst_peak_over_bound": round(worst["peak_bytes"] / worst["bound_bytes"], 4),
            "bound": "tracemalloc peak <= 64 MiB + 32 x file size + 128 B x declared features "
                     "(LIBSVM, ARFF: within the features limit); times under tracemalloc",
        },
        "versions": _setup.versions(),
    }
    _setup.emit(report, args.out)


if __name__ == "__main__":
    main()
