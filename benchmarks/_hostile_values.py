"""Sections of bench_hostile.py about values: refusals in one line (``values``) and CQR's cost (``cqr``).

``values``: Parquet and CSV integers beyond 2**53, ``--memory-budget 1.5`` (no unit), seeds outside [0, 2**32-1],
``SKFRAME_*`` variables that are no whole number (``1e30``, ``1.5`` bytes, words), a coverage whose miscoverage rounds
to 1; each row: exit status, the error line, the command's time and peak memory above the loaded interpreter (the cap of
tests/hostile.py).

``cqr``: ``skframe fit`` on generated rows (5 features, heteroscedastic noise) without intervals and with ``--interval
0.9 --interval-method cqr`` (``lam="auto"``, the default), at ``CQR_ROWS`` rows: seconds, peak memory, the ratio to the
plain fit and the held-out coverage the report gives.
"""

import sys
from pathlib import Path

import numpy as np

from tests import hostile

#: rows of the CQR timing
CQR_ROWS = (20_000,)


def _row(name, args, folder, env=None, extra_bytes=hostile.EXTRA_BYTES, timeout=600, **extra):
    code, out, err, info = hostile.run_skframe(args, folder, env=env, extra_bytes=extra_bytes, timeout=timeout)
    lines = err.strip().splitlines()
    row = {"case": name, "returncode": code, "stderr_lines": len(lines), "error": lines[-1][:400] if lines else "",
           "traceback": "Traceback" in err, "seconds": round(info.get("seconds", float("nan")), 3),
           "rss_above_mb": round(info.get("rss_above_bytes", 0) / 2**20, 1), **extra}
    print(row, file=sys.stderr)
    return row, out


def _table(path, n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = np.sin(2 * X[:, 0]) + X[:, 1] + (0.2 + 0.3 * np.abs(X[:, 2])) * rng.normal(size=n)
    np.savetxt(path, np.c_[X, y], delimiter=",", header="a,b,c,d,e,y", comments="", fmt="%.6f")
    return Path(path)


def values(folder):
    folder = Path(folder)
    data = _table(folder / "v.csv", 300)
    rows = []
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        big = 2**60 + np.random.default_rng(0).integers(0, 1000, 300)
        pq.write_table(pa.table({"a": np.arange(300.0), "big": pa.array(big, type=pa.int64()),
                                 "y": np.arange(300.0)}), folder / "big.parquet")
        rows.append(_row("Parquet int64 column near 2**60", ["fit", folder / "big.parquet", "--target", "y",
                                                             "--model-out", folder / "m.skf"], folder)[0])
    except ImportError:
        pass
    ids = np.random.default_rng(0).normal(size=(300, 2))
    with open(folder / "ids.csv", "w") as fh:
        fh.write("id,a,y\n" + "".join(f"{2**60 + 1 + i},{a:.4f},{b:.4f}\n" for i, (a, b) in enumerate(ids)))
    rows.append(_row("CSV column of whole numbers near 2**60", ["fit", folder / "ids.csv", "--model-out",
                                                               folder / "m.skf"], folder)[0])
    fit = ["fit", data, "--model-out", folder / "m.skf"]
    rows.append(_row("--memory-budget 1.5 (no unit)", [*fit, "--memory-budget", "1.5"], folder)[0])
    for seed in ("-1", "4294967296"):
        rows.append(_row(f"--seed {seed}", [*fit, "--seed", seed], folder)[0])
    rows.append(_row("--interval 1e-300", [*fit, "--interval", "1e-300"], folder)[0])
    (folder / "mol.csv").write_text("smiles,y\nCCO,1.0\nCCC,2.0\n")
    mol = ["fit", folder / "mol.csv", "--inputs", "smiles", "--input-column", "smiles", "--model-out",
           folder / "m.skf"]
    rows.append(_row("SKFRAME_MAX_FIELD_CHARS=1e30", mol, folder, env={"SKFRAME_MAX_FIELD_CHARS": "1e30"})[0])
    for variable, value in (("SKFRAME_MAX_DECOMPRESSED", "1.5"), ("SKFRAME_MAX_FEATURES", "lots"),
                            ("SKFRAME_NUM_THREADS", "0"), ("SKFRAME_NUMBA_MIN_WORK", "1e400")):
        rows.append(_row(f"{variable}={value}", fit, folder, env={variable: value})[0])
    return rows


def _coverage(out):
    for line in out.splitlines():
        if "coverage" in line:
            return line.strip()[:200]
    return None


def cqr(folder, rows_list=CQR_ROWS):
    folder = Path(folder)
    out = []
    for n in rows_list:
        data = _table(folder / f"cqr{n}.csv", n)
        plain, _ = _row(f"fit, {n} rows", ["fit", data, "--model-out", folder / "p.skf"], folder, extra_bytes=0,
                        timeout=1800, rows=n)
        with_cqr, text = _row(f"fit --interval 0.9 --interval-method cqr, {n} rows",
                              ["fit", data, "--interval", "0.9", "--interval-method", "cqr", "--model-out",
                               folder / "q.skf"], folder, extra_bytes=0, timeout=1800, rows=n)
        with_cqr["coverage_line"] = _coverage(text)
        with_cqr["times_the_plain_fit"] = round(with_cqr["seconds"] / max(plain["seconds"], 1e-9), 2)
        out += [plain, with_cqr]
    return out


SECTIONS = {"values": values, "cqr": cqr}
