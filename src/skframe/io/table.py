"""Tables as people have them: any delimiter, decimal commas, compressed files, Parquet and Arrow.

:func:`read_table` reads a whole table into columns, without deciding what they mean (that
is :class:`skframe.preprocessing.TableEncoder`'s job):

* text files (CSV, TSV, ``|``-separated, possibly gzip/bz2/xz/zstd-compressed, recognised by
  content; see :mod:`skframe.io.compressed`): the delimiter is detected among ``,`` ``;`` tab and
  ``|`` from the first lines (the one that splits them into the same number of fields, more
  than one), or given; with a delimiter other than ``,``, numbers written with a decimal
  comma (``3,5``) are read as such when the file has no decimal point. Cells are kept as text;
* Parquet and Arrow/Feather files, through pyarrow (``pip install "skframe[parquet]"``): the
  size a Parquet file declares in its metadata (the uncompressed sizes of its row groups, and
  rows x columns x 8 bytes, the table it becomes) is checked against the size policy before
  any column is read; an Arrow file, batch by batch as it is mapped.

Every step is linear in the number of cells: a table of 10**6 columns is read column by column
once.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import numpy as np

from skframe.deps import require
from skframe.exceptions import DataFormatError, InvalidParameterError
from skframe.io._common import (
    MISSING_TOKENS,
    check_targets,
    header_names,
    is_number_or_missing,
    iter_lines,
    name_of,
    parse_number,
)
from skframe.io.arrow_bounds import (
    check_exact_integers,
    dictionary_cells,
    ipc_declared,
    parquet_declared,
    parquet_text_columns,
    read_row_group,
)
from skframe.io.columns import check_unique_names
from skframe.io.compressed import compression_of
from skframe.io.ends import arrow_failure, check_arrow_end
from skframe.io.formats import check_file, resolve_format
from skframe.limits import check, exceeded, limit

__all__ = ["Table", "read_table", "read_table_header", "read_numeric_table", "DELIMITERS", "split_line"]

#: Delimiters tried, in order of preference when several fit.
DELIMITERS = (",", ";", "\t", "|")
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
_SAMPLE_LINES = 50
_DECIMAL_COMMA = re.compile(r"^[-+]?\d*,\d+([eE][-+]?\d+)?$")
#: any white space (what str.strip removes): a line without it splits into fields that need no strip
_SPACE = re.compile(r"\s")


@dataclass
class Table:
    """A table read by :func:`read_table`.

    Attributes
    ----------
    names : list of str
        Column names (the header's, or ``x1``, ``x2``... when the file has none).
    columns : list of ndarray
        One array per column: text cells (object arrays) for text files; pyarrow's types for Parquet
        and Arrow files (numbers as float64, dates as datetime64, text as objects, None for missing).
    linenos : ndarray of int or None
        File line of each row (text files).
    info : dict
        How the file was read: ``format``, ``compression``, ``delimiter``, ``decimal``, ``header``.
    """

    names: list
    columns: list
    linenos: object = None
    info: dict = field(default_factory=dict)
    path: str = ""

    @property
    def n_rows(self):
        return len(self.columns[0]) if self.columns else 0

    def column(self, name):
        return self.columns[self.index[name]]

    @property
    def index(self):
        if not hasattr(self, "_index"):
            self._index = {n: j for j, n in enumerate(self.names)}
        return self._index


def split_line(line, delimiter):
    """The fields of one line, quotes (``"`` or ``'``) honoured only when the line has some."""
    if '"' not in line and "'" not in line:
        if _SPACE.search(line) is None:  # no white space to strip from any field (the usual line of numbers)
            return line.split(delimiter)
        return [t.strip() for t in line.split(delimiter)]
    out, buf, quote = [], [], None
    for c in line:
        if quote:
            if c == quote:
                quote = None
            else:
                buf.append(c)
        elif c in "'\"" and not "".join(buf).strip():
            quote = c
        elif c == delimiter:
            out.append("".join(buf).strip())
            buf = []
        else:
            buf.append(c)
    out.append("".join(buf).strip())
    return out


def _data_lines(path, n=None):
    for lineno, raw in iter_lines(path):
        line = raw.strip()
        if line and not line.startswith("#"):
            yield lineno, line
            if n is not None:
                n -= 1
                if n == 0:
                    return


def detect_delimiter(lines):
    """The delimiter of a few lines: of :data:`DELIMITERS`, the one that splits the first line in more than one
    field and the most other lines in as many (the first in order on a tie); ``","`` when none splits it."""
    best, best_score = ",", (0.0, 0)
    for d in DELIMITERS:
        # fields counted, not split (a line of 10**6 fields, four delimiters tried)
        counts = [line.count(d) + 1 if '"' not in line and "'" not in line else len(split_line(line, d))
                  for line in lines]
        if counts[0] < 2:
            continue
        score = (sum(c == counts[0] for c in counts) / len(counts), counts[0])
        if score > best_score:
            best, best_score = d, score
    return best


def _check_delimiter(delimiter):
    names = {"comma": ",", "semicolon": ";", "tab": "\t", "\\t": "\t", "pipe": "|"}
    d = names.get(str(delimiter).lower(), delimiter)
    if d not in DELIMITERS:
        raise InvalidParameterError(f"delimiter {delimiter!r} is not one of ',' ';' tab '|' "
                                    "(CLI: --delimiter ',' or ';' or tab or '|')")
    return d


def read_table_header(path, *, delimiter=None, fmt=None):
    """``(names or None, info)``: the header of a table file, reading only its first lines.

    ``info`` holds the ``format``, and for text files the ``delimiter``, ``text``: whether the first rows after
    the header hold a cell that is neither a number nor a missing marker, and ``codes``: whether one holds a number
    written with a leading zero (``01``)."""
    path = os.fspath(path)
    fmt = resolve_format(path, fmt)
    check_file(path)
    if fmt in ("parquet", "feather"):
        return _arrow_schema_names(path, fmt), {"format": fmt}
    sample = [line for _, line in _data_lines(path, _SAMPLE_LINES)]
    if not sample:
        raise DataFormatError(f"{name_of(path)} is empty; a table needs a header and rows")
    d = _check_delimiter(delimiter) if delimiter is not None else detect_delimiter(sample)
    first = split_line(sample[0], d)
    names = header_names(first, _unquote)
    cells = [c for line in sample[1:] for c in split_line(line, d)]
    text = any(not is_number_or_missing(c) for c in cells)
    codes = any(c[:1] == "0" and c[1:2].isdigit() for c in cells)  # 01, 007: codes, perhaps class labels
    return names, {"format": "csv", "delimiter": d, "text": text, "codes": codes}


def _unquote(s):
    return s[1:-1] if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"" else s


def read_table(path, *, delimiter=None, fmt=None):
    """Read a table file into a :class:`Table` of columns (see the module docstring).

    Parameters
    ----------
    path : str or path-like
    delimiter : {",", ";", "\\t", "|"}, optional
        Text files: the field delimiter (default: detected).
    fmt : {"csv", "parquet", "feather"}, optional
        Default: from the extension, else from the content.

    Returns
    -------
    Table
    """
    path = os.fspath(path)
    fmt = resolve_format(path, fmt)
    check_file(path)
    if fmt in ("parquet", "feather"):
        return _read_arrow(path, fmt)
    if fmt != "csv":
        raise InvalidParameterError(f"{name_of(path)} is a {fmt} file; read_table reads CSV, Parquet and Arrow files")
    sample = [line for _, line in _data_lines(path, _SAMPLE_LINES)]
    if not sample:
        raise DataFormatError(f"{name_of(path)} is empty; a table needs a header and rows")
    d = _check_delimiter(delimiter) if delimiter is not None else detect_delimiter(sample)
    rows, linenos, names, n_cols = [], [], None, None
    for lineno, line in _data_lines(path):
        cells = split_line(line, d)
        if n_cols is None:
            n_cols = len(cells)
            check("features", n_cols, f"{name_of(path)}, line {lineno}: the first row")
            names = header_names(cells, _unquote)
            if names is not None:
                continue
        if len(cells) != n_cols:
            raise DataFormatError(
                f"{name_of(path)}, line {lineno}: {len(cells)} fields but {n_cols} expected (from the "
                f"{'header' if names is not None else 'first row'}, split on {_DELIMITER_NAMES[d]}s); fix the "
                "row, or give the delimiter with --delimiter")
        rows.append(cells)
        linenos.append(lineno)
    if not rows:
        raise DataFormatError(f"{name_of(path)} has a header but no data rows; add rows")
    columns = [np.array(col, dtype=object) for col in zip(*rows)]
    del rows
    decimal = "."
    if d != ",":
        decimal = _decimal_of(columns)
        if decimal == ",":
            columns = [_with_decimal_points(col) for col in columns]
    check_unique_names(names, path)  # matched by name, one of two alike would be lost
    if names is None:
        names = [f"x{j + 1}" for j in range(n_cols)]
    info = {"format": "csv", "compression": compression_of(path), "delimiter": d, "decimal": decimal,
            "header": names is not None}
    return Table(names=names, columns=columns, linenos=np.asarray(linenos), info=info, path=path)


def _decimal_of(columns):
    """``","`` when some cells read as numbers with a decimal comma and none has a decimal point."""
    comma = False
    for col in columns:
        for cell in col[:200]:
            if cell in MISSING_TOKENS:
                continue
            if _DECIMAL_COMMA.match(cell):
                comma = True
            elif "." in cell and is_number_or_missing(cell):
                return "."
    return "," if comma else "."


def _with_decimal_points(col):
    out = col.copy()
    for i, cell in enumerate(col):
        if "," in cell and _DECIMAL_COMMA.match(cell):
            out[i] = cell.replace(",", ".")
    return out


def read_numeric_table(path, targets=1, columns=None, fmt=None):
    """A table of numbers only (any delimiter, decimal commas, Parquet, Arrow) as ``load_dataset`` reads it.

    Returns ``(X, Y, feature_names, target_names, linenos)`` with NaN for missing cells; a column that holds
    text is refused (with the hint to encode it with :class:`skframe.preprocessing.TableEncoder`).
    """
    table = read_table(path, fmt=fmt)
    names, n = table.names, len(table.names)
    if columns is None:
        k = check_targets(targets, n, path)
        f, t = list(range(n - k)), list(range(n - k, n))
    else:
        f, t = columns.resolve(names if table.info.get("header", True) else None, n, targets, path)
    out = []
    for j in f + t:
        col = np.asarray(table.columns[j])
        if col.dtype.kind in "fiub":
            out.append(np.asarray(col, dtype=np.float64))
            continue
        values = np.empty(col.shape[0])
        for i, cell in enumerate(col):
            try:
                values[i] = np.nan if cell is None else parse_number(str(cell).strip())
            except ValueError:
                where = f"line {int(table.linenos[i])}" if table.linenos is not None else f"row {i}"
                raise DataFormatError(
                    f"{name_of(path)}, {where}, column {names[j]!r}: {cell!r} is not a number; read tables of text, "
                    "categories and dates with skframe.preprocessing.TableEncoder (CLI: skframe fit reads them)"
                ) from None
        out.append(values)
    M = np.stack(out, axis=1) if out else np.zeros((table.n_rows, 0))
    return M[:, :len(f)], M[:, len(f):], [names[j] for j in f], [names[j] for j in t], table.linenos


# ---------------------------------------------------------------------------------------------- Parquet, Arrow
def _pyarrow(path, fmt):
    return require("pyarrow", f"the {fmt} file {name_of(path)}")


def _arrow_schema_names(path, fmt):
    pa = _pyarrow(path, fmt)
    if fmt == "parquet":
        import pyarrow.parquet as pq  # lazy: optional (the parquet extra)

        return list(pq.ParquetFile(path).schema_arrow.names)
    # lazy: optional (the parquet extra)
    import pyarrow.ipc  # noqa: F401

    with pa.memory_map(path, "r") as src:
        return list(_ipc_reader(pa, src).schema.names)


def _ipc_reader(pa, src):
    try:
        return pa.ipc.open_file(src)
    except pa.ArrowInvalid:
        src.seek(0)
        return pa.ipc.open_stream(src)


def _check_declared(path, declared):
    cap = limit("decompressed")
    if declared > cap:
        raise DataFormatError(exceeded("decompressed", declared, f"{name_of(path)} (its declared column sizes)"))
    on_disk = max(1, os.path.getsize(path))
    if declared > max(64 << 20, limit("expansion") * on_disk):
        raise DataFormatError(exceeded("expansion", -(-declared // on_disk),
                                       f"{name_of(path)} ({on_disk} bytes declaring {declared} bytes of columns)"))


def _read_arrow(path, fmt):
    pa = _pyarrow(path, fmt)
    check_arrow_end(path, fmt)  # a file cut short is refused, never read short
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq  # lazy: optional (the parquet extra)

            pf = pq.ParquetFile(path)
            meta = pf.metadata
            check("features", meta.num_columns, f"{name_of(path)}: the schema")
            # what the row groups declare (the footer's total row count is not trusted): their uncompressed
            # sizes, and the float64 table their rows become; text read as dictionaries (a repeated value once)
            rows, size = parquet_declared(meta)
            _check_declared(path, max(size, max(rows, int(meta.num_rows)) * int(meta.num_columns) * 8))
            pf = pq.ParquetFile(path, read_dictionary=parquet_text_columns(pf.schema_arrow))
            parts, decoded = [], 0
            for i in range(meta.num_row_groups):  # one row group at a time, charged before it is decoded
                parts.append(read_row_group(pf, i, decoded, lambda total: _check_declared(path, total), path))
                decoded += parts[-1].nbytes
                _check_declared(path, decoded)
            table = pa.concat_tables(parts) if parts else pf.schema_arrow.empty_table()
        else:
            # lazy: optional (the parquet extra)
            import pyarrow.ipc  # noqa: F401

            with pa.memory_map(path, "r") as src:
                # every buffer's decoded size (a compressed one states it) summed from the metadata first
                _check_declared(path, ipc_declared(src))
                src.seek(0)
                reader = _ipc_reader(pa, src)
                check("features", len(reader.schema.names), f"{name_of(path)}: the schema")
                batches, declared = [], 0
                for batch in (reader.get_batch(i) for i in range(reader.num_record_batches)) \
                        if hasattr(reader, "num_record_batches") else reader:
                    declared += batch.nbytes
                    _check_declared(path, declared)
                    batches.append(batch)
                table = pa.Table.from_batches(batches, schema=reader.schema)
    except (pa.ArrowException, OSError) as exc:
        raise arrow_failure(path, fmt, exc) from None
    check_unique_names([str(n) for n in table.column_names], path)
    columns = [_arrow_column(table.column(j), path, str(table.column_names[j])) for j in range(table.num_columns)]
    info = {"format": fmt, "compression": None, "delimiter": None, "decimal": None, "header": True}
    return Table(names=[str(n) for n in table.column_names], columns=columns, linenos=None, info=info, path=path)


def _arrow_column(chunked, path, name):
    import pyarrow as pa  # lazy: optional (the parquet extra)

    t = chunked.type
    if pa.types.is_integer(t):
        check_exact_integers(chunked, path, name)  # never rounded to float64 silently
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t):
        return np.asarray(chunked.cast(pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)
    if pa.types.is_timestamp(t) or pa.types.is_date(t):
        return np.asarray(chunked.cast(pa.timestamp("s")).to_numpy(zero_copy_only=False)).astype("datetime64[s]")
    if pa.types.is_dictionary(t):
        return dictionary_cells(chunked)  # a value repeated in every row held once, never copied per row
    values = chunked.to_pylist()
    return np.array([None if v is None else str(v) for v in values], dtype=object)
