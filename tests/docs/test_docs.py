"""Every shell command and Python snippet of README.md and docs/ runs, and states what it gives.

Code blocks are found by their fence (```python, ```bash). An HTML comment on the line just above a block
changes how it is run::

    <!-- docs-test: skip -->                 not run (e.g. an install command or a sketch of a plugin file)
    <!-- docs-test: data -->                 needs the real benchmark data (skframe.datasets); skipped without it
    <!-- docs-test: needs torch -->          needs an optional module (here PyTorch); skipped without it
    <!-- docs-test: expect metrics.arrmse < 0.6 -->   the last command's --json output must satisfy this

Shell blocks of one page run in order in one temporary directory that holds small data files
(``train.csv``, ``test.csv``, ``new.csv``, ``multi.csv`` with 3 targets, ``adjacency.csv``; molecules:
``molecules.csv``, ``molecules-test.csv``, ``candidates.smi``, ``graphs.jsonl`` and, with RDKit, ``molecules.sdf``),
so a model written by one command is read by the next. ``pip``
commands are not run: installing is the test run's own first step.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"(?P<pre>(?:<!--[^\n]*-->\s*\n)?)```(?P<lang>python|bash)\n(?P<body>.*?)```", re.S)
DATA_DIR = Path(os.environ.get("SKFRAME_DATA", ROOT.parent / "shared" / "data"))


def _blocks(page):
    text = page.read_text(encoding="utf-8")
    for i, m in enumerate(FENCE.finditer(text)):
        marker = m.group("pre").strip()
        opts = marker[len("<!-- docs-test:"): -len("-->")].strip() if marker.startswith("<!-- docs-test:") else ""
        yield i, m.group("lang"), m.group("body"), opts


def _have_data():
    return (DATA_DIR / "rf1" / "rf1-train.arff").exists()


def _env(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    env["SKFRAME_DATA"] = str(DATA_DIR)
    os.environ.setdefault("SKFRAME_DATA", str(DATA_DIR))  # for $SKFRAME_DATA in documented commands
    env.setdefault("MPLBACKEND", "Agg")
    env.pop("SKFRAME_DEBUG", None)
    return env


def _write_small_data(where):
    """train.csv / test.csv (Friedman-like, header, last column = target) and new.csv (features only)."""
    rng = np.random.default_rng(0)

    def make(n):
        X = rng.uniform(size=(n, 5))
        y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4]
        return X, y + rng.normal(scale=0.5, size=n)

    header = ",".join([f"x{j}" for j in range(5)] + ["y"])
    for name, n in (("train.csv", 300), ("test.csv", 200)):
        X, y = make(n)
        np.savetxt(where / name, np.column_stack([X, y]), delimiter=",", header=header, comments="", fmt="%.6f")
    X, _ = make(50)
    np.savetxt(where / "new.csv", X, delimiter=",", header=",".join(f"x{j}" for j in range(5)), comments="",
               fmt="%.6f")
    # multi.csv: 3 related targets (last 3 columns) and adjacency.csv: a chain graph between them
    X, y = make(200)
    Y = np.column_stack([y, y + rng.normal(scale=0.5, size=y.size), 0.5 * y])
    np.savetxt(where / "multi.csv", np.column_stack([X, Y]), delimiter=",", fmt="%.6f",
               header=",".join([f"x{j}" for j in range(5)] + ["y0", "y1", "y2"]), comments="")
    np.savetxt(where / "adjacency.csv", np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]]), delimiter=",", fmt="%d")
    _write_molecule_data(where)


# small molecules with a made-up property (longer chains up, more oxygens down); the last 6 are the test set
MOLECULES = [("CCO", 0.5), ("CCCO", 0.9), ("CCCCO", 1.4), ("CCCCCO", 1.9), ("CCCCCCO", 2.4), ("c1ccccc1", 2.1),
             ("c1ccccc1O", 1.5), ("Cc1ccccc1", 2.6), ("CCc1ccccc1", 3.1), ("CC(=O)O", -0.2), ("CCC(=O)O", 0.3),
             ("CCCC(=O)O", 0.8), ("CCN", 0.1), ("CCCN", 0.6), ("CCCCN", 1.1), ("OCCO", -1.0), ("OCCCO", -0.6),
             ("C1CCCCC1", 3.0), ("CCOC", 0.8), ("CC(C)O", 0.6), ("CCCCCN", 1.6), ("Oc1ccccc1C", 2.0),
             ("CCCCC(=O)O", 1.3), ("OCCCCO", -0.1)]


def _write_molecule_data(where):
    """molecules.csv / molecules-test.csv (smiles,y), candidates.smi, graphs.jsonl and molecules.sdf (with RDKit)."""
    import json

    train, test = MOLECULES[:18], MOLECULES[18:]
    for name, rows in (("molecules.csv", train), ("molecules-test.csv", test)):
        (where / name).write_text("smiles,y\n" + "".join(f"{s},{y}\n" for s, y in rows))
    (where / "candidates.smi").write_text("".join(s + "\n" for s, _ in MOLECULES))
    try:
        from rdkit import Chem, RDLogger
    except ImportError:  # the pages' molecule commands need RDKit anyway
        return
    RDLogger.DisableLog("rdApp.*")
    sdf = Chem.SDWriter(str(where / "molecules.sdf"))
    with open(where / "graphs.jsonl", "w", encoding="utf-8") as fh:
        for s, y in MOLECULES:
            mol = Chem.MolFromSmiles(s)
            bonds = list(mol.GetBonds())
            fh.write(json.dumps({"nodes": [a.GetSymbol() for a in mol.GetAtoms()],
                                 "edges": [[b.GetBeginAtomIdx(), b.GetEndAtomIdx()] for b in bonds],
                                 "edge_labels": [str(b.GetBondType()).lower() for b in bonds], "y": y}) + "\n")
            mol.SetProp("logS", str(y))
            sdf.write(mol)
    sdf.close()


def _commands(body):
    """Shell commands of a block: continuations joined, comments dropped, split on '&&'."""
    joined = re.sub(r"\\\n\s*", " ", body)
    for line in joined.splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        for part in line.split("&&"):
            part = part.strip()
            if part:
                yield part


def _check_expect(expect, output):
    m = re.fullmatch(r"([\w.]+)\s*(<=|>=|<|>)\s*([-\d.e+]+)", expect.strip())
    assert m, f"unreadable expectation {expect!r}"
    key, op, bound = m.group(1), m.group(2), float(m.group(3))
    start = output.find("{")
    value = json.loads(output[start:])
    for part in key.split("."):
        value = value[part]
    ok = {"<": value < bound, "<=": value <= bound, ">": value > bound, ">=": value >= bound}[op]
    assert ok, f"documented result {key} = {value} does not satisfy {expect}"


_WARM = []  # the warm interpreter of this test session (tests/docs/_warm.py), started at the first command


def _launch(argv, cwd, env, timeout=600):
    """``subprocess.run(argv, ...)`` with text output; a Python command runs as a fork of a warm interpreter."""
    if not _WARM and hasattr(os, "fork"):
        from tests.docs._warm import WarmInterpreter

        _WARM.append(WarmInterpreter(env))
        atexit.register(_WARM[0].close)
    if _WARM and _WARM[0].fits(argv, env):
        return _WARM[0].run(argv, cwd, env, timeout)
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _run_shell(cmd, cwd, env):
    argv = [os.path.expandvars(a) if "$" in a else a for a in shlex.split(cmd)]
    if argv[0] in ("pip", "git", "cd") or argv[:3] == ["python", "-m", "pip"] or "pytest" in argv:
        return None
    if argv[0] == "skframe":
        argv = [sys.executable, "-m", "skframe"] + argv[1:]
    elif argv[0] == "python":
        argv = [sys.executable] + [str(ROOT / a) if a.endswith(".py") and (ROOT / a).exists() else a
                                   for a in argv[1:]]
    else:
        pytest.fail(f"documented command {cmd!r} is neither skframe, python nor pip: teach tests/docs/test_docs.py")
    t0 = time.perf_counter()
    res = _launch(argv, cwd, env)
    if os.environ.get("SKFRAME_DOCS_TIMES"):  # where the documentation's commands spend the suite's time
        with open(os.environ["SKFRAME_DOCS_TIMES"], "a", encoding="utf-8") as fh:
            fh.write(f"{time.perf_counter() - t0:.2f}\t{cmd}\n")
    assert res.returncode == 0, f"`{cmd}` failed ({res.returncode}):\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
    return res.stdout


def _missing_module(opts):
    """The first module named by ``needs MODULE`` in a block's marker that cannot be imported, else None."""
    import importlib.util

    for name in re.findall(r"\bneeds (\w+)", opts):
        try:
            if importlib.util.find_spec(name) is None:
                return name
        except ImportError:  # an import hook that refuses the module (e.g. an environment that blocks it)
            return name
    return None


def _page_id(page):
    return str(page.relative_to(ROOT))


OUTPUTS = {}  # (page, index of the block on its page) -> its output, for tests/docs/test_documented_figures.py


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_shell_commands(page, tmp_path):
    blocks = [b for b in _blocks(page) if b[1] == "bash"]
    if not blocks:
        pytest.skip("no shell commands")
    _write_small_data(tmp_path)
    env = _env(tmp_path)
    ran = 0
    for index, _, body, opts in blocks:
        if "skip" in opts or ("data" in opts and not _have_data()) or _missing_module(opts):
            continue
        out = None
        for cmd in _commands(body):
            out = _run_shell(cmd, tmp_path, env) or out
            ran += 1
        OUTPUTS[page, index] = out  # every command of the block succeeded: its figures need not run it again
        expect = re.search(r"expect (.+)$", opts)
        if expect and out is not None:
            _check_expect(expect.group(1), out)
    if not ran:
        pytest.skip("every command needs data that is not here")


PY_BLOCKS = [(page, i, body, opts) for page in PAGES for i, lang, body, opts in _blocks(page) if lang == "python"]


@pytest.mark.parametrize("page,index,body,opts", PY_BLOCKS,
                         ids=[f"{_page_id(p)}#{i}" for p, i, _, _ in PY_BLOCKS])
def test_python_snippet(page, index, body, opts, tmp_path):
    if "skip" in opts:
        pytest.skip("marked skip")
    if "data" in opts and not _have_data():
        pytest.skip("needs the benchmark data")
    if _missing_module(opts):
        pytest.skip(f"needs {_missing_module(opts)}")
    _write_small_data(tmp_path)
    script = tmp_path / "snippet.py"
    script.write_text(body, encoding="utf-8")
    res = _launch([sys.executable, str(script)], tmp_path, _env(tmp_path))
    assert res.returncode == 0, f"{_page_id(page)} block {index} failed:\n{res.stdout[-2000:]}\n{res.stderr[-3000:]}"
    OUTPUTS[page, index] = res.stdout
