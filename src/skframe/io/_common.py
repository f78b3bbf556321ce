"""Pieces shared by the format readers: the :class:`Dataset` container, token parsing,
text decoding and error messages."""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from skframe.exceptions import DataFormatError, InvalidParameterError
from skframe.io.compressed import open_binary

__all__ = ["Dataset", "MISSING_TOKENS"]

#: Tokens read as a missing value in text formats: ARFF's '?', empty, NaN, and the markers R and spreadsheets
#: write (NA, N/A, #N/A, NULL; pandas reads them as missing too).
MISSING_TOKENS = frozenset({"?", "", "nan", "NaN", "NAN", "Nan", "NA", "N/A", "n/a", "#N/A", "NULL", "null"})

#: Largest feature index accepted in sparse text formats (keeps CSR index arrays 32-bit).
MAX_INDEX = 2**31 - 2


@dataclass
class Dataset:
    """A loaded data set.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features) or scipy.sparse.csr_matrix
        Inputs, float64 (a read-only ``numpy.memmap`` view for memory-mapped ``.npy`` files).
    Y : ndarray of shape (n_samples, n_targets)
        Targets, float64; kept 2-D even with one target (see :attr:`y`).
    feature_names, target_names : list of str
        Column names (from the header / ARFF attributes, or generated ``x0``, ``y0``...).
    path : str or None
        File the data came from.
    format : str
        ``"csv"``, ``"npz"``, ``"npy"``, ``"arff"`` or ``"libsvm"``.
    n_missing : int
        Number of missing cells found (inputs and targets), whatever was done with them.
    missing_rows : ndarray of int
        0-based indices, in the file's data-row order, of the rows holding a missing cell.
    missing : str
        Strategy requested: ``"error"`` (then nothing was missing), ``"zero"``, ``"mean"``
        or ``"drop"`` (then ``missing_rows`` were removed from X and Y).
    """

    X: object
    Y: np.ndarray
    feature_names: list = field(default_factory=list)
    target_names: list = field(default_factory=list)
    path: str | None = None
    format: str = ""
    n_missing: int = 0
    missing_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.intp))
    missing: str = "error"

    @property
    def y(self):
        """Targets as a 1-D array when there is one target, else the 2-D ``Y`` (possibly ``(n, 0)``)."""
        return self.Y[:, 0] if self.Y.shape[1] == 1 else self.Y

    @property
    def n_samples(self):
        return self.X.shape[0]

    @property
    def n_features(self):
        return self.X.shape[1]

    @property
    def n_targets(self):
        return self.Y.shape[1]

    @property
    def is_sparse(self):
        return sp.issparse(self.X)

    def __repr__(self):
        kind = "sparse" if self.is_sparse else "dense"
        name = os.path.basename(self.path) if self.path else None
        return (
            f"Dataset(path={name!r}, format={self.format!r}, n_samples={self.n_samples}, "
            f"n_features={self.n_features} ({kind}), n_targets={self.n_targets}, "
            f"n_missing={self.n_missing}, missing={self.missing!r})"
        )


def name_of(path):
    """Base name of a path, for messages."""
    return os.path.basename(str(path))


class InexactInteger(ValueError):
    """A cell that writes a whole number float64 cannot hold exactly (beyond +-2**53): never rounded silently."""


_WHOLE = re.compile(r"[+-]?\d[\d_]*")


def inexact_integer(tok):
    """The integer the text ``tok`` writes when it is a whole number beyond +-2**53 (float64 would round it), else
    None. Decimals and exponents (``1e20``, ``123.0``) are floats as written, not such integers.

    >>> inexact_integer("9007199254740993"), inexact_integer("9007199254740992"), inexact_integer("1e20")
    (9007199254740993, None, None)
    """
    text = str(tok).strip()
    if len(text) < 16 or not _WHOLE.fullmatch(text):
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return value if abs(value) > EXACT_INTEGERS else None


def inexact_integer_message(where, name, value, fix=None):
    """The one line refusing the integer ``value`` of column ``name`` (None: unnamed), after ``where``; ``fix``
    replaces the advice to read the column as text (for a format without column types).

    The same rule as Parquet and Arrow integer columns (:func:`skframe.io.arrow_bounds.check_exact_integers`)."""
    col = name if name is not None else "NAME"
    fix = fix or (f"read codes or identifiers as text with --column-types {col}=categorical (in Python: "
                  f"column_types={{{col!r}: 'categorical'}}) or leave the column out with --drop {col}")
    return (f"{where}: the integer {value} is beyond 2**53 = {EXACT_INTEGERS}, where float64 cannot hold every "
            f"whole number (it would become {int(float(value))}); {fix}, or write the value with a decimal point "
            f"({value}.0) to accept the rounding")


def parse_number(tok):
    """Float value of a token, NaN for a missing marker; ValueError otherwise (also for +-inf, and
    :class:`InexactInteger` for a whole number beyond +-2**53, which float64 would round)."""
    if tok in MISSING_TOKENS:
        return math.nan
    value = float(tok)
    if math.isnan(value):
        return math.nan
    if math.isinf(value):
        raise ValueError("infinite")
    if abs(value) >= EXACT_INTEGERS and inexact_integer(tok) is not None:
        raise InexactInteger(tok)
    return value


def is_number_or_missing(tok):
    """Whether a CSV cell reads as a number (finite or not) or a missing marker."""
    if tok in MISSING_TOKENS:
        return True
    first = tok.lstrip()[:1]
    if first and not (first in "+-.iInN" or first.isdecimal()):  # no number starts so: no float() call (a
        return False                                              # header of 10**6 names, each a raised error)
    try:
        float(tok)
    except ValueError:
        return False
    return True


def bad_token(path, lineno, tok, col=None, extra="", name=None):
    """The :class:`DataFormatError` for a cell that is not a finite number.

    ``col`` is the cell's position (from 0) and ``name`` its column's name when the file has
    one: a cell of text gets the hint to leave its column out (``--drop``), and to read it
    as molecules when it looks like a SMILES string.
    """
    where = f" column {col + 1}" if col is not None else ""
    if name is not None:
        where += f" ({name!r})"
    big = inexact_integer(tok)
    if big is not None:
        fix = None if name is not None else ("keep codes or identifiers out of the numbers (in a CSV with a header, "
                                             "read them as text with --column-types NAME=categorical)")
        return DataFormatError(inexact_integer_message(f"{name_of(path)}, line {lineno}{where}", name, big, fix))
    try:
        what = "is infinite or out of the float64 range" if math.isinf(float(tok)) else "is not a number"
    except ValueError:
        what = "is not a number"
    shown = tok if len(tok) <= 40 else tok[:37] + "..."
    hint = ""
    if what == "is not a number" and col is not None:
        hint = text_column_hint(tok, name, col)
    return DataFormatError(
        f"{name_of(path)}, line {lineno}{where}: {shown!r} {what}"
        f"{extra}; fix the value or mark it missing with '?' (then choose --missing zero|mean|drop){hint}"
    )


def text_column_hint(tok, name, col):
    """The end of a message about a cell of text: leave its column out, or read it as SMILES if it is one.

    ``col`` is the position from 0; the command line counts from 1, as the messages do.
    """
    if not any(c.isalpha() for c in tok) or tok.lower() in ("nan", "inf", "infinity"):
        return ""
    which = name if name is not None else str(col + 1)
    hint = f"; if the column is text, leave it out with `--drop {which}` (in Python: drop=[{name or col!r}])"
    if looks_like_smiles(tok):
        column = f" --input-column {name}" if name is not None else " --input-column NAME"
        hint += (f"; if it holds SMILES strings, read them as molecules with `--inputs smiles{column}` "
                 "(in Python: skframe.graphs.GraphBatch.from_smiles)")
    return hint


# A SMILES string: organic-subset atoms (aromatic in lower case), bracket atoms, bonds, branches and ring
# closures, with no spaces; a word such as "north" fails on its "r" and "t".
_SMILES_TOKEN = re.compile(r"Cl|Br|[BCNOPSFI]|[bcnops]|\[[^\[\]\s]+\]|%\d\d|\d|[-=#$:/\\().+@*~]")
_SMILES_ATOM = re.compile(r"Cl|Br|[BCNOPSFI]|[bcnops]|\[[^\[\]\s]+\]")


def looks_like_smiles(text):
    """True when ``text`` reads as a SMILES string (atoms, bonds, branches, ring closures only).

    Examples
    --------
    >>> [looks_like_smiles(s) for s in ("CCO", "c1ccccc1O", "CC(=O)[O-]", "north", "Lyon", "3.5")]
    [True, True, True, False, False, False]
    """
    text = text.strip()
    if not text or " " in text:
        return False
    pos = 0
    while pos < len(text):
        m = _SMILES_TOKEN.match(text, pos)
        if m is None:
            return False
        pos = m.end()
    return _SMILES_ATOM.search(text) is not None


def _check_encoding(path, head):
    utf16_bom = head.startswith((b"\xff\xfe", b"\xfe\xff"))
    if utf16_bom or (len(head) >= 4 and head[1:2] == b"\x00" and head[3:4] == b"\x00"):
        raise DataFormatError(
            f"{name_of(path)} looks UTF-16 encoded; save it as UTF-8 (or ASCII) text, "
            "e.g. `iconv -f UTF-16 -t UTF-8`"
        )
    if b"\x00" in head:
        raise DataFormatError(f"{name_of(path)} contains NUL bytes: it is a binary file, not a text data file")


def _decode_error(path, data, exc):
    lineno = data.count(b"\n", 0, exc.start) + 1
    return DataFormatError(
        f"{name_of(path)}, line {lineno}: byte {data[exc.start:exc.start + 1]!r} is not valid UTF-8; "
        "save the file as UTF-8 (e.g. `iconv -f LATIN1 -t UTF-8`)"
    )


def _decoded_lines(path, data):
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise _decode_error(path, data, exc) from None


def iter_lines(path, block=1 << 20):
    """Yield ``(lineno, line)`` of a UTF-8 text file, 1-based, without line ends, streaming.

    The file is opened read-only; a gzip, bz2, xz or zstd file is decompressed through the cap of
    :mod:`skframe.io.compressed`. A UTF-8 byte-order mark is skipped; UTF-16, binary data
    and invalid UTF-8 raise :class:`DataFormatError` naming the line.
    """
    lineno = 0
    tail = b""
    with open_binary(path) as fh:
        chunk = fh.read(max(block, 4096))  # the encoding checks look at the first 4 KiB
        _check_encoding(path, chunk[:4096])
        if chunk.startswith(b"\xef\xbb\xbf"):
            chunk = chunk[3:]
        while chunk:
            if b"\x00" in chunk:
                raise DataFormatError(f"{name_of(path)} contains NUL bytes: it is a binary file, not a text data file")
            data = tail + chunk
            cut = data.rfind(b"\n") + 1
            tail = data[cut:]
            for line in _decoded_lines(path, data[:cut]):
                lineno += 1
                yield lineno, line
            chunk = fh.read(block)
    for line in _decoded_lines(path, tail):
        lineno += 1
        yield lineno, line


def parse_row(toks, path, lineno, kept=None, names=None):
    """Float values of the cells of one row (NaN for missing); DataFormatError naming the column.

    ``kept``: the positions to parse, in order (default: every cell); ``names``: the header's
    column names, for messages.
    """
    vals = []
    for j in range(len(toks)) if kept is None else kept:
        t = toks[j]
        try:
            vals.append(parse_number(t))
        except ValueError:
            raise bad_token(path, lineno, t, j, name=names[j] if names is not None else None) from None
    return vals


def check_targets(targets, n_columns, path):
    """Validate the number of trailing target columns of a CSV/ARFF file."""
    if isinstance(targets, bool) or not isinstance(targets, (int, np.integer)):
        raise InvalidParameterError(f"targets={targets!r} must be an integer (number of target columns at the end)")
    if targets < 0 or targets >= n_columns:
        raise InvalidParameterError(
            f"targets={targets} is impossible for {name_of(path)} with {n_columns} columns; "
            f"choose 0 <= targets <= {n_columns - 1} so that at least one input column remains "
            "(the last `targets` columns are the targets, 0 for a features-only file; CLI: --targets)"
        )
    return int(targets)


def split_quoted(line):
    """Split a comma-separated line whose fields may be quoted with ' or "."""
    out, buf, quote, i = [], [], None, 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\" and i + 1 < len(line):
                buf.append(line[i + 1])
                i += 2
                continue
            if c == quote:
                quote = None
            else:
                buf.append(c)
        elif c in "'\"":
            quote = c
        elif c == ",":
            out.append("".join(buf).strip())
            buf = []
        else:
            buf.append(c)
        i += 1
    out.append("".join(buf).strip())
    return out


def split_fields(line):
    """Comma-separated fields of a line, honouring quotes only when the line has some."""
    if '"' in line or "'" in line:
        return split_quoted(line)
    return [t.strip() for t in line.split(",")]


#: The name given to a blank first header cell (see :func:`header_names`).
UNNAMED_FIRST = "unnamed1"


def header_names(cells, unquote_cell=None):
    """The column names when a first row is a header, else None.

    A header holds only names (cells that are neither numbers nor missing markers), except that its *leading* cells
    may be blank: the unnamed row-index column that pandas' ``to_csv`` and R's ``write.csv`` write first (two where a
    table read with its index was written again), named :data:`UNNAMED_FIRST`, ``unnamed2``, ... (names the row
    lacks). A row of numbers, or one with no name, is not a header. ``unquote_cell`` reads a cell (default
    :func:`unquote`).

    >>> header_names(["", "", "rownames", "a"]), header_names(["a", "", "b"])
    (['unnamed1', 'unnamed2', 'rownames', 'a'], None)
    """
    names = [(unquote_cell or unquote)(c) for c in cells]
    blanks = next((j for j, c in enumerate(names) if c.strip() != ""), len(names))
    rest, taken = names[blanks:], {c.strip().lower() for c in names}
    if not rest or any(is_number_or_missing(c.strip()) for c in rest):
        return None
    free = (f"unnamed{j}" for j in range(1, len(names) + blanks + 1) if f"unnamed{j}" not in taken)
    return [next(free) for _ in range(blanks)] + rest


def unquote(s):
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return s[1:-1]
    return s


#: the largest whole number every smaller one of which float64 holds exactly (2**53)
EXACT_INTEGERS = 2**53
