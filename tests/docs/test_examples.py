"""The runnable example scripts work on small data, and say clearly when their data are missing."""

import hashlib
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _run(script, args, monkeypatch):
    monkeypatch.setattr(sys, "argv", [script, *args])
    try:
        runpy.run_path(str(EXAMPLES / script), run_name="__main__")
    except SystemExit as exc:
        return exc.code or 0
    return 0


@pytest.mark.parametrize("script, args", [("quickstart.py", ["--n", "1500"]),
                                          ("robust_regression.py", ["--n", "1500"])])
def test_example_runs(script, args, monkeypatch, capsys):
    assert _run(script, args, monkeypatch) == 0
    out = capsys.readouterr().out
    assert "rel. MSE" in out


def test_bibtex_example_without_data_exits_cleanly(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SKFRAME_DATA", str(tmp_path / "empty"))
    assert _run("multilabel_bibtex.py", [], monkeypatch) == 3
    err = capsys.readouterr().err
    assert "bibtex-train.arff" in err and "mulan.sourceforge.net" in err and "Traceback" not in err


def test_bibtex_example_on_tiny_fake_data(tmp_path, monkeypatch, capsys, rng):
    from skframe.datasets import published

    head = "@relation b\n" + "".join(f"@attribute f{j} {{0,1}}\n" for j in range(1836)) + "".join(
        f"@attribute l{j} {{0,1}}\n" for j in range(159)
    ) + "@data\n"
    table = dict(published.PUBLISHED)
    for part, n in (("train", 30), ("test", 10)):
        rows = []
        for _ in range(n):
            feats = sorted(rng.choice(1836, size=12, replace=False))
            labels = sorted(rng.choice(4, size=2, replace=False) + 1836)
            rows.append("{" + ",".join(f"{j} 1" for j in [*feats, *labels]) + "}")
        p = tmp_path / "bibtex" / f"bibtex-{part}.arff"
        p.parent.mkdir(exist_ok=True)
        p.write_text(head + "\n".join(rows) + "\n")
        rel = f"bibtex/bibtex-{part}.arff"
        table[rel] = (hashlib.sha256(p.read_bytes()).hexdigest(), table[rel][1])
    monkeypatch.setattr(published, "PUBLISHED", table)
    assert _run("multilabel_bibtex.py", ["--data-dir", str(tmp_path)], monkeypatch) == 0
    out = capsys.readouterr().out
    assert "IOKR" in out and "SISOKR" in out and "F1" in out
    assert np.isfinite(float(out.split("F1 ")[1].split()[0]))
