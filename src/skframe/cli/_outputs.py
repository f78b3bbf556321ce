"""The files a command writes, checked before it reads or fits anything (:mod:`skframe.io.destinations`).

``skframe fit``, ``tune``, ``select`` and ``predict`` call one function here first: a destination that
is a directory, a device, a FIFO, a socket, one of the command's own input files or in a folder that
does not accept a file ends the command at once, in one line, before any work; so does an optional library
that the options or the files will need (:func:`fit_dependencies`, checked by :func:`skframe.deps.check`).
"""

from __future__ import annotations

from skframe.deps import check

__all__ = ["check_fit_outputs", "check_predict_out", "check_select_png", "fit_dependencies"]


def _check(outputs, inputs):
    from skframe.io.destinations import check_destinations  # lazy: skframe.io loads SciPy's sparse matrices

    return check_destinations(outputs, inputs)


def fit_dependencies(opts):
    """``(library, option)`` pairs of the optional libraries that fit (or tune) options will import."""
    from skframe.io.formats import file_dependencies  # lazy: skframe.io loads SciPy's sparse matrices

    needs = [("matplotlib", "--png")] if getattr(opts, "png", None) else []
    for path in (opts.train, opts.test):
        if path is not None:
            needs += file_dependencies(path, opts.format)
    train = str(opts.train or "").lower()
    molecules = (opts.featurize is not None or opts.inputs == "smiles" or opts.outputs == "smiles"
                 or train.endswith(".sdf") or (opts.inputs == "graphs" and not train.endswith(".jsonl")))
    if molecules and opts.train is not None:
        needs.append(("rdkit", "molecule inputs or outputs (SMILES, SDF)"))
    if opts.model == "dsokr":
        needs.append(("torch", "--model dsokr"))
    if str(opts.backend).lower() == "cupy":
        needs.append(("cupy", "--backend cupy"))
    if getattr(opts, "dask_scheduler", None) is not None or getattr(opts, "dask_local", None) is not None:
        needs += [("dask", "--dask-scheduler / --dask-local"), ("distributed", "--dask-scheduler / --dask-local")]
    return needs


def check_fit_outputs(opts):
    """The optional libraries fit (or tune) options need (:func:`fit_dependencies`), then ``--model-out`` and
    ``--png`` against the files the command reads."""
    check(fit_dependencies(opts))
    inputs = [("the training file", opts.train), ("--test", opts.test), ("--candidates", opts.candidates)]
    _check([("--model-out", opts.model_out), ("--png", getattr(opts, "png", None), (".png",))], inputs)


def check_predict_out(out, model, data):
    """``skframe predict --out``: not the model file, not DATA, a ``.csv`` or ``.npz`` file in a writable folder."""
    _check([("--out", out, (".csv", ".npz"))], [("the model file", model), ("DATA", data)])


def check_select_png(png, train):
    """``skframe select --png``: a ``.png`` file in a writable folder, not the training file."""
    _check([("--png", png, (".png",))], [("the training file", train)])
