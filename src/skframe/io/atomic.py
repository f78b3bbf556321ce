"""Atomic file writing: a reader sees either the previous file or the complete new one.

The data go to a temporary file in the destination's directory (same file system), which
is flushed and ``fsync``-ed, then renamed over the destination with :func:`os.replace`
(atomic on POSIX and Windows). If writing fails or is interrupted, the temporary file is
removed and the previous file is left untouched.
"""

from __future__ import annotations

import contextlib
import os
import tempfile

__all__ = ["atomic_write"]

_UMASK = os.umask(0)  # read once (os.umask can only be read by setting it)
os.umask(_UMASK)


@contextlib.contextmanager
def atomic_write(path, mode="wb"):
    """Context manager yielding a file object whose content replaces ``path`` on success.

    Parameters
    ----------
    path : str or path-like
        Destination; its directory must exist.
    mode : {"wb", "w"}, default="wb"
        Binary or text (UTF-8, ``\\n`` line ends) mode.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> with atomic_write(p, "w") as fh:
    ...     _ = fh.write("done\\n")
    >>> open(p).read()
    'done\\n'
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        kwargs = {"encoding": "utf-8", "newline": "\n"} if "b" not in mode else {}
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if os.path.exists(path):
            with contextlib.suppress(OSError):
                os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        else:  # the permissions open() would have given a new file
            os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if hasattr(os, "O_DIRECTORY"):
        with contextlib.suppress(OSError):
            dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
