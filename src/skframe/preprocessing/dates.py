"""Dates in table cells: the format a column is written in, seconds since 1970-01-01, the four date features.

A column is read as dates when every present cell fits **one** format:

* ISO 8601: ``2024-05-17``, ``2024-05``, ``2024-05-17 13:30``, ``2024-05-17T13:30:00`` (seconds may have a
  fraction; a ``Z`` or ``+02:00`` offset is turned into UTC);
* :data:`DATE_FORMATS` (``17/05/2024``, ``05/17/2024``, ``2024/05/17``, ``17.05.2024``, ``17-05-2024``,
  ``05-17-2024``, ``2024-5-7``, ``17/05/24``, ``05/17/24``, ``17.05.24``, ``17 May 2024``, ``17 January 2024``,
  ``17-May-2024``, ``17-May-24``, ``May 17, 2024``, ``January 17, 2024``), each cell optionally followed by a
  time of day ``13:30`` or ``13:30:00``. Two-digit years are those of ``datetime.strptime``: ``00``-``68`` are
  2000-2068, ``69``-``99`` are 1969-1999. Month names are English (``May``, ``Sep``, ``September``).

**Day and month.** ``17/05/2024`` and ``05/17/2024`` are written alike; one value decides: a first number above
12 is a day (day first), a second one above 12 is a day (month first). When no value decides (every day of the
column is 12 or less) the day is taken first, and the column's reason says so (``day first assumed``);
``column_types={name: "date-mdy"}`` (CLI ``--column-types NAME=date-mdy``) reads such a column month first, and
``"date-dmy"`` day first. A column that holds both orders (``17/05/2024`` and ``05/17/2024``) is refused.

**Clock words** (``today``, ``now``, ``yesterday``, ``tomorrow``) are never dates: their date would change with
the day the table is read. They are text (a category) like any other word.

Parsing is linear in the cells: each distinct cell is parsed once.
"""

from __future__ import annotations

import re
from datetime import datetime

import numpy as np

__all__ = ["DATE_FORMATS", "DATE_PARTS", "DATE_ORDER_TYPES", "DAY_MONTH_PAIRS", "date_format", "date_seconds",
           "date_features", "date_reason", "date_spec", "mixed_orders", "READ_EXAMPLES", "is_date_format"]

#: The date formats read besides ISO 8601, in order of preference (a column must fit one of them entirely); a
#: time of day (:data:`TIMES`) may follow each cell.
DATE_FORMATS = ("%d/%m/%Y", "%m/%d/%Y", "%Y/%m/%d", "%d.%m.%Y", "%d-%m-%Y", "%m-%d-%Y", "%Y-%m-%d",
                "%d/%m/%y", "%m/%d/%y", "%d.%m.%y",
                "%d %b %Y", "%d %B %Y", "%d-%b-%Y", "%d-%b-%y", "%b %d, %Y", "%B %d, %Y")
#: The times of day that may follow a date of :data:`DATE_FORMATS`.
TIMES = ("", " %H:%M", " %H:%M:%S")
#: The formats written alike but for the order of day and month: ``(day first, month first)``.
DAY_MONTH_PAIRS = (("%d/%m/%Y", "%m/%d/%Y"), ("%d-%m-%Y", "%m-%d-%Y"), ("%d/%m/%y", "%m/%d/%y"))
#: The column types that choose the order of day and month (``column_types``; CLI ``--column-types``).
DATE_ORDER_TYPES = {"date-dmy": "dmy", "date-mdy": "mdy"}
#: Formats saved by earlier versions of the encoding (read back as they were written).
_LEGACY_FORMATS = ("%Y-%m-%d %H:%M", "%d/%m/%Y %H:%M")
#: The features a date column becomes.
DATE_PARTS = ("days", "year", "month", "weekday")
#: The date formats read, as examples (for messages).
READ_EXAMPLES = "ISO 2024-05-17, 17/05/2024, 05/17/2024, 2024/05/17, 17.05.2024, 17-05-2024, 17/05/24, 17 May 2024, " \
                "17-May-2024, May 17, 2024 (a time 13:30 may follow)"

_ISO = re.compile(r"(?P<date>\d{4}-\d{2}(?:-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)?)?)"
                  r"(?P<tz>Z|[+-]\d{2}:?\d{2})?|NaT")
_GIVEN = {"dmy": " day first", "mdy": " month first"}
_EPOCH = datetime(1970, 1, 1)
_EXAMPLE = datetime(2024, 5, 17)
_DAY_FIRST = {d for d, _ in DAY_MONTH_PAIRS}
_MONTH_FIRST = {m for _, m in DAY_MONTH_PAIRS}
_OTHER_ORDER = {**{d: m for d, m in DAY_MONTH_PAIRS}, **{m: d for d, m in DAY_MONTH_PAIRS}}


def is_date_format(fmt):
    """Whether ``fmt`` is a format an encoding may hold (``"iso"``, :data:`DATE_FORMATS`, or an earlier one)."""
    return fmt == "iso" or fmt in DATE_FORMATS or fmt in _LEGACY_FORMATS


def _iso_seconds(value):
    """Seconds since 1970-01-01 (UTC) of an ISO 8601 cell; NaN for ``NaT``; ValueError when it is not one."""
    m = _ISO.fullmatch(value)
    if m is None:
        raise ValueError(value)
    if value == "NaT":
        return np.nan
    seconds = float(np.datetime64(m["date"].replace(" ", "T"), "s").astype(np.int64))  # checks day and month
    tz = m["tz"]
    if tz and tz != "Z":
        digits = tz[1:].replace(":", "")
        offset = int(digits[:2]) * 3600 + int(digits[2:]) * 60
        seconds -= offset if tz[0] == "+" else -offset
    return seconds


_SHAPE_PARTS = {"%d": r"\s?\d{1,2}", "%m": r"\s?\d{1,2}", "%Y": r"\d{4}", "%y": r"\d{2}", "%b": r"[^\W\d_]+",
                "%B": r"[^\W\d_]+", "%H": r"\s?\d{1,2}", "%M": r"\s?\d{1,2}", "%S": r"\s?\d{1,2}"}
_SHAPES = {}


def _shape(fmt):
    """A regular expression that every cell ``strptime`` reads in ``fmt`` (a time of day may follow) matches: a
    cheap test first, so that a column of text costs microseconds a format instead of a ``strptime`` call each."""
    if fmt not in _SHAPES:
        parts = re.split(r"(%[a-zA-Z]|\s+)", fmt)
        body = "".join(_SHAPE_PARTS.get(p, r"\s+" if p.isspace() else re.escape(p)) for p in parts if p)
        _SHAPES[fmt] = re.compile(body + r"(?:\s+\d{1,2}:\s?\d{1,2}(?::\s?\d{1,2})?)?", re.IGNORECASE)
    return _SHAPES[fmt]


def _any_shape():
    """One regular expression that every cell of every format of :data:`DATE_FORMATS` matches."""
    if "" not in _SHAPES:
        _SHAPES[""] = re.compile("|".join(f"(?:{_shape(f).pattern})" for f in DATE_FORMATS), re.IGNORECASE)
    return _SHAPES[""]


def _format_seconds(value, fmt):
    """Seconds since 1970-01-01 of a cell written in ``fmt`` (a time of day may follow); ValueError otherwise."""
    if not _shape(fmt).fullmatch(value):
        raise ValueError(value)
    for time in TIMES if fmt not in _LEGACY_FORMATS else ("",):
        try:
            return (datetime.strptime(value, fmt + time) - _EPOCH).total_seconds()
        except ValueError:
            continue
    raise ValueError(value)


def _seconds(value, fmt):
    return _iso_seconds(value) if fmt == "iso" else _format_seconds(value, fmt)


def _fits(values, fmt):
    for v in values:
        try:
            _seconds(v, fmt)
        except (ValueError, OverflowError):
            return False
    return True


def date_format(values, order=None):
    """``"iso"`` or the format of :data:`DATE_FORMATS` that reads every value (distinct text cells), else None.

    ``order`` (``"dmy"`` or ``"mdy"``) leaves out the formats of the other order of day and month; without it a
    day-first format is preferred when both read every value (see the module docstring).
    """
    values = [str(v) for v in values]
    if not values:
        return None
    if _fits(values, "iso"):
        return "iso"
    if not all(_any_shape().fullmatch(v) for v in values):  # a word no format can read: no format tried
        return None
    left_out = _MONTH_FIRST if order == "dmy" else _DAY_FIRST if order == "mdy" else ()
    for fmt in DATE_FORMATS:
        if fmt not in left_out and _fits(values, fmt):
            return fmt
    return None


def mixed_orders(values):
    """Two values, ``(day first, month first)``, when every value is a date of a pair of :data:`DAY_MONTH_PAIRS`
    but no one order reads them all (``17/05/2024`` and ``05/17/2024`` in one column); else None."""
    values = [str(v) for v in values]
    if not all(_any_shape().fullmatch(v) for v in values):
        return None
    for day, month in DAY_MONTH_PAIRS:
        only_day = only_month = None
        for v in values:
            d, m = _fits([v], day), _fits([v], month)
            if not (d or m):
                break
            if d and not m and only_day is None:
                only_day = v
            if m and not d and only_month is None:
                only_month = v
        else:
            if only_day is not None and only_month is not None:
                return only_day, only_month
    return None


def date_reason(name, fmt, values, order=None):
    """The reason a report gives for a date column: the format read as an example, and how day and month were
    told apart (a deciding value, the order given, or the order assumed)."""
    if fmt == "iso":
        return "dates (ISO 2024-05-17)"
    if fmt in _LEGACY_FORMATS or fmt not in _OTHER_ORDER:
        return f"dates ({_EXAMPLE.strftime(fmt)})"
    first = "day first" if fmt in _DAY_FIRST else "month first"
    example = _EXAMPLE.strftime(fmt)
    if order is not None:
        return f"dates ({example}, {first} as given)"
    other = _OTHER_ORDER[fmt]
    deciding = next((str(v) for v in values if not _fits([str(v)], other)), None)
    if deciding is not None:
        return f"dates ({example}, {first}: {deciding!r} has a day above 12)"
    return (f"dates ({example}, day first assumed: no day above 12 tells; --column-types {name}=date-mdy reads "
            "them month first)")


def date_spec(name, values, forced=None, where=None):
    """``(spec, problem)`` of a column of text cells as dates: the encoder's spec of a date column, or a problem
    line (dates written in both orders of day and month; a column given as dates that holds other cells), or
    ``(None, None)`` when the column is no dates and none was asked.

    ``values`` are its distinct present cells; ``forced`` is the type given for it (``"date"``, ``"date-dmy"``,
    ``"date-mdy"`` or None); ``where(value)`` says where a value is in the file (``" (line 7)"``), for messages.
    """
    order = DATE_ORDER_TYPES.get(forced)
    fmt = date_format(values, order)
    if fmt is not None:
        reason = date_reason(name, fmt, values, order) + (" (forced)" if forced == "date" else "")
        return {"name": name, "type": "date", "reason": reason, "date_format": fmt}, None
    mixed = mixed_orders(values) if order is None else None
    if mixed is not None:
        return None, (f"column {name!r} holds dates written day first ({mixed[0]!r}) and month first "
                      f"({mixed[1]!r}): write them in one order (ISO 2024-05-17 tells them apart), or read the "
                      f"column as categories with --column-types {name}=categorical")
    if forced is None:
        return None, None
    example = next((str(v) for v in values if date_format([v], order) is None), str(values[0]))
    return None, (f"column {name!r} was given as dates{_GIVEN.get(order, '')} but not every cell is "
                  f"one, e.g. {example!r}{where(example) if where else ''}; dates read: {READ_EXAMPLES}: fix the "
                  f"cells, or read it as categories with --column-types {name}=categorical")


def date_seconds(text, missing, fmt):
    """``(seconds, bad)``: seconds since 1970-01-01 of date cells in ``fmt`` (NaN where missing or unreadable),
    and the mask of the present cells that are not dates in ``fmt``."""
    out = np.full(text.shape[0], np.nan)
    bad = np.zeros(text.shape[0], dtype=bool)
    present = np.flatnonzero(~missing)
    if present.size == 0:
        return out, bad
    index = {}  # each distinct cell once, without a fixed-width copy (one long cell would size them all)
    cells = [str(v) for v in text[present]]
    inverse = np.fromiter((index.setdefault(v, len(index)) for v in cells), dtype=np.intp, count=len(cells))
    parsed = np.full(len(index), np.nan)
    unreadable = np.zeros(len(index), dtype=bool)
    for k, v in enumerate(index):
        try:
            parsed[k] = _seconds(str(v), fmt)
        except (ValueError, OverflowError):
            unreadable[k] = True
    out[present] = parsed[inverse]
    bad[present] = unreadable[inverse]
    return out, bad


def date_features(seconds):
    """Days since 1970-01-01, year, month and weekday (0 = Monday) of seconds since the epoch (NaN kept)."""
    ok = ~np.isnan(seconds)
    out = np.full((seconds.shape[0], 4), np.nan)
    out[:, 0] = seconds / 86400.0
    stamps = np.floor(seconds[ok]).astype(np.int64).astype("datetime64[s]")
    years = stamps.astype("datetime64[Y]")
    months = stamps.astype("datetime64[M]")
    days = stamps.astype("datetime64[D]").astype(np.int64)
    out[ok, 1] = years.astype(np.int64) + 1970
    out[ok, 2] = (months - years.astype("datetime64[M]")).astype(np.int64) + 1
    out[ok, 3] = (days + 3) % 7  # 1970-01-01 was a Thursday
    return out
