"""The input side of DSOKR: feature vectors, learned input features and token rows of strings, SMILES
augmentation, the rows of positive weight and the rows held out for early stopping (:class:`DeepInputsMixin`)."""

from __future__ import annotations

import numpy as np

from skframe.contract.collections import n_items
from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.graphs.strings import StringBatch
from skframe.models._core import resolve_kernel
from skframe.models._data import check_sample_weight
from skframe.models.structured._decoding import option
from skframe.models.structured._deep_features import featurize, fit_featurizer, randomized_smiles
from skframe.models.structured._fit import positive_rows
from skframe.models.structured._tokenizer import as_strings, fit_vocabulary, prepare_inputs, tokenize

__all__ = ["AUTO_VALIDATION", "MIN_AUTO_VALIDATION", "TOKEN_NETWORK_NAMES", "DeepInputsMixin"]

AUTO_VALIDATION = 0.1  # validation_fraction="auto": this fraction held out when at least MIN_AUTO_VALIDATION rows
MIN_AUTO_VALIDATION = 200
TOKEN_NETWORK_NAMES = ("text-cnn", "transformer")


class DeepInputsMixin:
    """How :class:`~skframe.models.structured.DeepOutputKernelRegressor` reads its inputs."""

    def _prepare_inputs(self, X, reset):
        """Feature matrix (dense float64 or CSR) or an (n, L) int64 token array."""
        if self.input_features is not None:
            X = self._featurize(X, reset)
        return prepare_inputs(self, X, reset, tokens=option(self.network) in TOKEN_NETWORK_NAMES)

    def _featurize(self, X, reset):
        """Structured inputs as the feature matrix of ``input_features`` (learned in fit)."""
        if option(self.network) in TOKEN_NETWORK_NAMES:
            raise InvalidParameterError(
                f"input_features={self.input_features!r} gives feature vectors, which network={self.network!r} "
                "does not read; use network='mlp' (or a callable factory) with input_features"
            )
        if reset:
            self.__dict__.pop("input_codes_", None)
            self.__dict__.pop("input_featurizer_", None)
            if option(self.input_features) == "morgan":
                self.input_featurizer_ = "morgan"
            else:
                kernel = resolve_kernel(self.input_features, self.input_features_params)[0]
                if not hasattr(kernel, "features"):
                    raise InvalidParameterError(
                        f"input_features={self.input_features!r}: the kernel has no explicit count features; use "
                        "'morgan', or a kernel with a features method such as 'ngram' or 'wl-subtree'"
                    )
                self.input_featurizer_ = kernel
                self.input_codes_ = fit_featurizer(kernel, X)
        if self.input_featurizer_ == "morgan":
            return featurize("morgan", self.input_features_params, None, None, X)
        return featurize("kernel", None, self.input_featurizer_, self.input_codes_, X)

    def _weighted_rows(self, X_raw, X, Y, sample_weight):
        """``(X_raw, X, Y, w, rows)`` without the rows of weight zero (their inputs prepared again), ``w`` of mean 1
        or None (:func:`~skframe.models.structured._fit.positive_rows`); ``rows``: the rows kept (None: all)."""
        n = n_items(X)
        if n_items(Y) != n:
            raise InvalidInputError(f"X has {n} rows but Y has {n_items(Y)}; they must match")
        w = check_sample_weight(sample_weight, n)
        rows = None if w is None else np.flatnonzero(w > 0)
        if rows is None or rows.size == n:
            return X_raw, X, Y, positive_rows(X, Y, w)[2], rows
        X_raw, Y, w = positive_rows(X_raw, Y, w)
        return X_raw, self._prepare_inputs(X_raw, reset=True), Y, w, rows

    def _n_inputs(self):
        return len(self.vocabulary_) + 2 if self.input_kind_ == "tokens" else int(self.n_features_in_)

    def _augment(self, X_raw, rng):
        """Token rows of the training strings and of ``smiles_augmentation`` random equivalent SMILES of each,
        shape ``(k + 1, n, L)``; the vocabulary and the length are refitted on them all."""
        if self.input_kind_ != "tokens":
            raise InvalidParameterError(
                f"smiles_augmentation={self.smiles_augmentation} rewrites SMILES strings for the string networks; "
                "use network='text-cnn' or 'transformer' on SMILES inputs, or smiles_augmentation=0"
            )
        strings = as_strings(X_raw).tolist()
        k = int(self.smiles_augmentation)
        variants = randomized_smiles(strings, k, int(rng.integers(0, 2**31 - 1)))
        every = [strings] + [[v[j] for v in variants] for j in range(k)]
        self.vocabulary_, self.max_length_ = fit_vocabulary(StringBatch([s for rows in every for s in rows]),
                                                            self.max_length)
        return np.stack([tokenize(StringBatch(rows), self.vocabulary_, self.max_length_) for rows in every])

    def _n_validation(self, n):
        """Rows held out for early stopping: ``validation_fraction`` of n (``"auto"``: a tenth from 200 rows)."""
        frac = self.validation_fraction
        if isinstance(frac, str):
            frac = AUTO_VALIDATION if n >= MIN_AUTO_VALIDATION else 0.0
        return int(round(float(frac) * n)) if frac else 0

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()  # the structured-output tags of DecodingMixin (after this mixin)
        tags.input_tags.string = True  # strings are tokenized (text networks)
        return tags
