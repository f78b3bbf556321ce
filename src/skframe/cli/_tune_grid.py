"""The grids of ``skframe tune``: ranges and lists of values on the command line, and the grid they make.

``--lam 1e-8:1e-2:7`` (seven values, log-spaced), ``--kernel-param gamma=1e-3:1e-1:3`` or a comma-separated list
become the axes of the grid searched by :class:`skframe.model_selection.KernelSearchCV`; the axes the user leaves
unset take the estimator's proposal (:func:`build_grid`).
"""

from __future__ import annotations

import itertools
import math
import re

from skframe.exceptions import InvalidParameterError

__all__ = ["KERNEL_OPTIONS", "parse_grid_values", "parse_lam_grid", "build_grid"]

#: the estimator parameter each kernel option sets, and the prefix of its column in the table
KERNEL_OPTIONS = {
    "kernel_params": ("--kernel-param", ""),
    "input_kernel_params": ("--input-kernel-param", ""),
    "output_kernel_params": ("--output-kernel-param", "output_"),
}
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_RANGE = re.compile(rf"\s*({_NUMBER})\s*:\s*({_NUMBER})\s*:\s*(\S+)\s*")


def _range(text, option):
    """``START:STOP:COUNT`` → ``COUNT`` values log-spaced from START to STOP, both included."""
    m = _RANGE.fullmatch(text)
    if m is None:
        raise InvalidParameterError(f"{option} {text!r} is not a range: write START:STOP:COUNT, e.g. 1e-8:1e-2:7 "
                                    "(COUNT values, log-spaced, both ends included)")
    start, stop = float(m.group(1)), float(m.group(2))
    try:
        count = int(m.group(3))
    except ValueError:
        count = 0
    if count < 1:
        raise InvalidParameterError(f"{option} {text!r}: COUNT {m.group(3)!r} must be a whole number >= 1, "
                                    "e.g. 1e-8:1e-2:7")
    if start <= 0 or stop <= 0:
        raise InvalidParameterError(f"{option} {text!r}: a log range needs START and STOP > 0; list the values "
                                    "instead (a,b,c) to include 0 or negative values")
    if count == 1:
        return [start]
    step = (math.log10(stop) - math.log10(start)) / (count - 1)
    return [start] + [10 ** (math.log10(start) + k * step) for k in range(1, count - 1)] + [stop]


def _looks_like_range(value):
    """A text that starts like a number and holds a colon: meant as a range (checked by :func:`_range`)."""
    return isinstance(value, str) and ":" in value and re.match(rf"\s*{_NUMBER}\s*:", value) is not None


def parse_grid_values(value, option):
    """The values of one grid axis: a list, a log range ``START:STOP:COUNT``, or lists of both.

    Parameters
    ----------
    value : str, number or list
        What the option gave (``parse_kv`` has already split ``a,b,c`` into a list).
    option : str
        The option's name, for the error messages.

    Returns
    -------
    list
        The values, in the order given.

    Examples
    --------
    >>> parse_grid_values("1e-3:1e-1:3", "--kernel-param gamma")
    [0.001, 0.01, 0.1]
    >>> parse_grid_values([0.5, "1:100:3"], "--kernel-param gamma")
    [0.5, 1.0, 10.0, 100.0]
    """
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if _looks_like_range(item):
            out.extend(_range(item, option))
        else:
            out.append(item)
    if not out:
        raise InvalidParameterError(f"{option} is empty; give values a,b,c or a range START:STOP:COUNT")
    return out


def parse_lam_grid(text):
    """``--lam``: ``a,b,c``, ``START:STOP:COUNT`` or both, comma-separated; every value > 0.

    Examples
    --------
    >>> parse_lam_grid("1e-8:1e-2:4")
    [1e-08, 1e-06, 0.0001, 0.01]
    >>> parse_lam_grid("0.1,1e-3")
    [0.1, 0.001]
    """
    values = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        if ":" in part:
            values.extend(_range(part, "--lam"))
            continue
        try:
            values.append(float(part))
        except ValueError:
            raise InvalidParameterError(f"--lam {text!r}: {part!r} is not a number; write a,b,c or "
                                        "START:STOP:COUNT, e.g. 1e-8:1e-2:7") from None
    if not values:
        raise InvalidParameterError(f"--lam {text!r} is empty; write a,b,c or START:STOP:COUNT, e.g. 1e-8:1e-2:7")
    bad = [v for v in values if not (v > 0 and math.isfinite(v))]
    if bad:
        raise InvalidParameterError(f"--lam {bad[0]:g} must be > 0 (and finite): λ is the weight of the "
                                    "regularisation; e.g. --lam 1e-8:1e-2:7")
    return values


def _kernel_name(model, param):
    """The kernel (a name or an object) whose parameters ``param`` (e.g. ``input_kernel_params``) holds."""
    params = model.get_params(deep=False)
    return params.get("output_kernel" if param == "output_kernel_params" else
                      "input_kernel" if "input_kernel" in params else "kernel")


def _estimator_param(model, name, option):
    """The estimator parameter a kernel option's grid sets (``kernel_params`` → ``input_kernel_params`` for the
    structured models), or an error naming the option that does not apply."""
    params = model.get_params(deep=False)
    if name == "kernel_params" and name not in params and "input_kernel_params" in params:
        return "input_kernel_params"
    if name not in params:
        raise InvalidParameterError(f"{option} does not apply to {type(model).__name__} (the task chosen); "
                                    "use --kernel-param")
    return name


def _check_kernel(model, param, values, option):
    """Build the kernel with each searched value: an unknown name or a bad value fails now, naming the kernel's
    parameters, instead of every grid point failing later."""
    from skframe.contract.registry import get_kernel  # lazy: reads the plugins' entry points (~15 ms)

    kernel = _kernel_name(model, param)
    if not isinstance(kernel, str):
        return
    for combo in values:
        try:
            get_kernel(kernel, **combo)
        except InvalidParameterError as exc:
            raise InvalidParameterError(f"{option}: {exc}") from None


def build_grid(opts, model, default, gave_kernel=None):
    """The scikit-learn parameter grid of the search and which axes came from the default grid.

    ``default`` is a callable returning :func:`skframe.model_selection.default_param_grid`'s grid (called
    only when an axis is missing); ``gave_kernel`` says whether the user gave a kernel option (by default
    read from ``opts``; a data set's suggested kernel parameters are no choice of the user's).
    Returns ``(param_grid, columns, defaulted)``: ``columns`` lists ``(column name, estimator parameter,
    key or None)`` for the table.
    """
    grid, columns, defaulted = {}, [], []
    for name, (option, _) in KERNEL_OPTIONS.items():  # the fixed values: a bad one fails now, not per point
        if getattr(opts, name) and name not in opts.kernel_axes:
            param = _estimator_param(model, name, option)
            _check_kernel(model, param, [dict(model.get_params(deep=False).get(param) or {})], option)
    for name, axes in opts.kernel_axes.items():
        option = KERNEL_OPTIONS[name][0]
        param = _estimator_param(model, name, option)
        base = dict(model.get_params(deep=False).get(param) or {})
        keys = list(axes)
        combos = [{**base, **dict(zip(keys, values))} for values in itertools.product(*axes.values())]
        _check_kernel(model, param, combos, option)
        grid[param] = combos
        columns += [(KERNEL_OPTIONS[name][1] + k, param, k) for k in keys]
    need_kernel = not (opts.gave_kernel_params() if gave_kernel is None else gave_kernel)
    if need_kernel or opts.lam_grid is None:
        proposed = default()
        if need_kernel:
            for param, values in proposed.items():
                if param == "lam" or not isinstance(values, (list, tuple)) or not values:
                    continue
                if isinstance(values[0], dict):  # kernel parameters: merged into the estimator's own
                    base = dict(model.get_params(deep=False).get(param) or {})
                    grid[param] = [{**base, **v} for v in values]
                    keys = list(dict.fromkeys(k for v in values for k in v))
                    prefix = "output_" if param == "output_kernel_params" else ""
                    columns += [(prefix + k, param, k) for k in keys]
                else:
                    grid[param] = list(values)
                    columns.append((param, param, None))
                defaulted.append(param)
        if opts.lam_grid is None:
            grid["lam"] = list(proposed["lam"])
            defaulted.append("lam")
    if opts.lam_grid is not None:
        grid["lam"] = list(opts.lam_grid)
    columns.append(("lam", "lam", None))
    return grid, columns, defaulted
