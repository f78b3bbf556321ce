"""The human-readable report of ``skframe fit``."""

from __future__ import annotations

import typer

from skframe.automatic._fit_warnings import fit_warnings
from skframe.automatic._raw_tables import column_table
from skframe.automatic._services import format_metrics
from skframe.automatic._services import format_value as _fmt
from skframe.automatic.chosen import chosen_lines, solver_line
from skframe.cli._explain import execution_line

__all__ = ["print_report", "fit_warnings"]

def print_report(report):
    """Human-readable summary of a fit report."""
    typer.echo(f"model      {report['model']['class']} ({report['task']})")
    d = report["data"]
    rep = d.get("representation")  # molecules or graphs: say what the inputs and outputs are
    shape = (f"features={report['n_features']} targets={report['n_targets']}" if rep is None else
             f"inputs={rep['inputs']}{'+' + rep['featurize'] if rep['featurize'] != 'none' else ''} "
             f"outputs={rep['outputs'] if rep['outputs'] != 'table' else report['n_targets']}")
    scale = f" scale={d['scale']['method']}" if isinstance(d.get("scale"), dict) and rep is None else ""
    typer.echo(f"data       {d.get('name')}: n_train={report['n_train']} n_test={report['n_test']} {shape}{scale}")
    target = d.get("target")
    if target:  # which column(s) are predicted, and how they were chosen (skframe.preprocessing.targets)
        classes = f"; {target['classes']} classes" if target.get("classes") else ""
        typer.echo(f"target     {', '.join(target['names'])} ({target['chosen']}{classes})")
    read = d.get("read")
    if read:
        shown = {k: ("tab" if v == "\t" else v) for k, v in read.items() if k != "header"}
        typer.echo(f"read       {_fmt(shown)}")
    if d.get("column_types"):
        typer.echo("columns    name, type, features, why:")
        for line in column_table(d["column_types"]):
            typer.echo(line)
    unknown = d.get("unknown_categories_test")
    if unknown:
        typer.echo(f"unknown    categories not seen in training (rows of zeros): {_fmt(unknown)}")
    if d.get("task_reason"):
        typer.echo(f"task       {report['task']} ({d['task_reason']})")
    if d.get("suggested_defaults_used"):
        used = d["suggested_defaults_used"]
        shown = {**used.get("kernel_params", {}), **{k: v for k, v in used.items() if k != "kernel_params"}}
        typer.echo(f"defaults   {_fmt(shown)} (the data set's published hyper-parameters)")
    s = report.get("sketch")
    if s:
        nested = {k: v for k, v in s.items() if isinstance(v, dict)}
        flat = {k: v for k, v in s.items() if not isinstance(v, dict) and k != "n"}
        if flat:
            typer.echo(f"sketch     {_fmt(flat)}")
        for k, v in nested.items():
            typer.echo(f"sketch     {k}: {_fmt(v)}")
    if report.get("execution"):
        typer.echo(f"execution  {execution_line(report['execution'])}")
    t = report.get("training")
    if t:
        runs = ", ".join(f"{m['epochs_run']} epochs (best {m['best_epoch']})" if m["best_epoch"] is not None
                         else f"{m['epochs_run']} epochs" for m in t["members"])
        net = " ".join(f"{k}={','.join(map(str, v)) if isinstance(v, (list, tuple)) else v}"
                       for k, v in t["network_params"].items())
        typer.echo(f"training   {t['network']} {net} batch={t['batch_size']} "
                   f"{t['optimizer']} lr={t['learning_rate']:g} {t['lr_schedule']} weight_decay={t['weight_decay']:g} "
                   f"early stopping on {t['validation_metric'] or 'none'} ({t['n_validation']} held out): {runs}")
    if report.get("solver"):
        typer.echo(solver_line(report["solver"]))
    for line in chosen_lines(report.get("chosen")):
        typer.echo(line)
    typer.echo(f"fit        {report['fit_seconds']:.4f} s")
    typer.echo(f"predict    {report['predict_seconds']:.4f} s")
    typer.echo(_metrics_heading(report))
    typer.echo(format_metrics(report["metrics"]))
    for line in report.get("warnings", []):
        typer.echo(f"warning    {line}")
    for row in report.get("lam_path", []):
        typer.echo(f"lam path   lam={row['lam']:.3g}: {_fmt(row['metrics'])}")
    if report.get("lam_path"):
        typer.echo(f"lam kept   {report['lam_kept']:.3g} (the last value of the path)")
    if report.get("interval"):
        typer.echo(interval_line(report["interval"]))
    if report.get("model_path"):
        typer.echo(f"saved      {report['model_path']}")


def _number(value, spec):
    """``value`` formatted with ``spec``; a width the JSON report holds as null (infinite) reads ``inf``."""
    return "inf" if value is None else format(value, spec)


def interval_line(iv):
    """The ``interval`` line of the summary: level, method, coverage, mean width (``inf`` with its reason)."""
    line = (f"interval   {iv['level']:.12g} {iv['method']}: coverage {_number(iv['coverage'], '.4f')}, mean width "
            f"{_number(iv['mean_width'], '.4g')} on the {iv['evaluated_on']} set")
    if iv.get("infinite_rows"):
        top = iv.get("max_finite_level")
        line += (f" (infinite bounds on {iv['infinite_rows']} rows: the calibration rows give finite bounds up to "
                 f"--interval {top:.4g} only; lower the level or give more rows)" if top is not None else
                 f" (infinite bounds on {iv['infinite_rows']} rows)")
    return line + (f" (plot: {iv['png']})" if iv.get("png") else "")


def _metrics_heading(report):
    on = report["evaluated_on"]
    if on == "holdout":
        h = report["data"].get("holdout", {})
        return (f"metrics on {h.get('rows')} held-out training rows (--holdout {h.get('share'):g}; the model kept is "
                "refitted on every row):")
    if on == "approximate leave-one-out":
        h = report["data"].get("holdout", {})
        return (f"metrics on the {h.get('rows')} training rows, each left out (approximate leave-one-out of the one "
                "fit, at the chosen lam):")
    if on == "held-out share":
        h = report["data"].get("holdout", {})
        return (f"metrics on the {h.get('rows')} training rows that lam's path held out (predicted by its fit on the "
                "other rows at the chosen lam; the model kept is fitted on every row):")
    if on == "train":
        return "metrics on the training set (the rows fitted, not a held-out estimate; --holdout 0 or too few rows):"
    return f"metrics on the {on} set:"
