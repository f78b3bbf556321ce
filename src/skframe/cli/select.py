"""``skframe select``: estimate the input and output sketch sizes m_X and m_Y.

The procedure follows El Ahmad et al., *Sketch In, Sketch Out: Accelerating both Learning
and Inference for Structured Prediction with Kernels*, AISTATS 2024.

Approximate leverage scores give the effective dimensions and the size range; the
SIOKR validation curve (under an optional fit-time budget) picks m_X and the
Perfect-h curve (under an optional inference-time budget) picks m_Y. The curves are
printed (or returned as JSON) and written as a PNG with ``--png``. With ``--model dsokr``
only m_Y is chosen (El Ahmad, PhD thesis 2024, §5.3: the input is a neural network).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, List, Optional

import typer

from skframe.cli._common import echo_json, handle_errors, parse_kv, to_jsonable
from skframe.cli._help import help_all_command
from skframe.cli._outputs import check_select_png
from skframe.exceptions import InvalidParameterError


def _sizes(text, option):
    if not text:
        return None
    try:
        out = [int(t) for t in text.split(",") if t.strip()]
    except ValueError as exc:
        raise InvalidParameterError(f"{option} {text!r} must be comma-separated integers, e.g. 50,100,200") from exc
    if not out or min(out) < 1:
        raise InvalidParameterError(f"{option} {text!r} must list positive sizes")
    return sorted(set(out))


def select(
    train: Annotated[Path, typer.Argument(
        help="Training data (CSV, NPZ, ARFF, LIBSVM); a validation part is held out.", metavar="TRAIN")],
    targets: Annotated[int, typer.Option("--targets", help="Number of trailing output columns.")] = 1,
    fmt: Annotated[Optional[str], typer.Option(
        "--format", help="File format when the extension does not tell: csv, npz, arff or libsvm.")] = None,
    input_kernel: Annotated[str, typer.Option("--input-kernel", help="Input kernel name.")] = "gaussian",
    input_kernel_param: Annotated[Optional[List[str]], typer.Option(
        "--input-kernel-param", help="Input kernel parameter KEY=VALUE, repeatable.", metavar="KEY=VALUE")] = None,
    output_kernel: Annotated[str, typer.Option("--output-kernel", help="Output kernel name.")] = "gaussian",
    output_kernel_param: Annotated[Optional[List[str]], typer.Option(
        "--output-kernel-param", help="Output kernel parameter KEY=VALUE, repeatable.", metavar="KEY=VALUE")] = None,
    input_sketch: Annotated[str, typer.Option(
        "--input-sketch", help="Input sketch family for the m_X curve.")] = "subsample",
    output_sketch: Annotated[str, typer.Option(
        "--output-sketch", help="Output sketch family for the m_Y (Perfect h) curve.")] = "subsample",
    lam: Annotated[float, typer.Option("--lam", help="Regularisation lambda (also the leverage-score ridge).")] = 1e-5,
    sizes_x: Annotated[Optional[str], typer.Option(
        "--sizes-x", help="Comma-separated m_X values (default: grow until the score converges).")] = None,
    sizes_y: Annotated[Optional[str], typer.Option(
        "--sizes-y", help="Comma-separated m_Y values (default: grow until the score converges).")] = None,
    fit_budget: Annotated[Optional[float], typer.Option(
        "--fit-budget", help="Stop the m_X curve once a fit takes longer (seconds).")] = None,
    inference_budget: Annotated[Optional[float], typer.Option(
        "--inference-budget", help="Stop the m_Y curve once decoding takes longer (seconds).")] = None,
    val_fraction: Annotated[float, typer.Option(
        "--val-fraction", help="Share of the training rows held out for validation.")] = 0.2,
    repeats: Annotated[int, typer.Option("--repeats", help="Sketch draws averaged per size.")] = 1,
    tol: Annotated[float, typer.Option(
        "--tol", help="Convergence: tolerance relative to the best score.")] = 1e-3,
    scale: Annotated[str, typer.Option("--scale", help="Input scaling: standard or none.")] = "none",
    png: Annotated[Optional[Path], typer.Option(
        "--png", help="Write the curves to this PNG file (needs matplotlib).")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Random seed.")] = 0,
    cv_order: Annotated[str, typer.Option("--cv-order", help="Validation rows: shuffle (seeded) or keep (the last "
                                                             "rows).")] = "shuffle",
    model: Annotated[str, typer.Option("--model", help="sisokr (m_X and m_Y) or dsokr (m_Y only: a network "
                                                       "input).")] = "sisokr",
    perfect_h_metric: Annotated[str, typer.Option("--perfect-h-metric", help="decode or surrogate (for real-valued "
                                                                             "outputs).")] = "decode",
    json_out: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
):
    """Estimate the sketch sizes m_X and m_Y from leverage scores, SIOKR and Perfect-h curves."""
    from skframe.contract.registry import get_kernel  # lazy: reads the plugins' entry points (~15 ms)
    from skframe.datasets import FeatureScaler, load_dataset  # lazy: loads scikit-learn (~0.6 s at start-up)
    from skframe.model_selection.curves import select_sketch_sizes  # lazy: loads scikit-learn (~0.6 s at start-up)
    from skframe.model_selection.plots import plot_selection  # lazy: loads NumPy (~0.1 s at start-up)
    from skframe.models._folds import check_cv_order  # lazy: loads NumPy (~0.1 s at start-up)
    from skframe.validation import check_seed  # lazy: loads NumPy (~0.1 s at start-up)

    if not 0 < val_fraction < 1:
        raise InvalidParameterError(f"--val-fraction {val_fraction} must be in (0, 1)")
    check_seed(seed, "--seed")  # [0, 2**32-1], before the data are read
    cv_order = check_cv_order(cv_order, "--cv-order")
    if png is not None:
        check_select_png(png, train)  # before any work
    ds = load_dataset(str(train), targets=targets, fmt=fmt)
    X = FeatureScaler(scale).fit_transform(ds.X)
    kx = get_kernel(input_kernel, **parse_kv(input_kernel_param, "--input-kernel-param"))
    ky = get_kernel(output_kernel, **parse_kv(output_kernel_param, "--output-kernel-param"))
    res = select_sketch_sizes(
        X, ds.Y, input_kernel=kx, output_kernel=ky, lam=lam, sizes_x=_sizes(sizes_x, "--sizes-x"),
        sizes_y=_sizes(sizes_y, "--sizes-y"), input_sketch=input_sketch, output_sketch=output_sketch,
        val_fraction=val_fraction, fit_budget=fit_budget, inference_budget=inference_budget, n_repeats=repeats,
        tol=tol, random_state=seed, model=model.lower(), perfect_h_metric=perfect_h_metric.lower(),
        cv_order=cv_order,
    )
    report = res.as_dict()
    if png is not None:
        report["png"] = str(plot_selection(res, png))
    if json_out:
        echo_json(to_jsonable(report))
        return
    dsokr = not res.input_curve
    typer.echo(f"effective dimension  outputs {res.d_eff_y:.1f}" if dsokr else
               f"effective dimension  inputs {res.d_eff_x:.1f}   outputs {res.d_eff_y:.1f}")
    for name, curve in (("m_X  (SIOKR, -surrogate MSE)", res.input_curve), ("m_Y  (Perfect h)", res.output_curve)):
        if not curve:  # DSOKR: no m_X curve
            continue
        typer.echo(f"{name}: stopped: {curve['stopped']}")
        for m, s, t in zip(curve["sizes"], curve["scores"], curve["seconds"]):
            typer.echo(f"  {m:>7d}  score {s: .6g}  {t:.3f}s")
    typer.echo(f"validation  {res.validation}")
    typer.echo(f"chosen  m_Y = {res.m_y}" if dsokr else f"chosen  m_X = {res.m_x}   m_Y = {res.m_y}")
    if png is not None:
        typer.echo(f"curves written to {png}")


select = help_all_command(handle_errors(select))  # --help-all: as every command (skframe.cli._help)


def register(app):
    """Add the ``select`` command to a Typer app."""
    app.command("select")(select)
