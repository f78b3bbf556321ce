"""``skframe fit --explain``: how a fit would run, and why, without fitting.

The estimator the command built is asked for its execution plan
(:meth:`skframe.models._base.KernelModelMixin.execution_plan`, made by
:func:`skframe.compute.plan.plan_fit`) on the data the command loaded: executor
(in-memory, streamed, Dask), backend, engine, chunk rows, precision, BLAS threads,
memory budget and sketch size, each with its reason. A fit reports the same plan under
``execution`` (its ``execution_``); :func:`execution_line` is its one-line summary.
"""

from __future__ import annotations

import typer

from skframe.exceptions import InvalidParameterError

__all__ = ["explain_report", "print_explain", "execution_line"]


def explain_report(model, X, y, task, data_info):
    """The ``--explain`` report: the plan of fitting ``model`` on ``(X, y)``, as JSON types."""
    if not hasattr(model, "execution_plan"):
        raise InvalidParameterError(f"--explain describes regression and kernel-machine fits; {type(model).__name__} "
                                    "(structured prediction) makes no execution plan: drop --explain")
    plan = model.execution_plan(X, y)
    return {"task": task, "model": {"class": type(model).__name__}, "data": data_info,
            "n_train": int(plan.n), "n_features": plan.n_features, "execution": plan.to_dict(),
            "explain": plan.explain()}


def print_explain(report):
    """The plan of an ``--explain`` report, one choice per line with its reason."""
    typer.echo(f"model      {report['model']['class']} ({report['task']})")
    typer.echo(f"data       {report['data'].get('name')}: n_train={report['n_train']} "
               f"features={report['n_features']}")
    typer.echo("plan (nothing fitted):")
    for line in report["explain"]:
        typer.echo(f"  {line}")


def execution_line(execution):
    """One line for a fit report: ``streamed, numpy backend, numba engine, chunks of 4000 rows, budget 12 GB``."""
    from skframe.compute.memory import format_bytes  # lazy: NumPy, which the report's start-up does not load

    parts = [str(execution.get("executor")), f"{execution.get('backend')} backend",
             f"{execution.get('engine')} engine"]
    if execution.get("chunk_rows"):
        parts.append(f"chunks of {execution['chunk_rows']} rows")
    if execution.get("memory_budget"):
        parts.append(f"budget {format_bytes(execution['memory_budget'])} ({execution.get('budget_source')})")
    return ", ".join(parts)
