"""Parameter and data checks for skframe and its plugins (public API).

Plugin components validate their parameters and inputs with these helpers so
that every error is an exception of :mod:`skframe.exceptions` whose message names
the value and the fix, as the built-in components do:

>>> check_scalar(0.5, "gamma", low=0, low_inclusive=False)
0.5
>>> check_scalar(-1, "gamma", low=0, low_inclusive=False)
Traceback (most recent call last):
...
skframe.exceptions.InvalidParameterError: gamma=-1 is invalid; it must be a real number in (0, inf)
"""

from __future__ import annotations

import numpy as np

from skframe.constraints import Interval, check_param
from skframe.exceptions import InvalidInputError, InvalidParameterError

__all__ = ["check_scalar", "check_seed", "check_data", "check_same_features", "as_float_array", "SEED_MAX"]


#: the largest integer seed NumPy and scikit-learn accept (seeds are whole numbers in [0, 2**32 - 1])
SEED_MAX = 2**32 - 1


def check_seed(seed, name="random_state", example=0):
    """``seed`` when it is a valid random state: None, a RandomState, a Generator or a whole number in
    ``[0, 2**32 - 1]``; else one :class:`InvalidParameterError` naming ``name``, the value and an example.

    >>> check_seed(7)
    7
    >>> try:
    ...     check_seed(-1, "--seed")
    ... except Exception as exc:
    ...     print(exc)
    --seed -1: the seed must be a whole number in [0, 2**32-1] (0 to 4294967295), e.g. --seed 0
    """
    if seed is None or isinstance(seed, (np.random.RandomState, np.random.Generator)):
        return seed
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and 0 <= seed <= SEED_MAX:
        return int(seed)
    sep = " " if name.startswith("-") else "="
    raise InvalidParameterError(f"{name}{sep}{seed!r}: the seed must be a whole number in [0, 2**32-1] (0 to "
                                f"{SEED_MAX}), e.g. {name}{sep}{example}")


def check_scalar(value, name, *, kind=float, low=None, high=None, low_inclusive=True, high_inclusive=True, fix=None):
    """Validate a scalar parameter and return it converted to ``kind``.

    A thin wrapper over :mod:`skframe.constraints` (one :class:`~skframe.constraints.Interval`)
    for components that check their parameters one by one in ``__init__``; estimators
    declare ``_parameter_constraints`` and call :func:`~skframe.constraints.validate_params`.

    Parameters
    ----------
    value : object
        The value given by the user.
    name : str
        Parameter name used in the message.
    kind : {float, int}, default=float
        Expected type; booleans are refused, integers are accepted for floats.
    low, high : float, optional
        Bounds of the allowed interval.
    low_inclusive, high_inclusive : bool, default=True
        Whether the bounds belong to the interval.
    fix : str, optional
        Advice appended to the message.

    Returns
    -------
    int or float

    Raises
    ------
    InvalidParameterError
        Wrong type, NaN/inf, or outside the interval; the message names the parameter,
        the value and the allowed range.
    """
    closed = {(True, True): "both", (True, False): "left", (False, True): "right", (False, False): "neither"}
    interval = Interval("int" if kind is int else "real", low, high, closed=closed[bool(low_inclusive),
                                                                                  bool(high_inclusive)])
    check_param(name, value, [interval], hint=fix)
    return kind(value)


def as_float_array(X, name="X", *, allow_sparse=True, ensure_2d=True):
    """Convert to a float64 ndarray (or CSR matrix) and reject NaN, inf and empty data.

    Parameters
    ----------
    X : array-like or sparse matrix
    name : str, default="X"
        Name used in messages.
    allow_sparse : bool, default=True
        Accept SciPy sparse matrices (converted to CSR); otherwise ask for dense data.
    ensure_2d : bool, default=True
        Require a 2-D array (a 1-D one gets a reshape hint).

    Returns
    -------
    ndarray of float64 or scipy.sparse.csr_matrix

    Raises
    ------
    InvalidInputError
        Not numeric, wrong dimension, empty, or containing NaN/inf.
    """
    if _is_sparse(X):
        import scipy.sparse as sp  # lazy: only sparse inputs need SciPy; the ground floor loads none

        if not allow_sparse:
            raise InvalidInputError(f"{name} is a sparse matrix but this component needs dense data; "
                                    f"call {name}.toarray()")
        X = sp.csr_matrix(X, dtype=np.float64)
        data = X.data
    else:
        try:
            X = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"{name} cannot be converted to a float array ({exc}); pass numeric data") from exc
        if ensure_2d:
            if X.ndim == 1:
                raise InvalidInputError(
                    f"{name} is 1-D with shape {X.shape}; reshape it with {name}.reshape(-1, 1) for one feature "
                    f"or {name}.reshape(1, -1) for one sample"
                )
            if X.ndim != 2:
                raise InvalidInputError(f"{name} must be 2-D, got shape {X.shape}")
        data = X
    if X.shape[0] == 0 or (ensure_2d and X.shape[1] == 0):
        raise InvalidInputError(f"{name} is empty (shape {X.shape}); at least one sample and one feature are needed")
    if not np.all(np.isfinite(data)):
        n_nan = int(np.isnan(data).sum())
        n_inf = int(np.isinf(data).sum())
        raise InvalidInputError(
            f"{name} contains NaN ({n_nan}) or inf ({n_inf}) values; remove or impute them "
            "(the CLI offers --missing zero|mean|drop)"
        )
    return X


def _is_sparse(X):
    """A SciPy sparse matrix or array (SciPy is imported only when one is given)."""
    if not type(X).__module__.startswith("scipy."):
        return False
    import scipy.sparse as sp  # lazy: only sparse inputs need SciPy; the ground floor loads none

    return sp.issparse(X)


check_data = as_float_array  #: alias of :func:`as_float_array`


def check_same_features(X, Y, names=("X", "Y")):
    """Raise :class:`InvalidInputError` when two 2-D arrays do not have the same number of columns.

    Parameters
    ----------
    X, Y : ndarray or sparse matrix
    names : tuple of str, default=("X", "Y")
        Names used in the message.
    """
    if X.shape[1] != Y.shape[1]:
        raise InvalidInputError(
            f"{names[0]} has {X.shape[1]} features but {names[1]} has {Y.shape[1]}; "
            "both must come from the same feature space"
        )
