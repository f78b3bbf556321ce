"""The size policy of every reader: how large a file may claim its contents to be.

A few bytes can claim a lot: a LIBSVM feature index of 2e9, a deflated archive member that
expands a thousandfold, a molecule of 10**5 atoms, a JSON line nested 10**5 deep. Every reader
of skframe (data files, molecule and graph files, model files) checks what a file *declares*
against the limits below before it allocates anything for it, and refuses with one error that
names the value, the limit and the environment variable that raises it.

=================  ===========================  ===========  ==================================================
limit              environment variable         default      what it bounds
=================  ===========================  ===========  ==================================================
``features``       ``SKFRAME_MAX_FEATURES``     1 048 576    columns of a data file; the largest feature index
                                                             of a sparse file (LIBSVM, sparse ARFF and NPZ)
``expansion``      ``SKFRAME_MAX_EXPANSION``    64           bytes an archive member (NPZ data, model file)
                                                             decompresses to, per compressed byte
``decompressed``   ``SKFRAME_MAX_DECOMPRESSED`` 8 GiB        bytes all compressed members of one archive
                                                             decompress to, whatever its size
``atoms``          ``SKFRAME_MAX_ATOMS``        2 000        atoms of one molecule (SMILES, SDF record)
``graph_nodes``    ``SKFRAME_MAX_GRAPH_NODES``  10 000       nodes of one graph of a JSON-lines file
``json_depth``     ``SKFRAME_MAX_JSON_DEPTH``   64           nesting of arrays and objects on one JSON line
``field_chars``    ``SKFRAME_MAX_FIELD_CHARS``  1 048 576    characters of one field of a text CSV (SMILES)
=================  ===========================  ===========  ==================================================

``table_columns`` (``SKFRAME_MAX_TABLE_COLUMNS``, default 65 536) bounds the columns of a table typed column by
column (a table with text: each column is judged a number, category or date column); a numeric file is not.
``classes`` (``SKFRAME_MAX_CLASSES``, default 1 000) bounds the classes a classifier fitted with
``max_classes=None`` accepts (each class is a column of targets and of decision values).

Uncompressed data are bounded by the file itself (its bytes are there); the limits bound what
the file merely claims. A value is read from the environment at each check, so a variable set
before a command (``SKFRAME_MAX_ATOMS=5000 skframe fit ...``) or in a running program applies at
once. Values are positive whole numbers (``2e7`` and ``1_000_000`` are understood), sizes in bytes may
carry a unit (``16GiB``, ``1.5KiB`` = 1536); a fraction (``1.5`` bytes), a word, ``inf`` or a value above
:data:`LARGEST` is refused in one line (:func:`parse_count`, the reader of every ``SKFRAME_*`` count).

Examples
--------
>>> limit("json_depth")
64
>>> check("atoms", 12, "mol.smi, line 3: the molecule")  # within the limit: nothing happens
>>> try:
...     check("json_depth", 10**5, "g.jsonl, line 1: the JSON")
... except Exception as exc:
...     print(exc)  # doctest: +NORMALIZE_WHITESPACE
g.jsonl, line 1: the JSON is nested 100000 levels deep, more than the limit of 64;
if the file is genuine, raise the limit with the environment variable SKFRAME_MAX_JSON_DEPTH (e.g.
SKFRAME_MAX_JSON_DEPTH=100000)
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from skframe.exceptions import DataFormatError, InvalidParameterError
from skframe.options import _UNITS

__all__ = ["Limit", "LIMITS", "LARGEST", "limit", "check", "exceeded", "quoted", "archive_member_impossible",
           "parse_count", "out_of_memory"]

#: characters of a file's value quoted in a message before it is cut
QUOTED_CHARS = 60


def quoted(value, chars=QUOTED_CHARS):
    """``repr(value)`` for a message, cut after ``chars`` characters with the full length said: a 100 kB field
    must not become a 100 kB error line.

    >>> quoted("CCO")
    "'CCO'"
    >>> quoted("C" * 100_000, chars=5)
    "'CCCCC...' (100000 characters)"
    """
    text = str(value)
    if len(text) <= chars:
        return repr(text)
    head = repr(text[:chars])
    return f"{head[:-1]}...{head[-1]} ({len(text)} characters)"



@dataclass(frozen=True)
class Limit:
    """One limit of the size policy: its name, environment variable, default and wording."""

    name: str
    env: str
    default: int
    #: how a value is described: "{value}" then this, e.g. "features" -> "2000000000 features"
    phrase: str
    #: True when the value is a number of bytes (a unit such as "16GiB" is accepted)
    in_bytes: bool = False


LIMITS = {lim.name: lim for lim in (
    Limit("features", "SKFRAME_MAX_FEATURES", 1 << 20, "has {value} features"),
    Limit("expansion", "SKFRAME_MAX_EXPANSION", 64, "expands {value} times"),
    Limit("decompressed", "SKFRAME_MAX_DECOMPRESSED", 8 << 30, "decompresses to {value} bytes", in_bytes=True),
    Limit("atoms", "SKFRAME_MAX_ATOMS", 2000, "has {value} atoms"),
    Limit("graph_nodes", "SKFRAME_MAX_GRAPH_NODES", 10_000, "has {value} nodes"),
    Limit("json_depth", "SKFRAME_MAX_JSON_DEPTH", 64, "is nested {value} levels deep"),
    Limit("field_chars", "SKFRAME_MAX_FIELD_CHARS", 1 << 20, "has a field of {value} characters"),
    Limit("table_columns", "SKFRAME_MAX_TABLE_COLUMNS", 1 << 16, "has {value} columns to type one by one"),
    Limit("classes", "SKFRAME_MAX_CLASSES", 1000, "holds {value} classes"),
)}


#: the largest value any limit or count variable takes (a C ``ssize_t``: what ``csv.field_size_limit`` and array
#: sizes accept); "no limit" is written as a large value below it, e.g. ``1e18``
LARGEST = 2**63 - 1


def parse_count(env, text, *, in_bytes=False, minimum=1, example=None):
    """The whole number the environment variable ``env`` holds as ``text``, or one error naming both.

    The one reader of every ``SKFRAME_*`` size, limit and count variable. Accepted: integers (``1000000``,
    ``1_000_000``), decimals and scientific notation that write a whole number (``2e7``, ``1.5e6``), and for
    sizes in bytes a unit (``16GiB``, ``1.5KiB`` = 1536, ``2GB`` = 2e9). The value is read exactly (no float
    rounding); a fraction (``1.5`` bytes, ``2.5`` atoms), a value below ``minimum`` or above :data:`LARGEST`,
    ``inf``, ``nan`` or anything else raises :class:`InvalidParameterError` naming the variable, the value and an
    example.

    Parameters
    ----------
    env : str
        The variable's name, for the message.
    text : str
        Its value.
    in_bytes : bool, default=False
        Whether the value is a number of bytes (a unit is accepted).
    minimum : int, default=1
        The least value accepted.
    example : int or str, optional
        The value the message suggests (default: ``minimum``).

    Returns
    -------
    int

    Examples
    --------
    >>> parse_count("SKFRAME_MAX_DECOMPRESSED", "1.5KiB", in_bytes=True)
    1536
    >>> parse_count("SKFRAME_MAX_FEATURES", "2e6")
    2000000
    >>> try:
    ...     parse_count("SKFRAME_MAX_DECOMPRESSED", "1.5", in_bytes=True, example="16GiB")
    ... except Exception as exc:
    ...     print(exc)
    SKFRAME_MAX_DECOMPRESSED='1.5' is not a whole number of bytes; write e.g. SKFRAME_MAX_DECOMPRESSED=16GiB
    """
    example = minimum if example is None else example
    raw = str(text).strip()
    number, unit = raw.lower().replace(" ", ""), ""
    if in_bytes:
        stripped = number.rstrip("abcdefghijklmnopqrstuvwxyz")
        number, unit = stripped, number[len(stripped):]
    try:
        value = Decimal(number) * _UNITS[unit] if unit in _UNITS else None
    except (InvalidOperation, IndexError):
        value = None
    if value is None or not value.is_finite():
        unit_words = " of bytes (a unit may follow: KiB, MiB, GiB, kB, MB, GB)" if in_bytes else ""
        kind = "a positive whole number" if minimum >= 1 else f"a whole number of at least {minimum}"
        raise InvalidParameterError(f"{env}={raw!r} is not {kind}{unit_words}; write e.g. {env}={example}")
    if value != value.to_integral_value():
        raise InvalidParameterError(f"{env}={raw!r} is not a whole number{' of bytes' if in_bytes else ''}; "
                                    f"write e.g. {env}={example}")
    if value < minimum:
        raise InvalidParameterError(f"{env}={raw!r} is below {minimum}, the least value it takes; write e.g. "
                                    f"{env}={example}")
    if value > LARGEST:
        raise InvalidParameterError(f"{env}={raw!r} is more than {LARGEST} (2**63 - 1), the largest value it takes; "
                                    f"write e.g. {env}={example}")
    return int(value)


def _parse(lim, text):
    return parse_count(lim.env, text, in_bytes=lim.in_bytes, example="16GiB" if lim.in_bytes else lim.default)


def limit(name):
    """The value of the limit ``name`` (a key of :data:`LIMITS`): its environment variable, else its default."""
    lim = LIMITS[name]
    text = os.environ.get(lim.env, "").strip()
    return _parse(lim, text) if text else lim.default


def exceeded(name, value, where):
    """The message for ``value`` over the limit ``name``: ``where`` says what holds it."""
    lim = LIMITS[name]
    return (f"{where} {lim.phrase.format(value=value)}, more than the limit of {limit(name)}; if the file is "
            f"genuine, raise the limit with the environment variable {lim.env} (e.g. {lim.env}={value})")


def check(name, value, where, error=DataFormatError):
    """Raise ``error`` (a :class:`DataFormatError` by default) when ``value`` exceeds the limit ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`LIMITS`.
    value : int
        What the file declares (a number of features, atoms, bytes...).
    where : str
        What holds it, for the message, e.g. ``"data.svm, line 3: the row"``.
    error : type
        The exception class raised (model files raise a ``PersistenceError``).
    """
    if value > limit(name):
        raise error(exceeded(name, value, where))


#: Bytes a small archive member may inflate to whatever its compressed size.
_MEMBER_SLACK = 1 << 20


def archive_member_impossible(info, file_size, what, tail, error):
    """Whether the sizes the zip member ``info`` declares are impossible in an archive of ``file_size`` bytes.

    A stored member holds as many bytes as it declares; every member ends within the file. A compressed member
    declaring more than the ``expansion`` limit allows (plus 1 MiB for small members) raises ``error`` with the
    message ``"<what> declares <n> bytes from <c> compressed, <tail> ..."`` (``tail`` says what is refused).

    Parameters
    ----------
    info : zipfile.ZipInfo
        The member, as the archive's directory describes it.
    file_size : int
        Bytes of the archive file.
    what : str
        The file and the member, for the message, e.g. ``"data.npz: member 'X.npy'"``.
    tail : str
        The end of the subject of the message, e.g. ``"so its data"``.
    error : type
        The exception class raised (a ``DataFormatError`` for data, a ``PersistenceError`` for model files).

    Returns
    -------
    bool
        True when the member's sizes cannot be (the archive is truncated or corrupted).
    """
    if info.compress_type == zipfile.ZIP_STORED:
        bad = info.file_size != info.compress_size
    else:
        bad = False
        if info.file_size > limit("expansion") * info.compress_size + _MEMBER_SLACK:
            ratio = -(-info.file_size // max(info.compress_size, 1))  # rounded up: 64.2 is over 64
            raise error(exceeded("expansion", ratio, f"{what} declares {info.file_size} bytes from "
                                                     f"{info.compress_size} compressed, {tail}"))
    return bad or info.header_offset + info.compress_size > file_size


#: modules that read data or model files: a MemoryError raised inside one of them happened while reading
_READERS = ("skframe.io", "skframe.datasets", "skframe.persistence", "skframe.graphs.batch", "skframe.graphs.sdf")


def out_of_memory(exc, fit_advice="use a smaller sketch_size or a sparser sketch, or set memory_budget"):
    """The one line for the ``MemoryError`` ``exc``, worded after where it was raised (its traceback).

    Raised inside a reader (:data:`_READERS`, the innermost skframe frame), the line names the file being read
    and its size, and says how to read less at once: blocks (``skframe.io.iter_chunks``), a memory-mapped NPY
    file, fewer columns, or more memory for the process. Elsewhere (fitting, predicting) it gives ``fit_advice``.

    >>> try:
    ...     raise MemoryError()
    ... except MemoryError as exc:
    ...     print(out_of_memory(exc))
    out of memory; use a smaller sketch_size or a sparser sketch, or set memory_budget
    """
    module, path, tb = None, None, exc.__traceback__
    while tb is not None:
        name = str(tb.tb_frame.f_globals.get("__name__", ""))
        if name.split(".")[0].startswith("skframe"):
            module = name
            if name.startswith(_READERS) and path is None:
                found = tb.tb_frame.f_locals.get("path")
                path = os.fspath(found) if isinstance(found, (str, os.PathLike)) else None
        tb = tb.tb_next
    if module is None or not module.startswith(_READERS):
        return f"out of memory; {fit_advice}"
    what, size = "a file", ""
    if path is not None:
        what = repr(os.path.basename(path))
        try:
            size = f" ({os.path.getsize(path)} bytes on disk)"
        except OSError:
            size = ""
    if module.startswith("skframe.persistence"):
        return (f"out of memory while reading the model file {what}{size}: its arrays do not fit in the memory "
                "this process may use; run where more memory is free")
    return (f"out of memory while reading {what}{size}: its data do not fit in the memory this process may use; "
            "read it in blocks (skframe.io.iter_chunks), store the table as an NPY array (memory-mapped, read on "
            "demand), keep fewer columns, or run where more memory is free")
