"""The files a command writes, checked before it reads or fits anything (:mod:`skframe.io.destinations`).

``skframe fit``, ``tune``, ``select`` and ``predict`` call one function here first: a destination that
is a directory, a device, a FIFO, a socket, one of the command's own input files or in a folder that
does not accept a file ends the command at once, in one line, before any work.
"""

from __future__ import annotations

__all__ = ["check_fit_outputs", "check_predict_out", "check_select_png"]


def _check(outputs, inputs):
    from skframe.io.destinations import check_destinations  # lazy: skframe.io loads SciPy's sparse matrices

    return check_destinations(outputs, inputs)


def check_fit_outputs(opts):
    """``--model-out`` (and ``--png`` of ``skframe tune``) of fit options, against the files the command reads."""
    inputs = [("the training file", opts.train), ("--test", opts.test), ("--candidates", opts.candidates)]
    _check([("--model-out", opts.model_out), ("--png", getattr(opts, "png", None), (".png",))], inputs)


def check_predict_out(out, model, data):
    """``skframe predict --out``: not the model file, not DATA, a ``.csv`` or ``.npz`` file in a writable folder."""
    _check([("--out", out, (".csv", ".npz"))], [("the model file", model), ("DATA", data)])


def check_select_png(png, train):
    """``skframe select --png``: a ``.png`` file in a writable folder, not the training file."""
    _check([("--png", png, (".png",))], [("the training file", train)])
