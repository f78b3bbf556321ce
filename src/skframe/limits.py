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
once. Values are positive integers (``2e7`` and ``1_000_000`` are understood), sizes in bytes may
carry a unit (``16GiB``).

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

from skframe.exceptions import DataFormatError, InvalidParameterError
from skframe.options import parse_bytes

__all__ = ["Limit", "LIMITS", "limit", "check", "exceeded", "quoted", "archive_member_impossible"]

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


def _parse(lim, text):
    if lim.in_bytes:
        try:
            return parse_bytes(text)
        except InvalidParameterError:
            value = None
    else:
        try:
            value = float(text.replace("_", ""))
        except ValueError:
            value = None
    if value is None or not 1 <= value < float("inf") or value != int(value):  # "inf" and "nan" included
        raise InvalidParameterError(
            f"{lim.env}={text!r} is not a positive whole number; write e.g. {lim.env}={lim.default}"
        )
    return int(value)


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
