"""Output kernel regression for structured prediction: IOKR, SIOKR, ISOKR and SISOKR.

The surrogate estimator ``h(x) = sum_i alpha_i(x) psi(y_i)`` lives in the output
RKHS. skframe represents it by its coordinates ``g(x)`` in an output basis
(:mod:`skframe.core.output_basis`) and decodes by a maximum inner-product search
against candidate embeddings (``skframe_decoders``). The four models are the
four combinations of an optional input sketch R_X and output sketch R_Y:

=========  ============  =============  ==========================================
model      input sketch  output sketch  coordinates g(x)
=========  ============  =============  ==========================================
IOKR       none          none           ``k_x^T (K_X + n lam I)^{-1} E``
SIOKR      R_X           none           ``z(x)^T (Z^T Z + n lam I)^{-1} Z^T E``
ISOKR      none          R_Y            ``k_x^T (K_X + n lam I)^{-1} Psi``
SISOKR     R_X           R_Y            ``z(x)^T (Z^T Z + n lam I)^{-1} Z^T Psi``
=========  ============  =============  ==========================================

with ``E`` the one-hot map of the training outputs onto the distinct ones,
``Psi = K_Y R_Y^T U_Y D_Y^{-1/2}`` the training outputs in the sketched output
basis and ``z(x) = D_X^{-1/2} U_X^T R_X k_x`` the sketched input features
(El Ahmad et al., "Fast Kernel Methods for Generic Lipschitz Losses via
p-Sparsified Sketches", TMLR 2023, Prop. 1). The SISOKR line is Prop. 1 of
El Ahmad, Brogat-Motte, Laforgue and d'Alché-Buc, "Sketch In, Sketch Out:
Accelerating both Learning and Inference for Structured Prediction with Kernels"
(AISTATS 2024) written in these coordinates (:func:`sisokr_omega`).

Modules: ``_sisokr`` (the algebra), ``_candidates`` (candidate sets, pools and the
embedding cache), ``_decoding`` (prediction), ``_ranking`` (Hits@k / MRR / mean
rank) and ``_estimator`` (fit). The neural model DSOKR: ``_deep`` (the estimator and
its fit), ``_deep_inputs`` (its inputs), ``_deep_network`` (building its networks, threads,
devices and batches), ``_deep_training`` (training and running them), ``_deep_prediction``
(the fit record, prediction and saved state), ``_tokenizer`` (string inputs as character
tokens) and ``_networks`` (the built-in PyTorch networks).
"""

from skframe.models.structured._candidates import CandidatePool, candidate_cache_info, clear_candidate_cache

# classes saved model files and pickles name as skframe.models.structured.<name>
from skframe.models.structured._candidates import _LegacyCandidates as _ModelCandidates
from skframe.models.structured._candidates import _LegacyEmbeddingCache as _EmbeddingCache
from skframe.models.structured._deep import DeepOutputKernelRegressor
from skframe.models.structured._deep_training import _DeepMember
from skframe.models.structured._estimator import OutputKernelRegressor
from skframe.models.structured._ranking import candidate_ranking, true_candidate_index
from skframe.models.structured._sisokr import (
    _Draw,
    has_duplicate_rows,
    sisokr_omega,
    sketched_input_coef,
)

_SAVED_NAMES = (_Draw, _ModelCandidates, _EmbeddingCache, _DeepMember)

__all__ = [
    "OutputKernelRegressor",
    "DeepOutputKernelRegressor",
    "CandidatePool",
    "candidate_ranking",
    "true_candidate_index",
    "clear_candidate_cache",
    "candidate_cache_info",
    "sisokr_omega",
    "sketched_input_coef",
    "has_duplicate_rows",
]
