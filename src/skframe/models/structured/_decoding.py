"""Decoding: candidate sets, ``predict``, ``predict_topk`` and ``decision_function``."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from skframe.constraints import Interval, check_param
from skframe.contract.tags import get_tags
from skframe.exceptions import InvalidInputError
from skframe.models.structured._candidates import (
    CandidatePool,
    EmbeddedCandidates,
    StreamedCandidates,
    array_source,
    cached_embeddings,
    check_candidate_rows,
    pool_source,
)


def option(value):
    """A string option as declared: :class:`skframe.constraints.Options` accepts any case and spacing."""
    return value.strip().lower() if isinstance(value, str) else value


def _is_linear(kernel):
    """The linear output kernel: its tags say ``is_linear``."""
    return get_tags(kernel, "kernel").is_linear


class DecodingMixin:
    """Prediction methods of :class:`OutputKernelRegressor` (see its ``predict``).

    Also the scikit-learn tags of the structured-output estimators (OKR and DSOKR): sparse inputs
    accepted, multi-output targets required.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = False
        return tags

    # ------------------------------------------------------------------ candidate sets
    def _candidate_source(self, candidates, n_rows):
        """``(source, offsets, outputs)``: what the decoder searches and where decoded rows come from.

        ``offsets`` is None for one set shared by every row; ``outputs`` is the set
        (array), the list of per-row sets or the :class:`CandidatePool`.
        """
        bases = [d.basis for d in self.draws_]
        owner = self.draws_[0]
        if candidates is None:
            E = getattr(self, "candidate_embeddings_", None)
            if E is None:  # model files that predate candidate_embeddings_
                E, b = cached_embeddings(owner, bases, self.candidates_)
            else:
                b = self.candidate_bias_
            return EmbeddedCandidates(E, b), None, self.candidates_
        if isinstance(candidates, CandidatePool):
            if len(candidates) != n_rows:
                raise InvalidInputError(f"a CandidatePool of {len(candidates)} queries for {n_rows} rows of X; "
                                        "give one index list per row")
            pool = check_candidate_rows(candidates.pool, self.n_outputs_, "the candidate pool")
            return pool_source(owner, bases, pool, candidates.indices), candidates.offsets, candidates
        if isinstance(candidates, (list, tuple)):
            if len(candidates) != n_rows:
                raise InvalidInputError(
                    f"{len(candidates)} per-sample candidate sets for {n_rows} rows of X; give one per row"
                )
            sets = [check_candidate_rows(c, self.n_outputs_, f"candidates[{i}]") for i, c in enumerate(candidates)]
            offsets = np.concatenate([[0], np.cumsum([c.shape[0] for c in sets])]).astype(np.int64)
            if any(sp.issparse(c) for c in sets):
                C = sp.vstack([sp.csr_matrix(c) for c in sets], format="csr")
            else:
                C = np.vstack(sets) if sets else np.empty((0, self.n_outputs_))
            return StreamedCandidates(bases, C), offsets, sets
        C = check_candidate_rows(candidates, self.n_outputs_)
        return array_source(owner, bases, C), None, C

    def _decode(self, X, k, candidates):
        G_list = self._surrogate(X)
        src, offsets, outputs = self._candidate_source(candidates, G_list[0].shape[0])
        idx, scores = self._decoder.decode(G_list, candidates=src, k=k, aggregate=option(self.aggregate),
                                           offsets=offsets)
        return idx, scores + self._offset(), outputs

    def _offset(self):
        """The constant ``-k_Y(c, c)/2 = -1/2`` a normalised output kernel leaves out of the search."""
        return -0.5 if self.output_basis_.normalized else 0.0

    # ------------------------------------------------------------------ prediction
    def predict(self, X, candidates=None):
        """Decode: the best candidate for each row of X.

        Parameters
        ----------
        X : array-like, sparse matrix or InputCollection of shape (n_samples, ...)
        candidates : None, array, list of arrays or CandidatePool
            None: the distinct training outputs (``candidates_``, embedded at fit);
            an array of shape (n_c, d): one set for every row; a list with one
            ``(n_i, d)`` array per row of X: per-sample sets; a
            :class:`CandidatePool`: a shared pool and one list of pool rows per row
            of X (the pool is embedded once). Embeddings of arrays and pools are
            cached for later calls outside the model (:func:`clear_candidate_cache`);
            candidate rows keep their dtype (e.g. uint8 fingerprints).

        Returns
        -------
        ndarray or sparse matrix of shape (n_samples, d)
            The chosen candidate rows. With the identity decoder, the surrogate
            (``g(x)``, or ``h(x)`` in R^d for a linear output kernel).
        """
        self._check_fitted()
        if not get_tags(self._decoder, "decoder").candidates:  # the identity decoder: no candidate search
            G_list = self._surrogate(X)
            B = [d.basis.vectors() for d in self.draws_] if _is_linear(self.output_kernel_) else None
            return self._decoder.decode(G_list, basis_vectors=B)
        idx, _, C = self._decode(X, 1, candidates)
        best = idx[:, 0]
        if isinstance(C, CandidatePool):
            if np.any(best < 0):
                raise InvalidInputError("a query of the CandidatePool has an empty index list; give at least one row")
            return C.pool[C.pool_index(idx)[:, 0]]
        if isinstance(C, list):
            rows = [c[i : i + 1] if i >= 0 else None for c, i in zip(C, best)]
            if any(r is None for r in rows):
                raise InvalidInputError("a per-sample candidate set is empty; give at least one candidate per row")
            return sp.vstack(rows, format="csr") if any(sp.issparse(r) for r in rows) else np.vstack(rows)
        return C[best]

    def predict_topk(self, X, k, candidates=None):
        """The k best candidates of each row, best first, with their scores.

        Parameters
        ----------
        X : array-like, sparse matrix or InputCollection
        k : int
        candidates : see :meth:`predict`

        Returns
        -------
        indices : ndarray of int, shape (n_samples, k)
            Rows of the candidate set (``candidates_`` by default; local to each
            row's set for per-sample candidates and to each row's index list for a
            :class:`CandidatePool`, see ``CandidatePool.pool_index``; ``-1`` pads
            sets smaller than k).
        scores : ndarray of shape (n_samples, k)
            ``<h(x), psi(c)> - k_Y(c, c)/2`` (aggregated over draws).
        """
        self._check_fitted()
        k = int(check_param("k", k, [Interval("int", 1, None)], hint="k must be a positive integer"))
        idx, scores, _ = self._decode(X, k, candidates)
        return idx, scores

    def decision_function(self, X, candidates=None):
        """Candidate scores ``<h(x), psi(c)> - k_Y(c, c)/2`` (aggregated over draws).

        Returns
        -------
        ndarray of shape (n_samples, n_c), or a list of arrays (one per row) for
        per-sample candidate sets and pools. The full matrix is formed: use
        ``predict`` or ``predict_topk`` for large candidate sets.
        """
        self._check_fitted()
        G_list = self._surrogate(X)
        src, offsets, _ = self._candidate_source(candidates, G_list[0].shape[0])
        if offsets is None:
            E, b = src.block(0, src.n_candidates)
            return self._aggregate([g @ e.T for g, e in zip(G_list, E)], b)
        out = []
        for i in range(G_list[0].shape[0]):
            E, b = src.block(offsets[i], offsets[i + 1])
            out.append(self._aggregate([g[i : i + 1] @ e.T for g, e in zip(G_list, E)], b)[0])
        return out

    def _aggregate(self, blocks, bias):
        S = np.max(blocks, axis=0) if option(self.aggregate) == "max" else np.mean(blocks, axis=0)
        if bias is not None:
            S = S + bias[None, :]
        return S + self._offset()
