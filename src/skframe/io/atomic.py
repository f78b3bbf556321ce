"""Atomic file writing: a reader sees either the previous file or the complete new one.

The data go to one temporary file in the destination's directory (same file system), which
is flushed and ``fsync``-ed, optionally checked (``verify``), then renamed over the destination
with :func:`os.replace` (atomic on POSIX and Windows). If writing or the check fails, or the
process is interrupted (Ctrl-C; ``skframe`` also turns SIGTERM into an interrupt), the temporary
file is removed and the previous file is left untouched.

Leftovers of killed processes. A process killed outright (SIGKILL, a power cut) cannot remove
its temporary file. The file is named ``.<name>.skframe-<host>-<pid>-<random>.tmp`` (``host`` a
short hash of the machine's name, ``pid`` the writing process), and every write into a directory
first removes the temporary files there that were left by processes of this machine that no
longer run (checked with ``os.kill(pid, 0)``; never on Windows, where that call would end the
process). :func:`remove_stale` does the same for folders, such as the spill folders of
``skframe fit --memory-budget`` in the system's temporary directory. :func:`owned_name` gives
such names.

Destinations. A destination that is a symbolic link is written through: the file it points to is
replaced and the link kept (:func:`resolve_destination`). One that is a directory, a device, a
FIFO or a socket is refused before anything is written. :mod:`skframe.io.destinations` checks
a command's destinations before any work, and names the files the command reads (:func:`protect`):
at the moment of the rename the destination is resolved again and compared (device and inode) with
each of them, so a link re-pointed at an input while the command ran never replaces that input. Such
a write is refused with one :class:`~skframe.exceptions.InvalidParameterError`; the complete result
is kept beside the destination as ``<name>.<pid>.kept``, and that path is named in the message.

Test hook: when the environment variable ``SKFRAME_TEST_PAUSE_BEFORE_REPLACE`` names a file, a
write creates that file once the temporary file is complete (and checked), then waits before the
rename until the file is removed, for up to 10 seconds, so that a test can signal the process inside
the save window, or change the destination and let the write go on by removing the file
(``SKFRAME_TEST_PAUSE_AFTER_REPLACE``: the same just after the rename). They are meant for tests only.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import shutil
import socket
import stat
import tempfile
import time

from skframe.exceptions import InvalidParameterError

__all__ = ["atomic_write", "atomic_path", "owned_name", "remove_stale", "process_alive", "writes",
           "resolve_destination", "protect"]

_UMASK = os.umask(0)  # read once (os.umask can only be read by setting it)
os.umask(_UMASK)

#: environment variable of the test hook that pauses a write in its save window (see the module docstring)
PAUSE_HOOK = "SKFRAME_TEST_PAUSE_BEFORE_REPLACE"
#: the same after the rename (the destination complete, the command not yet ended)
PAUSE_AFTER_HOOK = "SKFRAME_TEST_PAUSE_AFTER_REPLACE"
_PAUSE_SECONDS = 10.0
_HOST = hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]
_OWNED = re.compile(r"skframe-(?:[a-z]+-)?([0-9a-f]{8})-([0-9]+)-[A-Za-z0-9_]+(?:\.tmp)?$")


def owned_name(prefix="", kind=""):
    """``prefix + "skframe-[kind-]<host>-<pid>-"``: the start of a temporary name that :func:`remove_stale` knows.

    ``tempfile`` appends a random part (and a suffix such as ``".tmp"`` for files);
    ``kind`` (lower-case letters) says what the name is for, e.g. ``"stream"`` for spill folders.

    >>> owned_name(".m.skf.").startswith(".m.skf.skframe-")
    True
    """
    return f"{prefix}skframe-{kind + '-' if kind else ''}{_HOST}-{os.getpid()}-"


def process_alive(pid):
    """True unless process ``pid`` of this machine is known to have ended (always True on Windows)."""
    if os.name == "nt" or pid <= 0:  # os.kill(pid, 0) would end the process on Windows
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. PermissionError: it runs, as another user
        return True
    return True


def remove_stale(directory, *, folders=False):
    """Remove the temporary files (or, with ``folders``, folders) in ``directory`` left by ended processes.

    Only names made with :func:`owned_name` on this machine are considered, and only those whose
    process no longer runs are removed; anything that cannot be removed is left as it is.

    Returns
    -------
    int
        The number of entries removed.
    """
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for entry in entries:
        found = _OWNED.search(entry.name)
        if found is None or found.group(1) != _HOST or process_alive(int(found.group(2))):
            continue
        with contextlib.suppress(OSError):
            if folders and entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
                removed += 1
            elif not folders and entry.is_file(follow_symlinks=False) and entry.name.endswith(".tmp"):
                os.unlink(entry.path)
                removed += 1
    return removed


_KINDS = ((stat.S_ISDIR, "a directory", "give a file name inside it"),
          (stat.S_ISCHR, "a character device", "give a regular file's name"),
          (stat.S_ISBLK, "a block device", "give a regular file's name"),
          (stat.S_ISFIFO, "a FIFO (named pipe)", "give a regular file's name"),
          (stat.S_ISSOCK, "a socket", "give a regular file's name"))


def _label(path, option):
    return f"{option} {path}" if option else str(path)


def resolve_destination(path, option=None):
    """The path written for destination ``path``: the file itself, or the target of a symbolic link.

    Raises :class:`~skframe.exceptions.InvalidParameterError` when what exists at the path (or at its
    link's target) is not a regular file.
    """
    path = os.fspath(path)
    real = os.path.realpath(path) if os.path.islink(path) else path
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return real
    except OSError:  # e.g. a folder on the way that cannot be searched: the write says it, naming the path
        return real
    if not stat.S_ISREG(st.st_mode):
        what, fix = next(((w, f) for test, w, f in _KINDS if test(st.st_mode)),
                         ("not a regular file", "give a regular file's name"))
        via = f" (the symbolic link points to {real})" if real != path else ""
        raise InvalidParameterError(f"{_label(path, option)} is {what}{via}; skframe writes a new file and renames "
                                    f"it over the destination: {fix}")
    return real


def _pause_for_tests(hook=PAUSE_HOOK):
    marker = os.environ.get(hook)
    if not marker:
        return
    with open(marker, "w") as fh:
        fh.write(str(os.getpid()))
    end = time.monotonic() + _PAUSE_SECONDS
    while os.path.exists(marker) and time.monotonic() < end:
        time.sleep(0.01)


#: the files the command under way reads, which no write may replace: ``[(what, path, (st_dev, st_ino))]``
_INPUTS = []


def protect(inputs):
    """Name the files the command under way reads (``[(what, path)]``, None paths skipped; replaces earlier ones).

    Every later write of this module resolves its destination again just before the rename and refuses it when
    it is then one of these files (device and inode, as remembered now or as the path names at that moment): a
    symbolic link re-pointed at an input while a long fit ran never replaces the input.
    """
    _INPUTS.clear()
    for what, path in inputs:
        if path is None:
            continue
        with contextlib.suppress(OSError, ValueError):
            st = os.stat(path)
            _INPUTS.append((what, os.fspath(path), (st.st_dev, st.st_ino)))


def _input_at(real):
    """``(what, path)`` of the protected input that ``real`` is now, else None."""
    try:
        st = os.stat(real)
    except (OSError, ValueError):
        return None
    key = (st.st_dev, st.st_ino)
    for what, path, then in _INPUTS:
        try:
            now = os.stat(path)
        except (OSError, ValueError):
            now = None
        if key == then or (now is not None and key == (now.st_dev, now.st_ino)):
            return what, path
    return None


def _changed(path, real):
    """Why ``path`` may not be replaced now (it was resolved to ``real`` when the write began), else None."""
    try:
        now = resolve_destination(path)
    except InvalidParameterError as exc:
        return str(exc)
    found = _input_at(now)
    if found is not None:
        via = f" (through the symbolic link, {now})" if now != path else ""
        return f"{path} is now the same file as {found[0]} {found[1]}{via}: replacing it would destroy what the " \
               "command read"
    if os.path.abspath(now) != os.path.abspath(real):
        return f"{path} was re-pointed from {real} to {now} while the result was being written"
    return None


def _keep(tmp, path, directory):
    """Move the complete temporary file to ``<name>.<pid>[.<n>].kept`` in ``directory``; return that path."""
    base = os.path.join(directory, f"{os.path.basename(path)}.{os.getpid()}")
    for n in range(100):
        kept = f"{base}.{n}.kept" if n else f"{base}.kept"
        try:
            os.link(tmp, kept)  # fails on an existing name (a link there is never written through)
        except FileExistsError:
            continue
        except OSError:  # a file system without hard links: rename (replaces the name itself, never a link target)
            os.replace(tmp, kept)
            return kept
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return kept
    return tmp


def _named(exc, path, tmp=None):
    """``exc`` as an OSError naming the user's ``path``, not the temporary file (errors about other files: as is)."""
    if tmp is not None and exc.filename not in (None, tmp):
        return exc  # e.g. an input file read while writing
    if exc.errno is not None:
        return type(exc)(exc.errno, exc.strerror or str(exc), path)
    return OSError(f"{exc}: {path}")


def _finish(tmp, path, directory, user_path=None):
    if os.path.exists(path):
        with contextlib.suppress(OSError):
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
    else:  # the permissions open() would have given a new file
        os.chmod(tmp, 0o666 & ~_UMASK)
    _pause_for_tests()
    reason = _changed(user_path or path, path)  # the destination resolved again at the moment of the rename
    if reason is not None:
        kept = _keep(tmp, user_path or path, directory)
        raise InvalidParameterError(f"{reason}; nothing was replaced: the result is kept in {kept}; move it "
                                    "where it belongs, or run the command again with another output file")
    os.replace(tmp, path)
    _WRITES["written"].append(_WRITES["writing"] or path)
    _WRITES["writing"] = None
    _pause_for_tests(PAUSE_AFTER_HOOK)
    if hasattr(os, "O_DIRECTORY"):
        with contextlib.suppress(OSError):
            dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)


def _temporary(path):
    """``(fd, tmp, directory, real)``: a new temporary file beside the file ``path`` names, after removing stale
    ones; ``real`` is the file replaced (the target of a symbolic link: :func:`resolve_destination`)."""
    path = os.fspath(path)
    real = resolve_destination(path)  # refuses a directory, a device, a FIFO, a socket
    directory = os.path.dirname(os.path.abspath(real))
    if not os.path.isdir(directory):
        raise FileNotFoundError(errno.ENOENT, f"the folder {directory} does not exist", path)
    remove_stale(directory)
    try:
        fd, tmp = tempfile.mkstemp(prefix=owned_name("." + os.path.basename(real) + "."), suffix=".tmp",
                                   dir=directory)
    except OSError as exc:
        raise _named(exc, path) from exc
    _WRITES["writing"] = path
    return fd, tmp, directory, real


#: what this process writes: ``writing`` (the destination of the write under way, or None), ``written`` (the
#: destinations replaced so far) and ``removed`` (those whose unfinished write was removed); the command line's
#: interruption message reads it
_WRITES = {"writing": None, "written": [], "removed": []}


def _abandoned():
    if _WRITES["writing"] is not None:
        _WRITES["removed"].append(_WRITES["writing"])
    _WRITES["writing"] = None


def writes():
    """``(written, unfinished)``: the destinations written completely by this process, and those whose write was
    under way or abandoned (their temporary file removed, the destination left as it was)."""
    unfinished = _WRITES["removed"] + ([_WRITES["writing"]] if _WRITES["writing"] is not None else [])
    return list(_WRITES["written"]), unfinished


@contextlib.contextmanager
def _moved_into_place(path, tmp, directory, real, verify):
    """The body writes ``tmp``; then ``verify(tmp)`` and the atomic move onto ``path``. An OSError of the body
    names ``path``, not the temporary file; on any failure ``tmp`` is removed."""
    try:
        try:
            yield
        except OSError as exc:
            named = _named(exc, path, tmp)
            if named is exc:
                raise
            raise named from exc
        if verify is not None:
            verify(tmp)
        _finish(tmp, real, directory, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        _abandoned()
        raise


@contextlib.contextmanager
def atomic_write(path, mode="wb", *, verify=None):
    """Context manager yielding a file object whose content replaces ``path`` on success.

    Parameters
    ----------
    path : str or path-like
        Destination; its directory must exist.
    mode : {"wb", "w"}, default="wb"
        Binary or text (UTF-8, ``\\n`` line ends) mode.
    verify : callable, optional
        Called with the temporary file's path once it is complete; an exception it raises
        leaves ``path`` untouched (and the temporary file removed).

    Raises
    ------
    OSError
        When the file cannot be written (a missing folder, a full disk): it names ``path``,
        not the temporary file.

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
    fd, tmp, directory, real = _temporary(path)
    kwargs = {"encoding": "utf-8", "newline": "\n"} if "b" not in mode else {}
    with _moved_into_place(path, tmp, directory, real, verify), os.fdopen(fd, mode, **kwargs) as fh:
        yield fh
        fh.flush()
        os.fsync(fh.fileno())


def atomic_path(path, write, *, verify=None):
    """Call ``write(tmp)`` with a temporary path beside ``path``, then move it onto ``path`` atomically.

    For writers that take a path rather than a file object; the same guarantees as
    :func:`atomic_write` (one temporary file, removed on any failure; ``verify(tmp)`` before
    the move; a replaced file keeps its permissions, a new one gets those ``open`` gives).

    Returns
    -------
    str
        ``path``.
    """
    path = os.fspath(path)
    fd, tmp, directory, real = _temporary(path)
    os.close(fd)
    with _moved_into_place(path, tmp, directory, real, verify):
        write(tmp)
    return path
