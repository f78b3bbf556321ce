"""Fuzzing of every reader: any input gives a result or ONE skframe error, never another exception."""

import tempfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from skframe.exceptions import DataFormatError, InvalidInputError, InvalidParameterError  # noqa: E402
from skframe.io import iter_chunks, load_dataset  # noqa: E402

ALLOWED = (DataFormatError, InvalidInputError, InvalidParameterError)  # MissingValuesError is an InvalidInputError
FUZZ = settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

_TMP = Path(tempfile.mkdtemp(prefix="skframe-fuzz-"))

_CSV_SEED = b"a,b,y\n1,2,3\n4.5,?,6\n-1e3,2e-2,nan\n"
_SVM_SEED = b"1 1:0.5 3:2\n-1 2:1\n0,2 1:1 qid:3 4:7 # c\n"
_ARFF_SEED = (
    b"@relation r\n@attribute a numeric\n@attribute 'b c' {x,y}\n@attribute t {0,1}\n@data\n"
    b"1.5,x,0\n?,y,1\n{0 2,2 1}\n"
)
_SEEDS = {"csv": _CSV_SEED, "svm": _SVM_SEED, "arff": _ARFF_SEED}


def _check_result(ds):
    X = ds.X.toarray() if sp.issparse(ds.X) else np.asarray(ds.X)
    assert X.ndim == 2 and ds.Y.ndim == 2 and X.shape[0] == ds.Y.shape[0]


def _run(ext, data, **kw):
    path = _TMP / f"f{abs(hash(data)) % 10**9}.{ext}"
    path.write_bytes(data)
    try:
        for missing in ("error", "zero"):
            try:
                _check_result(load_dataset(path, missing=missing, **kw))
            except ALLOWED:
                pass
            if ext in ("csv", "svm"):
                try:
                    for X, Y in iter_chunks(path, rows=2, missing=missing, **kw):
                        assert X.shape[0] == Y.shape[0]
                except ALLOWED:
                    pass
        assert path.read_bytes() == data  # inputs are never modified
    finally:
        path.unlink()


def _mutations():
    """Seeds cut, spliced with random bytes, re-encoded, or with huge numbers and long lines."""
    seed = st.sampled_from(sorted(_SEEDS))

    def build(args):
        kind, how, cut, junk, enc = args
        base = _SEEDS[kind]
        if how == "truncate":
            base = base[: cut % (len(base) + 1)]
        elif how == "splice":
            k = cut % (len(base) + 1)
            base = base[:k] + junk + base[k:]
        elif how == "encode":
            base = base.decode().replace("a", "é").encode(enc)
        elif how == "huge":
            base = base.replace(b"2", b"1e400", 1)
        elif how == "long":
            base = base + b"1," * 5000 + b"2\n"
        return kind, base

    return st.tuples(
        seed,
        st.sampled_from(["truncate", "splice", "encode", "huge", "long"]),
        st.integers(0, 10**6),
        st.binary(max_size=40),
        st.sampled_from(["utf-16", "utf-16-le", "latin-1", "utf-32", "cp1252"]),
    ).map(build)


@FUZZ
@given(data=st.binary(max_size=300), ext=st.sampled_from(["csv", "svm", "arff", "npz", "npy"]))
def test_random_bytes(data, ext):
    _run(ext, data)


@FUZZ
@given(case=_mutations())
def test_mutated_files(case):
    kind, data = case
    _run(kind, data, targets=1)


_CELL = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["?", "", "nan", "1e400", "-1e400", "abc", "'q,r'", '"x"', "0x10", "1_000", " 7 "]),
    st.text(alphabet="0123456789.eE+-", max_size=8),
)


@FUZZ
@given(rows=st.lists(st.lists(_CELL, min_size=1, max_size=4), min_size=1, max_size=6), targets=st.integers(0, 3))
def test_csv_grammar(rows, targets):
    text = "\n".join(",".join(r) for r in rows) + "\n"
    _run("csv", text.encode("utf-8"), targets=targets)


_SVM_TOKEN = st.one_of(
    st.tuples(st.integers(-2, 40), st.floats(allow_nan=True, allow_infinity=True)).map(lambda t: f"{t[0]}:{t[1]!r}"),
    st.sampled_from(["qid:1", "1:?", "x:1", "1:", ":", "99999999999999999999:1", "#", "3:1e400"]),
)


@FUZZ
@given(rows=st.lists(st.tuples(st.sampled_from(["1", "-1", "0,2", "", "a", "1e400", "2.5"]),
                               st.lists(_SVM_TOKEN, max_size=5)), min_size=1, max_size=6))
def test_libsvm_grammar(rows):
    text = "\n".join((lab + " " + " ".join(toks)).strip() for lab, toks in rows) + "\n"
    _run("svm", text.encode("utf-8"))


@FUZZ
@given(rows=st.lists(st.one_of(
    st.lists(st.sampled_from(["1", "0", "?", "x", "y", "z", "1e400", "2.5", ""]), min_size=1, max_size=4).map(",".join),
    st.lists(st.tuples(st.integers(-1, 4), st.sampled_from(["1", "x", "?", "nan", "1e400"])), max_size=4).map(
        lambda items: "{" + ",".join(f"{i} {v}" for i, v in items) + "}"),
), min_size=0, max_size=5))
def test_arff_grammar(rows):
    head = "@relation r\n@attribute a numeric\n@attribute b {x,y}\n@attribute t {0,1}\n@data\n"
    _run("arff", (head + "\n".join(rows) + "\n").encode("utf-8"))



@FUZZ
@given(data=st.one_of(
    st.binary(max_size=200),
    st.lists(st.tuples(st.text(max_size=8), st.sampled_from(["1.5", "x", "1e400", "", "nan"]),
                       st.sampled_from(["train", "test", "val", ""])), max_size=5).map(
        lambda rows: ("smiles,solubility,split\n" + "\n".join(",".join(r) for r in rows) + "\n").encode("utf-8")),
))
def test_solubility_loader(data):
    from skframe.datasets import load_solubility

    home = _TMP / f"home{abs(hash(data)) % 10**9}"
    (home / "molecules").mkdir(parents=True, exist_ok=True)
    path = home / "molecules" / "solubility.csv"
    path.write_bytes(data)
    try:
        ds = load_solubility(data_home=home, verify=False)
        assert ds.X_train.shape == ds.y_train.shape and np.all(np.isfinite(ds.y_train))
    except ALLOWED:
        pass
    finally:
        path.unlink()


# ----------------------------------------------------------------------------- sizes that files claim
def test_size_claiming_mutations_are_refused_within_the_memory_bound(tmp_path):
    """Files whose sizes lie (indices, shapes, zip sizes, deflate bombs, unused model arrays, JSON depth, graph
    nodes, molecule atoms, field lengths), read by every reader and the model loader: a result or one skframe
    error, and never more memory than what the file holds many times over (tests/hostile.py, fuzz_bound).

    A small fixed sample; benchmarks/bench_hostile.py runs the long one."""
    from tests import hostile

    pytest.importorskip("rdkit")
    cases, failures = hostile.run_fuzz(24, 7, tmp_path)
    assert not failures, failures[0]
    assert {c["outcome"] for c in cases} >= {"refused"}


def test_output_destinations_and_wide_files_fuzzed(tmp_path):
    """Output paths of every kind (directories, FIFOs, sockets, links to the input, missing folders...) and wide
    CSV files: a write, a read or one skframe error, never the input replaced, within the memory bound.

    A small fixed sample (wide files up to 10^4 columns); benchmarks/bench_hostile.py runs the long one."""
    from tests import hostile

    cases, failures = hostile.run_path_fuzz(30, 3, tmp_path, max_columns=10**4)
    assert not failures, failures[0]
    assert {c["outcome"] for c in cases} >= {"refused", "written", "read"}
