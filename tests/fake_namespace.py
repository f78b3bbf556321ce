"""A tiny array namespace other than NumPy, for testing code written against the namespace of its input.

:class:`FakeArray` wraps an ndarray and declares :data:`FAKE` as its namespace
(``__array_namespace__``), as CuPy arrays on a GPU have CuPy. It refuses every implicit
conversion to NumPy (``np.asarray`` and NumPy functions raise ``HostRoundTrip``, ufuncs ``TypeError``),
so a test passing fake arrays proves the code never leaves their namespace, except through
the explicit ``FAKE.asnumpy`` (CuPy's ``cupy.asnumpy``), which :data:`FAKE` counts in
``FAKE.transfers`` (elements copied to the host). ``FAKE.ElementwiseKernel`` stands for
CuPy's compiled kernels: it runs the operation with NumPy and counts how many were built.

>>> import numpy as np
>>> x = FAKE.asarray(np.arange(3.0))
>>> type(FAKE.exp(x)).__name__, float(FAKE.asnumpy(x.sum()))
('FakeArray', 3.0)
"""

from __future__ import annotations

import operator
import re

import numpy as np


class HostRoundTrip(RuntimeError):
    """A fake device array was converted to NumPy implicitly."""


def _unwrap(obj):
    if isinstance(obj, FakeArray):
        return obj.a
    if isinstance(obj, (list, tuple)):
        return type(obj)(_unwrap(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _unwrap(v) for k, v in obj.items()}
    return obj


def _wrap(obj):
    if isinstance(obj, np.ndarray):
        return FakeArray(obj)
    if isinstance(obj, tuple):
        return tuple(_wrap(o) for o in obj)
    if isinstance(obj, list):
        return [_wrap(o) for o in obj]
    if isinstance(obj, np.generic):  # a 0-d result stays on the "device", as CuPy's do
        return FakeArray(np.asarray(obj))
    return obj


class FakeArray:
    """An ndarray in disguise: operators work, implicit conversion to NumPy raises."""

    __array_priority__ = 1000
    __array_ufunc__ = None  # NumPy ufuncs refuse it (np.exp(x) raises TypeError)

    def __init__(self, a):
        self.a = np.asarray(a)

    def __array_namespace__(self, api_version=None):
        return FAKE

    def __array__(self, *args, **kwargs):
        raise HostRoundTrip("a FakeArray was converted to a NumPy array implicitly")

    def __array_function__(self, func, types, args, kwargs):
        raise HostRoundTrip(f"numpy.{func.__name__} was called on a FakeArray")

    def __getattr__(self, name):
        if name.startswith("__") or name in ("a", "ctypes", "data"):  # no buffer or array interface for NumPy
            raise AttributeError(name)
        attr = getattr(self.a, name)
        if callable(attr):
            return lambda *args, **kwargs: _wrap(attr(*_unwrap(args), **_unwrap(kwargs)))
        return _wrap(attr) if name in ("T", "real", "imag") else attr

    def __getitem__(self, key):
        return _wrap(self.a[_unwrap(key)])

    def __setitem__(self, key, value):
        self.a[_unwrap(key)] = _unwrap(value)

    def __len__(self):
        return len(self.a)

    def __float__(self):
        return float(self.a)

    def __int__(self):
        return int(self.a)

    def __bool__(self):
        return bool(self.a)

    def __repr__(self):
        return f"FakeArray({self.a!r})"


def _binary(op):
    return lambda self, other: _wrap(op(self.a, _unwrap(other)))


def _reflected(op):
    return lambda self, other: _wrap(op(_unwrap(other), self.a))


def _inplace(op):
    def method(self, other):
        self.a = op(self.a, _unwrap(other))
        return self

    return method


for _name, _op, _iop in [("add", operator.add, operator.iadd), ("sub", operator.sub, operator.isub),
                         ("mul", operator.mul, operator.imul), ("truediv", operator.truediv, operator.itruediv),
                         ("matmul", operator.matmul, operator.imatmul), ("pow", operator.pow, operator.ipow),
                         ("floordiv", operator.floordiv, operator.ifloordiv)]:
    setattr(FakeArray, f"__{_name}__", _binary(_op))
    setattr(FakeArray, f"__r{_name}__", _reflected(_op))
    setattr(FakeArray, f"__i{_name}__", _inplace(_iop))
for _name, _op in [("lt", operator.lt), ("le", operator.le), ("gt", operator.gt), ("ge", operator.ge),
                   ("eq", operator.eq), ("ne", operator.ne), ("and", operator.and_), ("or", operator.or_)]:
    setattr(FakeArray, f"__{_name}__", _binary(_op))
FakeArray.__neg__ = lambda self: FakeArray(-self.a)
FakeArray.__abs__ = lambda self: FakeArray(np.abs(self.a))
FakeArray.__invert__ = lambda self: FakeArray(~self.a)
FakeArray.__hash__ = None


class _Namespace:
    """Every NumPy function, taking and returning fake arrays (``linalg`` too)."""

    def __init__(self, module, name):
        self._module = module
        self.__name__ = name

    def __getattr__(self, name):
        attr = getattr(self._module, name)
        if type(attr).__name__ == "module":
            return _Namespace(attr, f"{self.__name__}.{name}")
        if isinstance(attr, type) or not callable(attr):  # dtypes, constants
            return attr
        return lambda *args, **kwargs: _wrap(attr(*_unwrap(args), **_unwrap(kwargs)))


class FakeNamespace(_Namespace):
    """The namespace of :class:`FakeArray`: NumPy's functions plus ``asnumpy`` and ``ElementwiseKernel``."""

    def __init__(self):
        super().__init__(np, "fake_namespace")
        self.linalg = _Namespace(np.linalg, "fake_namespace.linalg")
        self.transfers = 0
        self.kernels_built = []

    def asnumpy(self, x):
        """The explicit copy to the host (CuPy's ``cupy.asnumpy``), counted in elements."""
        out = np.array(_unwrap(x), copy=True)
        self.transfers += out.size
        return out

    def asarray(self, x, dtype=None):
        return FakeArray(np.asarray(_unwrap(x), dtype=dtype))

    def ElementwiseKernel(self, in_params, out_params, operation, name, **kwargs):  # noqa: N802 - CuPy's name
        """A stand-in for ``cupy.ElementwiseKernel``: runs ``operation`` on the (unwrapped) arrays with NumPy."""
        self.kernels_built.append(name)
        ins = [p.split()[-1] for p in in_params.split(",")]
        out = out_params.split()[-1]

        def run(*args):
            env = dict(zip(ins, (_unwrap(a) for a in args[: len(ins)])), exp=np.exp, max=np.maximum)
            target = _unwrap(args[len(ins)])
            env[out], env["T"] = target, target.dtype.type
            code = re.sub(r"\(T\)\s*([0-9.]+)", r"T(\1)", operation.split("=", 1)[1])
            target[...] = eval(code, {"__builtins__": {}}, env)  # noqa: S307 - a fixed expression of the test
            return args[len(ins)]

        return run

    def reset(self):
        self.transfers = 0
        self.kernels_built = []


#: the namespace of :class:`FakeArray`
FAKE = FakeNamespace()


def fake(a):
    """``a`` as a :class:`FakeArray` (a copy of its NumPy array)."""
    return FakeArray(np.array(a, copy=True))
