"""Output destinations, checked before any work: what a command may write over, and where.

A command that writes files (``skframe fit --model-out``, ``skframe predict --out``, ``--png``)
calls :func:`check_destinations` first, with the files it reads, so that a long fit is never
wasted on a path it could not write, and nothing the user did not name is lost:

- a destination that exists must be a regular file: a directory, a device (``/dev/null``), a
  FIFO or a socket is refused;
- a destination that is the same file as an input of the command (compared by device and inode,
  through symbolic links and hard links) is refused: ``skframe fit tr.csv --model-out tr.csv``
  would otherwise replace the data with the model;
- two destinations of one command may not be the same file;
- the destination's folder must exist and accept a new file (a temporary file is created there
  and removed at once), so a missing, read-only or full folder fails before the fit;
- an expected suffix (``.png``, ``.csv``/``.npz``) is checked.

The inputs are also remembered (:func:`skframe.io.atomic.protect`): when the result is renamed into
place, the destination is resolved and compared with each of them again, so a symbolic link
re-pointed at an input during a long fit is refused then too, the result kept beside it.

Symbolic links: a destination that is a symbolic link is written **through** the link. The link
stays as it is and the file it points to is replaced (atomically, by a temporary file in the
target's folder), as a shell's ``>`` would write to it; the checks above apply to the target. A
link whose target does not exist yet creates that target. :func:`resolve_destination` gives the
path that is actually written; :mod:`skframe.io.atomic`, where it lives, uses it for every write.
"""

from __future__ import annotations

import contextlib
import os
import tempfile

from skframe.exceptions import InvalidParameterError
from skframe.io.atomic import _label, owned_name, protect, resolve_destination

__all__ = ["resolve_destination", "check_destination", "check_destinations", "same_file"]

def same_file(a, b):
    """True when paths ``a`` and ``b`` exist and are the same file (device and inode, links followed)."""
    try:
        sa, sb = os.stat(a), os.stat(b)
    except (OSError, ValueError):
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _probe(folder, path, option):
    """Create and remove a file in ``folder``: a missing, read-only or full folder fails now, naming ``path``."""
    if not os.path.isdir(folder):
        raise InvalidParameterError(f"{_label(path, option)}: the folder {folder} does not exist; create it or "
                                    "give a path in an existing folder")
    try:
        fd, tmp = tempfile.mkstemp(prefix=owned_name("." + os.path.basename(path) + "."), suffix=".tmp",
                                   dir=folder)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise InvalidParameterError(f"{_label(path, option)}: cannot create a file in the folder {folder} "
                                    f"({reason}); choose a writable folder") from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def check_destination(path, option=None, *, inputs=(), suffixes=None, probe=True):
    """Check one destination before any work; return the path that will be written (see the module docstring).

    Parameters
    ----------
    path : str or path-like
        The destination as the user gave it.
    option : str, optional
        The option that named it (``"--model-out"``), for the messages.
    inputs : iterable of (str, path)
        ``(what, path)`` of each file the command reads (``("DATA", "t.csv")``); missing ones are skipped.
    suffixes : tuple of str, optional
        Accepted file-name suffixes (lower case, with the dot).
    probe : bool, default=True
        Create and remove a file in the destination's folder to check that it accepts one.

    Raises
    ------
    InvalidParameterError
        One line naming the destination, what is wrong and the fix.
    """
    path = os.fspath(path)
    real = resolve_destination(path, option)
    for what, source in inputs:
        if source is not None and same_file(real, source):
            raise InvalidParameterError(f"{_label(path, option)} is the same file as {what} {source}; writing it "
                                        "would replace what the command reads: give another file name")
    if suffixes and os.path.splitext(path)[1].lower() not in suffixes:
        raise InvalidParameterError(f"{_label(path, option)}: use a file name ending in "
                                    f"{' or '.join(suffixes)}")
    if probe:
        _probe(os.path.dirname(os.path.abspath(real)) or ".", path, option)
    return real


def check_destinations(outputs, inputs=()):
    """Check several destinations of one command (``[(option, path)]``, None paths skipped), and that no two are
    the same file; remember the inputs for the moment each file is renamed into place (:func:`protect`).
    Returns ``{option: path written}``."""
    inputs = list(inputs)
    protect(inputs)
    seen, out = [], {}
    for option, path, *rest in outputs:
        if path is None:
            continue
        suffixes = rest[0] if rest else None
        real = check_destination(path, option, inputs=inputs, suffixes=suffixes)
        for other_option, other in seen:
            if os.path.abspath(real) == os.path.abspath(other) or same_file(real, other):
                raise InvalidParameterError(f"{option} {path} and {other_option} name the same file; give "
                                            "each output its own file name")
        seen.append((option, real))
        out[option] = real
    return out
