"""Inputs a feature network can read: explicit features of strings and graphs, and randomised SMILES.

DSOKR's ``mlp`` reads feature vectors. ``input_features`` turns structured inputs into such
vectors before the network, learned in ``fit`` and applied again at prediction:

``"morgan"``
    Morgan (circular) fingerprint bits of SMILES strings (RDKit; ``radius``, ``n_bits``).
a kernel name or object with a ``features`` method
    The kernel's own count features (e.g. ``"ngram"``: character n-gram counts of strings;
    ``"wl-subtree"``: Weisfeiler-Lehman label counts of graphs), one column per feature code
    seen in training (codes first met at prediction are dropped); rows are scaled to unit norm
    when the kernel is normalised, so that the network sees the kernel's own geometry.

:func:`randomized_smiles` writes equivalent SMILES of a molecule (random atom orders), the
augmentation of the string networks (El Ahmad, PhD thesis 2024, App. C.3 trains its SMILES
networks on canonical strings; enumerating the equivalent strings is the usual remedy when
few molecules are at hand).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from skframe import deps
from skframe.contract.collections import is_collection
from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.graphs.chem import mol_from_smiles, morgan_fingerprints
from skframe.graphs.strings import StringBatch

__all__ = ["featurize", "fit_featurizer", "randomized_smiles"]

MORGAN_DEFAULTS = {"radius": 2, "n_bits": 2048}


def _morgan_params(params):
    out = dict(MORGAN_DEFAULTS)
    unknown = sorted(set(params or {}) - set(out))
    if unknown:
        raise InvalidParameterError(f"input_features_params {unknown} are not Morgan parameters; use radius, n_bits")
    out.update(params or {})
    return out


def _strings(X, what):
    if isinstance(X, StringBatch):
        return X.tolist()
    if isinstance(X, (list, tuple)) or (isinstance(X, np.ndarray) and X.dtype.kind in "UO"):
        if all(isinstance(s, str) for s in X):
            return list(X)
    raise InvalidInputError(f"input_features={what!r} reads SMILES strings; pass a list of strings")


def _structured(kernel, X):
    """X as the batch the kernel's ``features`` reads (strings become a StringBatch)."""
    if isinstance(X, (list, tuple)) or (isinstance(X, np.ndarray) and X.dtype.kind in "UO"):
        return StringBatch(list(X))
    if isinstance(X, StringBatch) or is_collection(X):
        return X
    raise InvalidInputError(
        f"input_features={type(kernel).__name__} reads strings or graphs; pass them instead of {type(X).__name__}"
    )


def fit_featurizer(kernel, X):
    """The sorted feature codes the kernel finds in the training inputs X (the columns of :func:`featurize`)."""
    feats = kernel.features(_structured(kernel, X))
    return np.unique(feats.codes).astype(np.int64)


def featurize(how, params, kernel, codes, X):
    """The feature matrix (CSR, float64) of inputs X.

    ``how`` is ``"morgan"`` (``params``: radius, n_bits) or ``"kernel"`` (``kernel``'s count
    features on the columns ``codes``, rows of unit norm for a normalised kernel).
    """
    if how == "morgan":
        p = _morgan_params(params)
        return morgan_fingerprints(_strings(X, "morgan"), radius=int(p["radius"]),
                                   n_bits=int(p["n_bits"])).astype(np.float64)
    feats = kernel.features(_structured(kernel, X))
    n = feats.ptr.size - 1
    rows = np.repeat(np.arange(n), np.diff(feats.ptr))
    col = np.searchsorted(codes, feats.codes)
    col = np.clip(col, 0, max(codes.size - 1, 0))
    known = codes[col] == feats.codes if codes.size else np.zeros(feats.codes.size, bool)
    values = np.asarray(feats.values, dtype=np.float64)
    if getattr(kernel, "normalize", False):
        norms = np.sqrt(feats.sq_norms())
        values = values / np.where(norms > 0, norms, 1.0)[rows]
    return sp.csr_matrix((values[known], (rows[known], col[known])), shape=(n, codes.size))


def randomized_smiles(smiles, n_variants, seed):
    """``n_variants`` random equivalent SMILES of each molecule (RDKit), as a list of lists.

    Raises
    ------
    InvalidInputError
        A string RDKit cannot read as a molecule.
    """
    deps.require("rdkit", "smiles_augmentation")
    from rdkit import Chem  # lazy: RDKit is optional (the chem extra)

    out = []
    for i, s in enumerate(smiles):
        mol = mol_from_smiles(s, f"SMILES number {i}")
        if mol is None:
            raise InvalidInputError(
                f"SMILES number {i} ({s!r}) cannot be parsed; smiles_augmentation needs valid SMILES inputs"
            )
        out.append(list(Chem.MolToRandomSmilesVect(mol, int(n_variants), randomSeed=int(seed) + i)))
    return out
