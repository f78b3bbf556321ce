"""Values a careless user or an attacker gives: each is refused in one line that names it and the fix, or handled
exactly; never a traceback, never a silently rounded or misread number, never a misleading message.

Integers beyond float64's exact range in Parquet/Arrow files; seeds outside [0, 2**32-1]; every ``SKFRAME_*`` size,
limit and count variable read by one parser (whole numbers, units for bytes; fractions, ``inf``, ``1e30`` refused);
a coverage level whose miscoverage rounds to 1; out-of-memory lines worded after where memory ran out; CQR with
``lam="auto"`` at the cost of a few fits. All data come from fixed seeds.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from skframe.exceptions import DataFormatError, InvalidParameterError
from skframe.limits import LARGEST, LIMITS, limit, out_of_memory, parse_count


def _cli(args, monkeypatch=None, env=None):
    from typer.testing import CliRunner

    from skframe.cli import app

    for key, value in (env or {}).items():
        monkeypatch.setenv(key, value)
    return CliRunner().invoke(app, [str(a) for a in args])


def _one_error(result, *fragments):
    """The one ``Error:`` line of a failed command (no traceback), holding every fragment."""
    text = result.output
    assert result.exit_code != 0, text
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in text, text
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), text
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def _csv(path, n=120, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, 3))
    np.savetxt(path, np.c_[X, X @ [1.0, 2.0, -1.0]], delimiter=",", header="a,b,c,y", comments="", fmt="%.6f")
    return path


# ------------------------------------------------------------------ integers beyond 2**53 in Parquet and Arrow
def _big_int_table(tmp_path, fmt, offset=2**60):
    pa = pytest.importorskip("pyarrow")
    rng = np.random.default_rng(0)
    a = rng.normal(size=50)
    big = (offset + rng.integers(0, 1000, 50)).astype(np.int64)
    table = pa.table({"a": a, "big": pa.array(big, type=pa.int64()), "y": a * 2})
    path = tmp_path / f"t.{fmt}"
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, path)
    else:
        import pyarrow.feather as feather

        feather.write_feather(table, path)
    return path, big


@pytest.mark.parametrize("fmt", ["parquet", "feather"])
def test_integers_beyond_2_53_are_refused_never_rounded(tmp_path, fmt):
    from skframe.io.table import read_table

    path, big = _big_int_table(tmp_path, fmt)
    with pytest.raises(DataFormatError) as info:
        read_table(path)
    text = str(info.value)
    assert "column 'big'" in text and str(int(np.abs(big).max())) in text and "2**53" in text, text
    assert "--column-types big=categorical" in text, text


def test_integers_up_to_2_53_are_read_exactly(tmp_path):
    from skframe.io.table import read_table

    path, big = _big_int_table(tmp_path, "parquet", offset=2**53 - 1000)
    big = np.minimum(big, 2**53)
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"big": pa.array(big, type=pa.int64()), "y": np.arange(50.0)}), path)
    col = read_table(path).columns[0]
    assert np.array_equal(col.astype(np.int64), big)


def test_the_command_line_refuses_a_big_integer_column_in_one_line(tmp_path):
    path, _ = _big_int_table(tmp_path, "parquet")
    _one_error(_cli(["fit", path, "--target", "y", "--model-out", tmp_path / "m.skf"]), "column 'big'", "2**53")
    assert not (tmp_path / "m.skf").exists()


# ------------------------------------------------------------------ seeds
@pytest.mark.parametrize("seed", ["-1", "4294967296"])
def test_a_seed_outside_the_range_is_one_line(tmp_path, seed):
    data = _csv(tmp_path / "d.csv")
    _one_error(_cli(["fit", data, "--seed", seed, "--model-out", tmp_path / "m.skf"]),
               f"--seed {seed}", "[0, 2**32-1]", "e.g. --seed 0")


@pytest.mark.parametrize("seed", [-1, 2**32, 1.5])
def test_the_conformal_wrapper_validates_its_random_state(seed):
    from sklearn.linear_model import LinearRegression

    from skframe.uncertainty import ConformalRegressor

    X = np.random.default_rng(0).normal(size=(40, 2))
    with pytest.raises(InvalidParameterError, match=r"random_state=.*\[0, 2\*\*32-1\]"):
        ConformalRegressor(LinearRegression(), random_state=seed).fit(X, X[:, 0])


def test_library_functions_drawing_from_a_seed_validate_it():
    from skframe.contract.registry import get_kernel
    from skframe.core.leverage import approximate_leverage_scores

    X = np.random.default_rng(0).normal(size=(30, 2))
    with pytest.raises(InvalidParameterError, match="random_state=-1"):
        approximate_leverage_scores(get_kernel("gaussian", gamma=0.5), X, 1e-3, random_state=-1)


# ------------------------------------------------------------------ the environment variables: one parser
VARIABLES = [lim.env for lim in LIMITS.values()] + ["SKFRAME_NUM_THREADS", "SKFRAME_NUMBA_MIN_WORK"]


def _read(variable):
    from skframe.core.engine import numba_min_work
    from skframe.core.threads import available_cores

    if variable == "SKFRAME_NUM_THREADS":
        return available_cores()
    if variable == "SKFRAME_NUMBA_MIN_WORK":
        return numba_min_work()
    return limit(next(name for name, lim in LIMITS.items() if lim.env == variable))


@pytest.mark.parametrize("variable", VARIABLES)
@pytest.mark.parametrize("value", ["1e30", "1.5", "abc", "inf", "-3", "1e-3"])
def test_every_variable_refuses_nonsense_in_one_line_naming_it(monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    with pytest.raises(InvalidParameterError) as info:
        _read(variable)
    text = str(info.value)
    assert f"{variable}='{value}'" in text and f"e.g. {variable}=" in text and "\n" not in text, text


@pytest.mark.parametrize("variable", VARIABLES)
def test_every_variable_reads_whole_numbers_in_any_notation(monkeypatch, variable):
    for text, value in (("3", 3), ("2e1", 20), ("1_000", 1000), (" 12 ", 12)):
        monkeypatch.setenv(variable, text)
        got = _read(variable)
        assert got == (min(value, os.cpu_count() or value) if variable == "SKFRAME_NUM_THREADS" else value) or (
            variable == "SKFRAME_NUM_THREADS" and got <= value)


def test_sizes_in_bytes_take_units_but_never_a_fraction_of_a_byte(monkeypatch):
    monkeypatch.setenv("SKFRAME_MAX_DECOMPRESSED", "1.5")
    with pytest.raises(InvalidParameterError, match="not a whole number of bytes"):
        limit("decompressed")
    for text, value in (("1.5KiB", 1536), ("2GB", 2 * 10**9), ("16 GiB", 16 << 30), ("0.5MB", 500_000)):
        monkeypatch.setenv("SKFRAME_MAX_DECOMPRESSED", text)
        assert limit("decompressed") == value
    assert parse_count("X", str(LARGEST)) == LARGEST


def test_a_huge_field_limit_is_refused_in_one_line_by_the_command_line(tmp_path, monkeypatch):
    (tmp_path / "mol.csv").write_text("smiles,y\nCCO,1.0\nCCC,2.0\n")
    line = _one_error(_cli(["fit", tmp_path / "mol.csv", "--inputs", "smiles", "--input-column", "smiles",
                            "--model-out", tmp_path / "m.skf"], monkeypatch, {"SKFRAME_MAX_FIELD_CHARS": "1e30"}),
                      "SKFRAME_MAX_FIELD_CHARS='1e30'")
    assert "2**63 - 1" in line


def test_the_field_limit_accepts_the_largest_value():
    env = dict(os.environ, SKFRAME_MAX_FIELD_CHARS=str(LARGEST))
    code = "from skframe.io.molecules import _csv_rows\nimport sys\nprint(len(_csv_rows(sys.argv[1])))"
    path = os.path.join(os.path.dirname(__file__), "..", "pyproject.toml")
    out = subprocess.run([sys.executable, "-c", code, path], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stderr == "", out.stderr


# ------------------------------------------------------------------ coverage levels
def test_a_coverage_whose_miscoverage_rounds_to_one_names_the_value(tmp_path):
    data = _csv(tmp_path / "d.csv")
    line = _one_error(_cli(["fit", data, "--interval", "1e-300", "--model-out", tmp_path / "m.skf"]),
                      "--interval 1e-300", "coverage must be in (0, 1)", "e.g. --interval 0.9")
    assert "alpha" not in line


# ------------------------------------------------------------------ out of memory, worded after where
def test_out_of_memory_while_reading_names_the_file_not_the_sketch(tmp_path, monkeypatch):
    from skframe.io import table

    data = _csv(tmp_path / "d.csv")

    def exhausted(*args, **kwargs):
        raise MemoryError()

    monkeypatch.setattr(table, "split_line", exhausted)
    line = _one_error(_cli(["fit", data, "--model-out", tmp_path / "m.skf"]), "while reading 'd.csv'",
                      f"({os.path.getsize(data)} bytes on disk)", "iter_chunks")
    assert "sketch" not in line


def test_out_of_memory_while_fitting_says_the_sketch_size(tmp_path, monkeypatch):
    from skframe.models import SketchedKernelRidge

    data = _csv(tmp_path / "d.csv")

    def exhausted(self, *args, **kwargs):
        raise MemoryError()

    monkeypatch.setattr(SketchedKernelRidge, "fit", exhausted)
    line = _one_error(_cli(["fit", data, "--model-out", tmp_path / "m.skf"]), "out of memory", "--sketch-size")
    assert "reading" not in line


def test_out_of_memory_in_a_model_file_reader_says_model_file():
    ns = {"__name__": "skframe.persistence.fake"}
    exec("def load(path):\n    raise MemoryError()\n", ns)
    try:
        ns["load"]("/nonexistent/m.skf")
    except MemoryError as exc:
        text = out_of_memory(exc)
    assert "model file 'm.skf'" in text and "sketch" not in text


# ------------------------------------------------------------------ CQR at the cost of a few fits
def test_cqr_with_lam_auto_costs_a_few_fits_and_still_covers(monkeypatch):
    from skframe.models import JointQuantileRegressor
    from skframe.models.machine import _common
    from skframe.uncertainty import ConformalRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(1400, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] + (0.2 + 0.3 * np.abs(X[:, 2])) * rng.normal(size=1400)
    solves = []
    original = _common.run_solver

    def counted(*args, **kwargs):
        solves.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(_common, "run_solver", counted)
    base = JointQuantileRegressor(lam="auto", sketch_size=40, random_state=0)
    model = ConformalRegressor(base, method="cqr", alpha=0.1, random_state=0).fit(X[:1000], y[:1000])
    assert len(solves) <= 2, len(solves)  # one pinball fit (a search: 3 folds x 8 values + 1)
    info = model.cqr_lam_[0]
    assert info["criterion"] == "square loss" and info["chosen"] == model.quantile_estimators_[0].lam > 0
    lo, hi = model.predict_interval(X[1000:])
    covered = np.mean((y[1000:] >= lo) & (y[1000:] <= hi))
    assert covered >= 0.85, covered


def test_cqr_fits_its_quantile_models_on_a_bounded_number_of_rows(monkeypatch):
    from skframe.models import JointQuantileRegressor
    from skframe.uncertainty import ConformalRegressor, conformal

    rng = np.random.default_rng(1)
    n = 3000
    X = rng.normal(size=(n, 2))
    y = np.sin(2 * X[:, 0]) + (0.2 + 0.3 * np.abs(X[:, 1])) * rng.normal(size=n)
    seen = []
    original = JointQuantileRegressor.fit

    def recorded(self, X_fit, *args, **kwargs):
        seen.append(X_fit.shape[0])
        return original(self, X_fit, *args, **kwargs)

    monkeypatch.setattr(JointQuantileRegressor, "fit", recorded)
    monkeypatch.setattr(conformal, "CQR_ROWS", 800)  # "auto": the cap (2**15 rows by default)
    base = JointQuantileRegressor(lam=1e-3, sketch_size=40, random_state=0)
    model = ConformalRegressor(base, method="cqr", alpha=0.1, random_state=0).fit(X[:2000], y[:2000])
    assert seen == [800] and model.n_quantile_rows_ == 800 and model.n_calibration_ == 1200  # 500 + the other 700
    lo, hi = model.predict_interval(X[2000:])
    assert np.mean((y[2000:] >= lo) & (y[2000:] <= hi)) >= 0.86
    big_sketch = ConformalRegressor(JointQuantileRegressor(sketch_size=10**6), method="cqr")
    assert big_sketch._quantile_rows(1500) == conformal.CQR_FEATURE_BYTES // (16 * 10**6) == 33  # features' bytes
    explicit = ConformalRegressor(base, method="cqr", quantile_rows=5000, random_state=0)
    assert explicit.fit(X[:2000], y[:2000]).n_quantile_rows_ == 1500  # never more than the rows left
    with pytest.raises(InvalidParameterError, match="quantile_rows=0 must be 'auto' or a positive whole number"):
        ConformalRegressor(base, method="cqr", quantile_rows=0).fit(X[:200], y[:200])
