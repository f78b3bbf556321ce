"""``skframe tune``: choose λ and the kernel's parameters by cross-validation, then refit the best model.

Every option of ``skframe fit`` is an option of ``tune`` and means the same (the options are
:class:`skframe.cli._options.FitOptions`' fields, and the data, the task and the estimator come
from :func:`skframe.cli.fit.prepare`), except three whose values become a grid:

* ``--lam`` takes a list ``1e-6,1e-4,1e-2`` or a log range ``START:STOP:COUNT`` (``COUNT``
  values spaced evenly on a log scale, both ends included), or both, comma-separated;
* ``--kernel-param NAME=VALUES`` (and ``--input-kernel-param``, ``--output-kernel-param`` of the
  structured task): one value is fixed, a list or a range is searched;
* an axis that is not given comes from :func:`skframe.model_selection.default_param_grid`
  (γ around the median-distance heuristic, λ on a log grid), and the report says so.

The search is :class:`skframe.model_selection.KernelSearchCV`: the λ path of each grid block is
solved by the estimator's shortcut (see the tuning page of the documentation). The Dask options
and ``--explain`` of ``fit`` describe one fit and are not options of ``tune``.
"""

# No ``from __future__ import annotations``: Typer reads the Annotated types at run time.
import contextlib
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Optional

import typer

from skframe.automatic._services import format_metrics
from skframe.automatic._services import format_value as _fmt
from skframe.cli._common import progress_bar, to_jsonable
from skframe.cli._options import KV, FitOptions, _kv, _opt, echo_report, options_command
from skframe.cli._outputs import check_fit_outputs
from skframe.cli._tune_grid import KERNEL_OPTIONS, _looks_like_range, build_grid, parse_grid_values, parse_lam_grid
from skframe.cli.fit import _params, evaluate_model, prepare, save_model
from skframe.exceptions import InvalidParameterError

__all__ = ["tune", "TuneOptions", "parse_grid_values", "parse_lam_grid", "run_tune"]

TUNING = "Tuning"
SHARING = ("auto", "fold", "shared")
@dataclass
class TuneOptions(FitOptions):
    """Everything ``skframe tune`` was asked to do (see ``skframe tune --help``)."""

    # -- fit's options that read differently here (same names, help saying how) -------
    test: Annotated[Optional[Path], _opt("--test", "Test data in the same format: the refitted best model is "
                                         "scored on it.", "Data")] = None
    kernel_param: Annotated[KV, _kv("--kernel-param", "One value is fixed; a list (gamma=1e-3,1e-2) or a log range "
                                                      "START:STOP:COUNT is searched.", "Kernel")] = None
    lam: Annotated[Optional[str], _opt("--lam", "Lambdas searched: 1e-6,1e-4 or a log range START:STOP:COUNT (default: "
                                                "a grid).", "Loss and solver",
                                       show_default=False, metavar="LAMS")] = None
    input_kernel_param: Annotated[KV, _kv("--input-kernel-param", "NAME=VALUES: a value, a list or a log range "
                                                                  "START:STOP:COUNT.", "Structured outputs")] = None
    output_kernel_param: Annotated[KV, _kv("--output-kernel-param", "NAME=VALUES: a value, a list or a log range "
                                                                    "START:STOP:COUNT.",
                                            "Structured outputs")] = None
    model_out: Annotated[Optional[Path], _opt("--model-out", "Save the best model, refitted on the whole training "
                                                             "file, to this file.", "Output")] = None
    # -- fit's options that describe one fit: not options of tune -----------------------
    explain: bool = False
    dask_scheduler: Optional[str] = None
    dask_local: Optional[int] = None
    # -- tuning -------------------------------------------------------------------------
    cv: Annotated[int, _opt("--cv", "Cross-validation folds (stratified for a classifier; see "
                                    "--cv-order).", TUNING)] = 5
    shuffle: Annotated[Optional[bool], _opt("--shuffle/--no-shuffle", "Deprecated: --cv-order shuffle or keep.",
                                            TUNING, show_default=False, hidden=True)] = None
    scoring: Annotated[Optional[str], _opt("--scoring", "Score to maximise: a scikit-learn scorer (r2, accuracy, ...; "
                                                        "default: the model's).", TUNING, show_default=False)] = None
    sketch_sharing: Annotated[str, _opt("--sketch-sharing", "fold (a sketch per fold), shared (one for all) or auto "
                                                            "(shared from 20000 rows).",
                                        TUNING)] = "auto"
    n_jobs: Annotated[Optional[int], _opt("--n-jobs", "Folds solved in parallel threads (default 1).", TUNING,
                                          show_default=False)] = None
    png: Annotated[Optional[Path], _opt("--png", "Write the CV score as a PNG: curves (one parameter searched) or "
                                        "a heat map (two); needs matplotlib.", "Output", show_default=False)] = None
    # -- not options ------------------------------------------------------------------
    lam_grid: Optional[list] = None  # the --lam values, parsed
    kernel_axes: dict = field(default_factory=dict)  # {estimator parameter: {name: [values]}}

    def __post_init__(self):
        super().__post_init__()
        self.png = str(self.png) if self.png is not None else None
        if self.cv < 2:
            raise InvalidParameterError(f"--cv {self.cv} must be >= 2: the number of folds")
        self.sketch_sharing = str(self.sketch_sharing).lower()
        if self.sketch_sharing not in SHARING:
            raise InvalidParameterError(f"--sketch-sharing {self.sketch_sharing!r} is not one of "
                                        f"{', '.join(SHARING)}")
        if self.shuffle is not None:  # the flag before --cv-order: its two values name the two orders
            order = "shuffle" if self.shuffle else "keep"
            if self.cv_order != "shuffle" and self.cv_order != order:
                raise InvalidParameterError(f"--shuffle/--no-shuffle contradicts --cv-order {self.cv_order}; "
                                            "give --cv-order alone")
            typer.echo(f"note: --{'' if self.shuffle else 'no-'}shuffle is deprecated; use --cv-order {order}",
                       err=True)
            self.cv_order = order
        if self.n_jobs is not None and self.n_jobs < 1:
            raise InvalidParameterError(f"--n-jobs {self.n_jobs} must be >= 1")
        if self.lam is not None:
            self.lam_grid = parse_lam_grid(self.lam)
            self.lam = None  # the estimator is built with its default; the grid sets λ
        for name, (option, _) in KERNEL_OPTIONS.items():
            given = getattr(self, name)
            axes = {k: parse_grid_values(v, f"{option} {k}") for k, v in given.items()
                    if isinstance(v, list) or _looks_like_range(v)}
            if axes:
                self.kernel_axes[name] = axes
                setattr(self, name, {k: v for k, v in given.items() if k not in axes})  # the fixed values

    def gave_kernel_params(self):
        """True when a kernel option was given (fixed or searched): the default γ axis is then not added."""
        return bool(self.kernel_axes) or any(getattr(self, name) for name in KERNEL_OPTIONS)


def _column_values(params, columns):
    """``{column name: value}`` of one grid point (``cv_results_["params"][i]``)."""
    out = {}
    for name, param, key in columns:
        value = params.get(param)
        out[name] = value.get(key) if key is not None and isinstance(value, dict) else value
    return out


class _Progress:
    """The tuner's ``progress(done, total)``, called after each grid block with the grid points done so far,
    driving a progress bar (None off a terminal and with ``--json``)."""

    def __init__(self, advance):
        self.advance = advance
        self.done = 0

    def __call__(self, done, total):
        if self.advance is not None and done > self.done:
            self.advance(done - self.done)
        self.done = done


def _n_blocks(grid):
    """Grid blocks: the combinations of every parameter but λ (one λ path each)."""
    return math.prod(len(v) for k, v in grid.items() if k != "lam")


def _n_points(grid):
    return math.prod(len(v) for v in grid.values())


def _failures(search):
    """The first failure messages of the search's blocks."""
    return [e for block in (search.search_info_ or {}).get("blocks", []) for e in block.get("errors", [])]


def run_tune(opts):
    """Run ``skframe tune`` from options; returns the JSON-serialisable report."""
    from skframe.contract.loader import get_plugin_registry  # lazy: reads the plugins' entry points (~15 ms)

    check_fit_outputs(opts)  # before any work: --model-out and --png
    get_plugin_registry()  # discovery is a cost of the process, not of the search
    with contextlib.ExitStack() as stack:
        return _run_tune(opts, stack)


def _run_tune(opts, stack):
    import numpy as np  # lazy: NumPy costs ~0.1 s at start-up

    # lazy: the tuner loads scikit-learn and the models (~0.6 s at start-up)
    from skframe.model_selection import KernelSearchCV, default_param_grid
    from skframe.model_selection._search_grid import median_gamma  # lazy: as above

    gave_kernel = opts.gave_kernel_params()  # before prepare() applies a data set's suggested parameters
    prep = prepare(opts, stack)
    model, X, y = prep.model, prep.X_fit, prep.y_fit
    if X.shape[0] < opts.cv:
        raise InvalidParameterError(f"--cv {opts.cv} needs at least {opts.cv} training rows; the file has "
                                    f"{X.shape[0]}")
    grid, columns, defaulted = build_grid(opts, model, lambda: default_param_grid(model, X, y), gave_kernel)
    heuristic = median_gamma(X) if any(p.endswith("kernel_params") for p in defaulted) else None
    search = KernelSearchCV(model, grid, cv=opts.cv, scoring=opts.scoring, refit=True, n_jobs=opts.n_jobs,
                            sketch_sharing=opts.sketch_sharing, random_state=opts.seed, cv_order=opts.cv_order)
    with progress_bar(_n_points(grid), "grid points", enabled=not opts.json) as advance:
        search.set_params(progress=_Progress(advance))
        t0 = time.perf_counter()
        weights = getattr(opts, "sample_weight_values", None)  # --sample-weight COLUMN: every fold and the refit
        search.fit(X, y, **({} if weights is None else {"sample_weight": weights}))
        search_seconds = time.perf_counter() - t0
    search.set_params(progress=None)
    res = search.cv_results_
    if not np.isfinite(res["mean_test_score"]).any():
        first = (_failures(search) or ["no message"])[0]
        raise InvalidParameterError(f"every grid point failed; the first: {first}")
    n_points = len(res["params"])
    splits = np.array([res[f"split{k}_test_score"] for k in range(search.n_splits_)]).T
    best = search.best_estimator_
    report = {
        "task": prep.task,
        "n_train": int(prep.X_train.shape[0]),
        "n_test": int(prep.X_test.shape[0]) if prep.X_test is not None else 0,
        "cv": {"n_splits": int(search.n_splits_), "order": opts.cv_order, "shuffle": opts.cv_order == "shuffle",
               "folds": search.search_info_["folds"], "splitter": search.search_info_["splitter"],
               "scoring": opts.scoring or "score", "sketch_sharing": search.search_info_["sketch_sharing"]},
        "grid": {"columns": [c[0] for c in columns], "n_points": n_points, "n_blocks": _n_blocks(grid),
                 "from_default": defaulted, "gamma_heuristic": heuristic,
                 "points": [_column_values(p, columns) for p in res["params"]]},
        "scores": {"mean": res["mean_test_score"], "std": res["std_test_score"], "rank": res["rank_test_score"],
                   "splits": splits, "failed": ~np.isfinite(splits).all(axis=1)},
        "best": {"index": int(search.best_index_), "score": float(search.best_score_),
                 "params": _column_values(search.best_params_, columns)},
        "timings": {"search_seconds": search_seconds, "refit_seconds": float(search.refit_time_),
                    "mean_fit_time": res["mean_fit_time"], "mean_score_time": res["mean_score_time"]},
        "search_info": getattr(search, "search_info_", None),
        "model": {"class": type(best).__name__, "params": _params(best)},
        "data": prep.data_info,
    }
    if prep.X_test is not None:
        metrics, predict_seconds, _ = evaluate_model(best, prep, opts)
        report.update({"metrics": metrics, "evaluated_on": "test", "predict_seconds": predict_seconds})
    if opts.png:
        from skframe.model_selection.plots import plot_cv_scores  # lazy: loads NumPy (~0.1 s at start-up)

        plot_cv_scores(report["grid"]["points"], res["mean_test_score"], res["std_test_score"], opts.png,
                       best_index=search.best_index_, score_name=report["cv"]["scoring"])
        report["png"] = opts.png
    if opts.model_out:
        report["model_path"] = save_model(best, prep, opts)
    return to_jsonable(report)


def _cell(value):
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def print_report(report):
    """The grid's table (mean ± std of the CV score per point, the best marked), the choice, the test scores."""
    d = report["data"]
    cv = report["cv"]
    typer.echo(f"model      {report['model']['class']} ({report['task']})")
    scale = f" scale={d['scale']['method']}" if isinstance(d.get("scale"), dict) else ""
    typer.echo(f"data       {d.get('name')}: n_train={report['n_train']} n_test={report['n_test']}{scale}")
    grid = report["grid"]
    score = "the model's own score" if cv["scoring"] == "score" else cv["scoring"]
    sketch = "one sketch per fold" if cv["sketch_sharing"] == "fold" else "one sketch shared by the folds"
    typer.echo(f"search     {grid['n_points']} points ({grid['n_blocks']} blocks) x {cv['folds']}, "
               f"{score}, {sketch}")
    if grid["from_default"]:
        heuristic = grid.get("gamma_heuristic")
        extra = f"; gamma heuristic {heuristic:.4g} (median distance)" if isinstance(heuristic, float) else ""
        typer.echo(f"defaults   {', '.join(grid['from_default'])} from the default grid{extra}")
    names = grid["columns"]
    rows = [[_cell(p[n]) for n in names] for p in grid["points"]]
    scores = report["scores"]
    texts = ["failed" if m is None else f"{m:.6g} ± {s:.2g}" if s is not None else f"{m:.6g}"
             for m, s in zip(scores["mean"], scores["std"])]
    widths = [max(len(n), *(len(r[j]) for r in rows)) for j, n in enumerate(names)]
    score_width = max(len("mean ± std"), *(len(t) for t in texts))
    header = "  ".join(n.rjust(w) for n, w in zip(names, widths))
    typer.echo(f"\n   {header}  {'mean ± std'.rjust(score_width)}  rank")
    best = report["best"]["index"]
    for i, (row, text, rank) in enumerate(zip(rows, texts, scores["rank"])):
        mark = " *" if i == best else "  "
        cells = "  ".join(c.rjust(w) for c, w in zip(row, widths))
        typer.echo(f"{mark} {cells}  {text.rjust(score_width)}  {rank:>4}")
    typer.echo("")
    typer.echo(f"best       {_fmt(report['best']['params'])}: CV {cv['scoring']} {report['best']['score']:.6g}")
    t = report["timings"]
    typer.echo(f"time       search {t['search_seconds']:.3f} s, refit {t['refit_seconds']:.3f} s")
    if report.get("metrics"):
        typer.echo("metrics of the refitted best model on the test set:")
        typer.echo(format_metrics(report["metrics"]))
    if report.get("png"):
        typer.echo(f"figure     {report['png']}")
    if report.get("model_path"):
        typer.echo(f"saved      {report['model_path']}")


def tune(**options):
    """Choose λ and the kernel's parameters by cross-validation and refit the best model."""
    opts = TuneOptions(**options)
    echo_report(run_tune(opts), opts.json, print_report)


tune = options_command(tune, TuneOptions)
