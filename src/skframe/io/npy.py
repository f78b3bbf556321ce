"""NumPy files: ``.npz`` archives and memory-mapped ``.npy`` arrays.

``.npz`` (read with ``allow_pickle=False``)
    Targets under ``Y`` (or ``y``; 1-D means one target). Dense inputs under ``X``;
    sparse inputs as CSR arrays ``X_data``, ``X_indices``, ``X_indptr``, ``X_shape`` (or
    unprefixed ``data``, ``indices``, ``indptr``, ``shape`` [, ``format``] as written by
    :func:`scipy.sparse.save_npz`). Optional ``feature_names`` and ``target_names``.

``.npy`` (memory-mapped read-only with ``numpy.load(mmap_mode="r")``)
    Either ONE 2-D array whose last ``targets`` columns are the targets, or a PAIR of
    files: the features array and a targets array (1-D or 2-D) given as ``y_path``. Rows
    are then read from disk on demand, so files larger than memory can be used; ``X`` and
    ``Y`` are read-only views of the files.
"""

from __future__ import annotations

import os
import zipfile

import numpy as np
import scipy.sparse as sp

from skframe.exceptions import DataFormatError
from skframe.io._common import check_targets, name_of
from skframe.io.ends import check_npy_end, check_zip_end
from skframe.limits import archive_member_impossible, check

__all__ = ["read_npz", "npz_names", "write_npz", "open_npy"]


_MAX_NPY_HEADER = 1 << 16


def _member_shapes(fh, path):
    """``{key: shape}`` of the archive's members, after checking what each claims; nothing large is read.

    Every member must fit in the file as the zip directory places it; a compressed member may
    decompress to at most ``expansion`` (:mod:`skframe.limits`) times its compressed size (plus
    1 MiB), all of them together to at most ``decompressed`` bytes; and each member's ``.npy``
    header (read from its first bytes) must declare no more data than the member holds. The
    arrays are then read within these bounds.
    """
    name = name_of(path)
    file_size = os.path.getsize(path)
    shapes, inflated = {}, 0
    for info in fh.zip.infolist():
        member = info.filename
        bad = archive_member_impossible(info, file_size, f"{name}: member {member!r}", "so its data", DataFormatError)
        if info.compress_type != zipfile.ZIP_STORED:
            inflated += info.file_size
        if bad:
            raise DataFormatError(f"{name}: member {member!r} declares sizes that a {file_size}-byte file cannot "
                                  "hold; the archive is truncated or corrupted")
        if not member.endswith(".npy"):
            continue
        with fh.zip.open(info) as fp:
            version = np.lib.format.read_magic(fp)
            reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                np.lib.format.read_array_header_2_0
            shape, _, dtype = reader(fp, max_header_size=_MAX_NPY_HEADER)
            header_end = fp.tell()
        nbytes = dtype.itemsize
        for n in shape:
            nbytes *= int(n)
        if header_end + nbytes > info.file_size:
            raise DataFormatError(f"{name}: member {member!r} declares an array of shape {tuple(shape)} "
                                  f"({nbytes} bytes) but holds {info.file_size} bytes; the archive is corrupted")
        shapes[member[:-4]] = tuple(int(n) for n in shape)
    check("decompressed", inflated, f"{name}: the archive")
    return shapes


def _sparse_x(fh, keys, path):
    pre = "X_" if "X_data" in keys else ""
    need = [pre + k for k in ("data", "indices", "indptr", "shape")]
    if not all(k in keys for k in need):
        raise DataFormatError(
            f"{name_of(path)} has keys {sorted(keys)}; expected 'X' (dense) or "
            "'X_data', 'X_indices', 'X_indptr', 'X_shape' (sparse CSR; 'data', 'indices', 'indptr', "
            "'shape' as written by scipy.sparse.save_npz also work) and 'Y' or 'y'"
        )
    layout = "csr"
    if pre + "format" in keys:
        layout = np.asarray(fh[pre + "format"]).item()
        layout = layout.decode() if isinstance(layout, bytes) else str(layout)
    cls = {"csr": sp.csr_matrix, "csc": sp.csc_matrix}.get(layout)
    if cls is None:
        raise DataFormatError(f"{name_of(path)}: sparse layout {layout!r} is not supported; store CSR or CSC")
    try:
        shape = tuple(int(s) for s in fh[pre + "shape"])
        if len(shape) == 2 and shape[1] > 0:
            check("features", shape[1], f"{name_of(path)}: the sparse X of shape {shape}")
        X = cls((fh[pre + "data"].astype(np.float64), fh[pre + "indices"], fh[pre + "indptr"]), shape=shape)
        X = sp.csr_matrix(X)
        X.check_format(full_check=True)
    except (ValueError, TypeError, IndexError) as exc:
        raise DataFormatError(f"{name_of(path)}: the sparse X arrays are inconsistent ({exc})") from exc
    return X


def _numeric(A, key, path):
    if A.dtype == object or not (np.issubdtype(A.dtype, np.number) or A.dtype == bool):
        raise DataFormatError(f"{name_of(path)}: {key} has dtype {A.dtype}; store numbers")
    return A.astype(np.float64)


def read_npz(path, targets=1):
    """Read a ``.npz`` archive: ``(X, Y, feature_names, target_names)``."""
    try:
        fh = np.load(path, allow_pickle=False)
    except Exception as exc:  # BadZipFile, OSError, ValueError, EOFError ...
        check_zip_end(path)  # a cut archive says so
        raise DataFormatError(
            f"{name_of(path)} is not a readable .npz archive ({exc}); write it with numpy.savez"
        ) from exc
    if not hasattr(fh, "files"):
        raise DataFormatError(
            f"{name_of(path)} holds a single array, not a .npz archive; name it .npy or use numpy.savez"
        )
    with fh:
        keys = set(fh.files)
        try:
            shapes = _member_shapes(fh, path)
            if len(shapes.get("X", ())) == 2:
                check("features", shapes["X"][1], f"{name_of(path)}: X of shape {shapes['X']}")
            if "X" in keys:
                X = _numeric(np.asarray(fh["X"]), "X", path)
                if X.ndim != 2:
                    raise DataFormatError(f"{name_of(path)}: X has shape {X.shape}; a 2-D array is needed")
            else:
                X = _sparse_x(fh, keys, path)
            ykey = "Y" if "Y" in keys else ("y" if "y" in keys else None)
            if ykey is None and targets == 0:
                ykey, Y = "Y", np.zeros((X.shape[0], 0))
            elif ykey is None:
                raise DataFormatError(
                    f"{name_of(path)} has keys {sorted(keys)} but no targets; store them under 'Y' or 'y'"
                )
            else:
                Y = _numeric(np.asarray(fh[ykey]), ykey, path)
            if Y.ndim == 1:
                Y = Y.reshape(-1, 1)
            if Y.ndim != 2:
                raise DataFormatError(f"{name_of(path)}: {ykey} has shape {Y.shape}; a 1-D or 2-D array is needed")
            fnames = [str(s) for s in np.asarray(fh["feature_names"]).ravel()] if "feature_names" in keys else None
            tnames = [str(s) for s in np.asarray(fh["target_names"]).ravel()] if "target_names" in keys else None
        except DataFormatError:
            raise
        except Exception as exc:  # corrupt members: zlib.error, BadZipFile, ValueError, OSError ...
            raise DataFormatError(f"{name_of(path)}: cannot read the arrays ({type(exc).__name__}: {exc})") from exc
    if X.shape[0] != Y.shape[0]:
        raise DataFormatError(f"{name_of(path)}: X has {X.shape[0]} rows but {ykey} has {Y.shape[0]}; they must match")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise DataFormatError(f"{name_of(path)}: X is empty (shape {X.shape})")
    if fnames is None or len(fnames) != X.shape[1]:
        fnames = [f"x{j}" for j in range(X.shape[1])]
    if tnames is None or len(tnames) != Y.shape[1]:
        tnames = [f"y{j}" for j in range(Y.shape[1])]
    return X, Y, fnames, tnames


def npz_names(path):
    """The column names a ``.npz`` archive stores (features then targets), or None when it stores none."""
    with np.load(path, allow_pickle=False) as fh:
        if "feature_names" not in fh.files:
            return None
        names = [str(s) for s in np.asarray(fh["feature_names"]).ravel()]
        if "target_names" in fh.files:
            names += [str(s) for s in np.asarray(fh["target_names"]).ravel()]
    return names


def write_npz(fh, X, Y, feature_names, target_names):
    """Write what :func:`read_npz` reads back (``X`` dense or CSR, or None)."""
    arrays = {"Y": Y, "feature_names": np.asarray(feature_names, dtype=str),
              "target_names": np.asarray(target_names, dtype=str)}
    if X is not None:
        if sp.issparse(X):
            arrays.update(X_data=X.data, X_indices=X.indices, X_indptr=X.indptr, X_shape=np.asarray(X.shape))
        else:
            arrays["X"] = X
    np.savez(fh, **arrays)


def _map(path):
    try:
        A = np.load(path, mmap_mode="r", allow_pickle=False)
    except Exception as exc:  # ValueError (bad header, pickled data), OSError, EOFError ...
        check_npy_end(path)  # a cut array says so
        raise DataFormatError(
            f"{name_of(path)} is not a readable .npy array ({exc}); write it with numpy.save"
        ) from exc
    if not isinstance(A, np.ndarray):
        raise DataFormatError(f"{name_of(path)} is a .npz archive, not a .npy array; name it .npz")
    if A.dtype == object or not (np.issubdtype(A.dtype, np.number) or A.dtype == bool):
        raise DataFormatError(f"{name_of(path)} has dtype {A.dtype}; store numbers (float64 avoids copies)")
    return A


def open_npy(path, targets=1, y_path=None):
    """Memory-map ``.npy`` data: ``(X, Y)`` read-only views (no copy for float64 files).

    With ``y_path`` the targets come from that file (1-D or 2-D, same number of rows)
    and ``targets`` is ignored; otherwise the last ``targets`` columns of the 2-D array
    in ``path`` are the targets (``targets=0``: features only). Arrays of another dtype
    are converted to float64 in memory.
    """
    A = _map(path)
    if A.ndim != 2 or A.shape[0] == 0:
        raise DataFormatError(
            f"{name_of(path)}: array of shape {A.shape}; a non-empty 2-D array (rows = samples) is needed"
        )
    if y_path is not None:
        Y = _map(y_path)
        if Y.ndim == 1:
            Y = Y.reshape(-1, 1)
        if Y.ndim != 2 or Y.shape[0] != A.shape[0]:
            raise DataFormatError(
                f"{name_of(y_path)} has shape {Y.shape} but {name_of(path)} has {A.shape[0]} rows; "
                "the targets file needs one row per sample"
            )
        X = A
    else:
        t = check_targets(targets, A.shape[1], path)
        X, Y = A[:, : A.shape[1] - t], A[:, A.shape[1] - t:]
    if X.dtype != np.float64:
        X = np.asarray(X, dtype=np.float64)
    if Y.dtype != np.float64:
        Y = np.asarray(Y, dtype=np.float64)
    return X, Y
