"""The executor of a default Newton fit (logistic, multinomial): streamed with the kernel block kept, against the
in-memory executor that forms the features, on the synthetic rows of ``bench_classification_million.py``.

Each part is a fresh process running ``skframe.fit_table((X, y), test=(X_test, y_test))`` at the defaults
(d = 10; binary and 10 classes) from this source tree and, with ``--before-src``, from another one (e.g. a
checkout before the plan streamed Newton fits: ``git worktree add /tmp/before REV`` then ``--before-src
/tmp/before/src``). Reported: the model's fit seconds, the executor and its reason, the chosen λ and the test
log-loss. The table view of the same rule is ``bench_classification_tables.py --tables flights --before-src ...``.

    python benchmarks/bench_classification_executor.py --n 100000 --before-src /tmp/before/src
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import _setup

HERE = Path(__file__).resolve().parent

ONE = """
import json, sys, time
sys.path.insert(0, {here!r})
import bench_classification_million as b  # (its _setup puts this tree's src first on sys.path)
if {src!r}:
    sys.path.insert(0, {src!r})
import skframe
assert {src!r} is None or skframe.__file__.startswith({src!r}), skframe.__file__
X, y = b.data({n}, {kind!r}, 0)
Xt, yt = b.data(20000, {kind!r}, 1)
b.warm_up({kind!r})
model = skframe.fit_table((X, y), test=(Xt, yt))
rep = model.report_
ex = rep.get("execution") or {{}}
lam = (rep.get("chosen") or {{}}).get("lam") or {{}}
print("RESULT " + json.dumps({{"fit_seconds": round(float(rep["fit_seconds"]), 2), "executor": ex.get("executor"),
                              "executor_reason": (ex.get("reasons") or {{}}).get("executor"),
                              "lam": lam.get("chosen") if isinstance(lam, dict) else lam,
                              "test_log_loss": rep["metrics"].get("log_loss")}}))
"""


def run(n, kind, src=None):
    src = str(Path(src).resolve()) if src else None
    load0 = list(os.getloadavg())
    proc = subprocess.run([sys.executable, "-c", ONE.format(here=str(HERE), n=n, kind=kind, src=src)],
                          capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    out = json.loads(lines[-1][7:]) if lines else {"failed": proc.stderr.strip()[-1500:]}
    out.update(load_average_before=load0, load_average_after=list(os.getloadavg()))
    return out


def main():
    ap = _setup.parser(__doc__, n="100000", kinds="binary,multi",
                       out="benchmarks/out/classification_executor.json")
    ap.add_argument("--before-src", default=None, help="another source tree (its src folder) to run beside this one")
    args = ap.parse_args()
    report = {"benchmark": "classification_executor", "versions": _setup.versions(),
              "protocol": __doc__.split("\n\n")[1].replace("\n", " "), "runs": []}
    for n in [int(float(v)) for v in args.n.split(",")]:
        for kind in [k.strip() for k in args.kinds.split(",") if k.strip()]:
            row = {"n": n, "kind": kind, "now": run(n, kind)}
            if args.before_src:
                row["before"] = run(n, kind, args.before_src)
                now, before = row["now"], row["before"]
                if "fit_seconds" in now and "fit_seconds" in before:
                    row["before_over_now_fit_time"] = round(before["fit_seconds"] / now["fit_seconds"], 2)
            report["runs"].append(row)
            _setup.emit(report, args.out)


if __name__ == "__main__":
    main()
