"""The decoder and output-matrix checks."""

from __future__ import annotations

import numpy as np

from skframe.core.output_matrices import check_output_matrix
from skframe.exceptions import SkframeError
from skframe.plugin.checks._common import (
    _checking,
    _close,
    _copies,
    _rebuilt_alike,
    _worst,
)

# ----------------------------------------------------------------------------- decoders
#: what the decoder check evaluates (besides the properties of every kind)
PROPERTIES = ("decode", "decode scores", "decode top-k")
#: what the output-matrix check evaluates (besides the properties of every kind)
OUTPUT_MATRIX_PROPERTIES = ("matrix",)


class _Candidates:
    """A candidate source: ``n_candidates`` and ``block(start, stop) -> (embeddings per draw, bias)``."""

    def __init__(self, E_list, bias):
        self.E_list, self.bias, self.n_candidates = E_list, bias, E_list[0].shape[0]

    def block(self, start, stop):
        return [E[start:stop] for E in self.E_list], self.bias[start:stop]


def check_decoder(decoder, *, params=None, rng=0, rtol=1e-9):
    """Check a decoder (or decoder class, built with ``params``).

    A candidate decoder (tag ``candidates``) is called as the models call it,
    ``decode(G_list, candidates=source, k=k, aggregate=..., offsets=None)``, and its top-k must be
    those of the exhaustive search; another decoder must return ``mean_d(G_d @ B_d)`` for
    ``decode(G_list, basis_vectors=B_list)`` and ``G`` for ``decode([G])``.

    Returns
    -------
    DecoderTags
    """
    with _checking("decoder", decoder, params, rng, PROPERTIES) as (decoder, fail, tags, gen):
        n, p, n_c, k = 7, 4, 30, 3
        G_list = [gen.standard_normal((n, p)) for _ in range(2)]

        def outcome(obj):
            if not tags.candidates:
                return np.asarray(obj.decode(G_list, basis_vectors=B_list))
            return obj.decode(G_list, candidates=src, k=k, aggregate="mean", offsets=None)

        if tags.candidates:
            E_list = [gen.standard_normal((n_c, p)) for _ in range(2)]
            bias = gen.standard_normal(n_c)
            src = _Candidates(E_list, bias)
            for aggregate, agg in (("mean", np.mean), ("max", np.max)):
                S = agg(np.stack([g @ E.T for g, E in zip(G_list, E_list)]), axis=0) + bias
                idx, scores = decoder.decode(G_list, candidates=src, k=k, aggregate=aggregate, offsets=None)
                idx, scores = np.asarray(idx), np.asarray(scores)
                fail.require(idx.shape == (n, k) and scores.shape == (n, k), "decode", f"indices {idx.shape}, scores "
                             f"{scores.shape}", f"return (indices, scores), each of shape (n, k) = ({n}, {k})")
                fail.require(np.issubdtype(idx.dtype, np.integer) and idx.min() >= 0 and idx.max() < n_c, "decode",
                             "indices are not candidate rows", f"return integer indices in [0, {n_c})")
                fail.require(_close(scores, np.take_along_axis(S, idx, axis=1), rtol), "decode scores",
                             f"scores are not the {aggregate}-aggregated <g, psi(c)> + bias of the returned candidates",
                             "score candidate c as agg_d(g_d . psi_d(c)) + bias(c)")
                best = -np.sort(-S, axis=1)[:, :k]
                fail.require(_close(scores, best, rtol), "decode top-k",
                             f"the {k} returned scores are not the {k} best ({_worst(scores, best)})",
                             "return the k best candidates, best first")
            first = outcome(decoder)

            def same(a, b):
                return np.array_equal(a[0], b[0]) and _close(a[1], b[1], 0.0)
        else:
            B_list = [gen.standard_normal((p, 3)) for _ in range(2)]
            first = outcome(decoder)
            expected = np.mean([g @ B for g, B in zip(G_list, B_list)], axis=0)
            fail.require(_close(first, expected, rtol), "decode",
                         f"decode(G_list, basis_vectors=B_list) != mean_d(G_d B_d): {_worst(first, expected)}",
                         "map each draw through its basis vectors and average")
            alone = np.asarray(decoder.decode([G_list[0]]))
            fail.require(_close(alone, G_list[0], rtol), "decode", "decode([G]) without basis vectors is not G",
                         "return the surrogate itself when no basis vectors are given")

            def same(a, b):
                return _close(a, b, 0.0)
        for other, prop, how in _copies(fail, decoder, "decoder"):
            _rebuilt_alike(fail, same(outcome(other), first), prop, f"the decoder {how} decodes differently")
    return tags


check_decoder.properties = PROPERTIES  # read by skframe.plugin.checks.PROPERTIES


# ----------------------------------------------------------------------------- output matrices
def check_output_matrix_component(output_matrix, *, params=None, d=3, rng=0):
    """Check an output-matrix component (or its class, built with ``params``).

    ``matrix(d, Y=Y, quantiles=...)`` must be a d x d symmetric positive semi-definite matrix
    (:func:`skframe.core.output_matrices.check_output_matrix`), and it must also work without the
    targets ``Y`` unless the tags say ``needs_targets``.

    Returns
    -------
    OutputMatrixTags
    """
    frame = _checking("output_matrix", output_matrix, params, rng, OUTPUT_MATRIX_PROPERTIES)
    with frame as (om, fail, tags, gen):
        Y = gen.standard_normal((30, d))
        quantiles = tuple(float(q) for q in np.linspace(0.1, 0.9, d))

        def outcome(obj):
            return np.asarray(obj.matrix(d, Y=Y, quantiles=quantiles), dtype=np.float64)

        try:
            M = check_output_matrix(outcome(om), d)
            if not tags.needs_targets:
                check_output_matrix(om.matrix(d, quantiles=quantiles), d)
        except SkframeError as exc:
            fail("matrix", str(exc), "return a d x d symmetric positive semi-definite matrix "
                 "(declare OutputMatrixTags(needs_targets=True) when it needs Y)")
        for other, prop, how in _copies(fail, om, "output_matrix"):
            _rebuilt_alike(fail, _close(outcome(other), M, 1e-12), prop, f"the output matrix {how} differs")
    return tags


check_output_matrix_component.properties = OUTPUT_MATRIX_PROPERTIES  # read by skframe.plugin.checks.PROPERTIES
