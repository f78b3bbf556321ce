"""DSOKR: a neural network trained to the sketched output embeddings, decoded like SISOKR.

El Ahmad, Yang, Laforgue and d'Alché-Buc, "Deep Sketched Output Kernel Regression for
Structured Prediction" (ECML PKDD 2024); El Ahmad, "Learning Deep Kernel Networks:
Application to Efficient and Robust Structured Prediction", PhD thesis, Institut
Polytechnique de Paris 2024, ch. 5, Alg. 5.1.

PyTorch is imported only inside :meth:`DeepOutputKernelRegressor.fit` and prediction
(through :func:`skframe.deps.require`), never by ``import skframe``.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator

from skframe.constraints import HasMethods, Interval, Options, validate_params
from skframe.contract.collections import is_collection, n_items, take
from skframe.contract.registry import get_decoder
from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.models._base import KernelModelMixin, execution_record, in_memory_plan, store_params
from skframe.models._core import make_rngs, resolve_kernel, size_and_resolve_sketch
from skframe.models.structured._candidates import check_outputs
from skframe.models.structured._decoding import DecodingMixin
from skframe.models.structured._deep_inputs import DeepInputsMixin
from skframe.models.structured._deep_network import (
    device_of,
    input_scaling,
    output_loss,
    resolve_network_params,
    torch_settings,
)
from skframe.models.structured._deep_prediction import DeepPredictionMixin, _torch
from skframe.models.structured._deep_training import train_members
from skframe.models.structured._estimator import OutputKernelRegressor

__all__ = ["DeepOutputKernelRegressor"]

NETWORK_NAMES = ("mlp", "text-cnn", "transformer")
TOP_K = (1, 3, 5, 10)  # the top-k validation metrics
EPOCHS = 60  # the default recipe (benchmarks/README.md, "DSOKR: the default recipe")
LEARNING_RATE = 1e-3
WEIGHT_DECAY = 1e-2
PATIENCE = 10


class DeepOutputKernelRegressor(DeepInputsMixin, DeepPredictionMixin, DecodingMixin, KernelModelMixin, BaseEstimator):
    """Deep Sketched Output Kernel Regression (DSOKR): a neural network ``g_W`` predicts the
    coordinates of the surrogate in a sketched output basis; predictions are decoded against candidates.

    The output basis is the sketched one of ISOKR/SISOKR (:class:`skframe.core.output_basis.SketchedOutputBasis`):
    with ``K~_Y = R_Y K_Y R_Y^T = U D U^T``, ``psi~(y) = D^{-1/2} U^T R_Y k_Y^y`` in R^p. The network
    is trained to minimise ``(1/n) sum_i c(||g_W(x_i) - psi~(y_i)||^2 + r(y_i))`` (``r`` the part of
    ``psi(y)`` outside the basis; ``c(u) = u/2`` for the square loss, robust ``c`` from thesis App.
    C.1 otherwise, see the ``output-*`` losses) plus ``(weight_decay/2) ||W||^2``, and
    ``predict`` returns the candidate maximising ``g_W(x) . psi~(c) - k_Y(c, c)/2`` (El Ahmad,
    "Learning Deep Kernel Networks: Application to Efficient and Robust Structured Prediction",
    PhD thesis, Institut Polytechnique de Paris 2024, Alg. 5.1; El Ahmad, Yang, Laforgue,
    d'Alché-Buc, "Deep Sketched Output Kernel Regression for Structured Prediction", ECML PKDD 2024).

    Needs PyTorch (``pip install "skframe[deep]"``).

    Parameters
    ----------
    network : {"mlp", "text-cnn", "transformer"} or callable, default="mlp"
        ``mlp`` for feature vectors (dense or scipy sparse), ``text-cnn`` or ``transformer``
        for strings (SMILES, text; tokenised by characters). A callable
        ``factory(n_inputs, n_outputs) -> torch.nn.Module`` builds any network (``n_inputs``
        is the number of features, or the vocabulary size for strings, which then arrive
        as ``(batch, length)`` int64 token tensors, 0 being the padding). A model trained
        with a callable stores its weights, not the callable: set ``model.network`` to the
        same factory after :func:`skframe.load`.
    network_params : dict, optional
        Hyper-parameters of a built-in network: mlp ``hidden`` (tuple of widths, ``()``
        for a linear model; default ``"auto"``: one layer, the geometric mean of the training rows
        and the features rounded to a power of two in [128, 1024]), ``activation``, ``dropout``
        (default 0.2), ``bias``;
        text-cnn ``embedding_dim``, ``n_filters``, ``kernel_sizes``, ``dropout``; transformer
        ``d_model``, ``n_heads``, ``n_layers``, ``dim_feedforward``, ``dropout``.
    output_kernel : str or kernel object, default="gaussian"
    output_kernel_params : dict, optional
    output_sketch : str or sketch object, default="subsample"
        The output sketch R_Y (required: it defines the output basis).
    output_sketch_size : int or "auto", default="auto"
        m_Y; choose it with :func:`skframe.model_selection.curves.perfect_h_curve` (Perfect h).
        ``"auto"``: the sqrt(n) rule of :class:`OutputKernelRegressor` on the training rows, capped
        by what the in-memory output basis can hold (the execution plan).
    output_sketch_params : dict, optional
    loss : str or loss object, default="square"
        ``square``, ``huber``, ``epsilon-svr`` or ``epsilon-ridge`` (the ``output-*`` losses of
        the loss registry, acting on the distance in the output RKHS).
    loss_params : dict, optional
        E.g. ``{"kappa": 0.5}`` for huber, ``{"epsilon": 0.1}`` for the ε-insensitive losses.
    epochs : int, default=60
        Passes over the training data at most (outer iterations for ``optimizer="lbfgs"``); the
        learning-rate schedule spans them.
    batch_size : int or "auto", default="auto"
        Mini-batch size (adam, adamw; lbfgs uses the full batch). ``"auto"``: 256 rows; on a GPU
        n/32 when larger (at most 4096).
    learning_rate : float, default=1e-3
        The peak step of the schedule.
    weight_decay : float, default=0.01
        Decoupled weight decay for adamw; for adam and lbfgs the L2 penalty ``(weight_decay/2)
        ||W||^2`` on all parameters (with ``input_scaling=None`` and ``target_scaling=False``, the
        ridge ``lam`` of ISOKR for a linear network without bias).
    optimizer : {"adamw", "adam", "lbfgs"}, default="adamw"
    lr_schedule : {"cosine", "one-cycle", "constant"}, default="cosine"
        Per mini-batch: cosine decay to 0 over ``epochs`` after one epoch of linear warm-up, the
        one-cycle policy, or a constant step.
    validation_fraction : float or "auto", default="auto"
        Fraction of the training pairs held out for early stopping (0: none); the output basis is
        built on the rest. ``"auto"``: 0.1 from 200 pairs, else 0. The weights of the best
        validation epoch are restored; the held-out rows are ``validation_rows_``.
    validation_metric : {"auto", "f1", "top-1", "top-3", "top-5", "top-10", "loss"}, default="auto"
        What early stopping maximises on the held-out pairs: a decoded metric (the candidates are
        the distinct outputs of all pairs; scored on the device) or the surrogate loss (ties go to
        the lower loss). ``"auto"``: example-based F1 for 0/1 label vectors, top-1 exact match
        for structured outputs (graphs, strings), the loss for real-valued outputs.
    patience : int, default=10
        Epochs without a validation improvement before stopping.
    input_scaling : {"standard", "maxabs"} or None, default="standard"
        Feature scaling learned on the training rows (``input_shift_``, ``input_scale_``, saved
        with the model) and applied before the network.
    target_scaling : bool, default=True
        The network predicts ``(psi~(y) - mean) / s``, ``s`` the root-mean-square of the centred
        coordinates (one scale for all: the output geometry is kept); the loss is the same, in units of s^2.
    input_features : "morgan", kernel name or kernel object, optional
        Explicit features of structured inputs for the mlp, learned in fit: ``"morgan"``
        (fingerprint bits of SMILES, RDKit), or a kernel's count features (e.g. ``"ngram"`` for
        strings, ``"wl-subtree"`` for graphs; one column per feature seen in training, rows of
        unit norm for a normalised kernel).
    input_features_params : dict, optional
        ``{"radius": 2, "n_bits": 2048}`` for morgan; the kernel's parameters otherwise.
    smiles_augmentation : int, default=0
        String networks: train on this many random equivalent SMILES of each molecule besides
        the given one (RDKit), one form drawn per molecule and mini-batch.
    max_length : int, optional
        Token sequences are cut to this length (default: the longest training string, at most 512).
    n_draws : int, default=1
        Ensemble over this many output-sketch draws, each with its own network.
    n_seeds : int, default=1
        Networks trained from different initialisations per sketch draw.
    aggregate : {"mean", "max"}, default="mean"
        How the members' candidate scores are combined (thesis eq. 5.19).
    device : {"cpu", "cuda", "auto"}, default="cpu"
        ``"auto"``: a CUDA GPU when PyTorch sees one. The training inputs live on the device as one
        tensor when they fit (512 MiB on the CPU, a quarter of the GPU's free memory).
    dtype : {"float32", "float64"}, default="float32"
        Precision of the network.
    mixed_precision : bool, default=False
        Train with the network's forward passes in bfloat16 (``torch.autocast``; the weights, the loss,
        the validation and the predictions stay in ``dtype``). Faster on GPUs with bfloat16 units; turn
        it on where it keeps the decoded metric (``benchmarks/bench_gpu.py``'s ``dsokr`` section measures
        both); on most CPUs it is slower.
    n_threads : int, optional
        PyTorch CPU threads during fit and prediction (restored afterwards). Default: one thread for
        networks under 100 000 weights (more threads only add synchronisation there, and stall
        badly on a busy machine), PyTorch's own setting otherwise. The same seed gives the same
        weights on the CPU with the same thread count.
    rtol : float, optional
        Relative eigenvalue tolerance of the output basis.
    output_rank : int, optional
        p_Y: keep only the directions of the ``output_rank`` largest eigenvalues of ``K~_Y``
        (default: all above ``rtol``). With noisy outputs, the span of m_Y sub-sampled outputs
        misses part of the signal (for outputs on a d-dimensional subspace with isotropic noise
        of variance s2, about ``s2 (1 - d/d_Y) d / (m_Y - d - 1)`` per coordinate); a larger
        ``output_sketch_size`` with ``output_rank`` near d estimates the subspace better while
        the network keeps only p_Y outputs.
    verbose : bool, default=False
        Print one line per epoch to stderr.
    random_state : int, RandomState or None

    Attributes
    ----------
    draws_ : list of _DeepMember
        One member per (sketch draw, seed): ``basis``, ``weights`` (arrays) and ``info``.
    output_basis_ : SketchedOutputBasis
        The basis of the first member.
    candidates_ : ndarray or sparse matrix
        Distinct training outputs, the default candidate set.
    candidate_embeddings_, candidate_bias_ : as in :class:`OutputKernelRegressor`
    loss_ : loss object
    history_ : list of dict
        Per member: ``train_loss``, ``val_loss`` and ``val_score`` (the validation metric) per
        epoch, ``metric``, ``best_epoch``, ``best_score``, ``epochs_run``, ``stopped``.
    fit_info_ : dict
        The recipe the fit used, ``"auto"`` values resolved (network parameters, batch size,
        optimizer, schedule, validation rows and metric, device, whether the inputs were
        resident) and per member its epochs run, best epoch and best validation score.
    validation_rows_ : ndarray of int
        Rows of the training data held out for early stopping.
    input_shift_, input_scale_ : ndarray or None
        The input scaling learned in fit.
    n_weights_ : int
        Parameters of the first member's network (the last layer has ``(width + 1) p``).
    input_kind_ : {"features", "tokens"}
    vocabulary_ : ndarray of int64
        Unicode code points of the training characters (tokens 2, 3, ...), for string inputs.
    max_length_ : int or None
    sketch_info_, fit_seconds_ : as in :class:`OutputKernelRegressor`
    execution_ : dict
        The execution plan of the output side (sketch size, engine, memory budget; the networks
        train with PyTorch).

    Examples
    --------
    >>> import numpy as np
    >>> from skframe.models import DeepOutputKernelRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(120, 4))
    >>> Y = (X[:, :3] > 0).astype(float)
    >>> model = DeepOutputKernelRegressor(output_kernel_params={"gamma": 0.5}, output_sketch_size=20,
    ...                                   epochs=5, random_state=0).fit(X, Y)  # doctest: +SKIP
    """

    __module__ = "skframe.models.structured"

    def __init__(
        self,
        network="mlp",
        *,
        network_params=None,
        output_kernel="gaussian",
        output_kernel_params=None,
        output_sketch="subsample",
        output_sketch_size="auto",
        output_sketch_params=None,
        loss="square",
        loss_params=None,
        epochs=EPOCHS,
        batch_size="auto",
        learning_rate=LEARNING_RATE,
        weight_decay=WEIGHT_DECAY,
        optimizer="adamw",
        lr_schedule="cosine",
        validation_fraction="auto",
        validation_metric="auto",
        patience=PATIENCE,
        input_scaling="standard",
        target_scaling=True,
        input_features=None,
        input_features_params=None,
        smiles_augmentation=0,
        max_length=None,
        n_draws=1,
        n_seeds=1,
        aggregate="mean",
        device="cpu",
        dtype="float32",
        mixed_precision=False,
        n_threads=None,
        rtol=None,
        output_rank=None,
        verbose=False,
        random_state=None,
    ):
        store_params(self, locals())

    # ------------------------------------------------------------------ checks
    _parameter_constraints = {
        "network": [Options(*NETWORK_NAMES), "callable"],
        "epochs": [Interval("int", 1, None)],
        "batch_size": [Interval("int", 1, None), Options("auto")],
        "learning_rate": [Interval("real", 0, None, closed="neither")],
        "weight_decay": [Interval("real", 0, None)],
        "optimizer": [Options("adam", "adamw", "lbfgs")],
        "lr_schedule": [Options("constant", "cosine", "one-cycle")],
        "validation_fraction": [Interval("real", 0, 1, closed="left"), Options("auto")],
        "validation_metric": [Options("auto", "loss", "f1", *(f"top-{k}" for k in TOP_K))],
        "input_scaling": [Options("standard", "maxabs"), None],
        "target_scaling": ["boolean"],
        "input_features": [str, HasMethods("features"), None],
        "smiles_augmentation": [Interval("int", 0, None)],
        "patience": [Interval("int", 1, None)],
        "max_length": [Interval("int", 1, None), None],
        "n_draws": [Interval("int", 1, None)],
        "n_seeds": [Interval("int", 1, None)],
        "aggregate": [Options("mean", "max")],
        "device": [Options("cpu", "cuda", "auto")],
        "dtype": [Options("float32", "float64")],
        "mixed_precision": ["boolean"],
        "n_threads": [Interval("int", 1, None), None],
        "rtol": [Interval("real", 0, 1), None],
        "output_rank": [Interval("int", 1, None), None],
    }
    _parameter_hints = {
        "network": "or a callable factory(n_inputs, n_outputs) returning a torch.nn.Module",
        "learning_rate": "e.g. learning_rate=1e-3",
        "validation_fraction": "e.g. 0.1 to hold out a tenth of the pairs for early stopping",
        "output_rank": "p_Y <= output_sketch_size, or None to keep every direction above rtol",
    }

    # ------------------------------------------------------------------ fit
    def fit(self, X, Y, sample_weight=None, progress=None):
        """Fit: draw the output sketches, build each output basis and train the networks.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or a list of strings
        Y : array-like or sparse matrix of shape (n_samples, n_output_features)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights of each example's loss in the training objective (scaled to mean 1 over the
            training pairs) and in the early-stopping metrics. Rows of weight zero are dropped before the fit
            (no candidate, no sketch row; ``validation_rows_`` indexes the rows given).
        progress : callable, optional
            Called with 1 after every epoch (the CLI's progress bar).

        Returns
        -------
        self : DeepOutputKernelRegressor
        """
        t0 = time.perf_counter()
        validate_params(self)
        if Y is None:
            raise InvalidInputError(f"{type(self).__name__} requires the outputs Y; pass them to fit(X, Y)")
        torch = _torch()
        loss = output_loss(self.loss, self.loss_params)
        for attr in ("n_features_in_", "vocabulary_", "max_length_"):
            if hasattr(self, attr):
                delattr(self, attr)
        X_raw = X
        X, Y = self._prepare_inputs(X, reset=True), check_outputs(Y)
        X_raw, X, Y, w, rows = self._weighted_rows(X_raw, X, Y, sample_weight)  # weight 0: dropped before any draw
        n = n_items(X)
        device_of(self, torch)
        ky, self.output_kernel_spec_ = resolve_kernel(self.output_kernel, self.output_kernel_params, Y)
        rng_sketch, rng_train = make_rngs(self.random_state, 2)
        n_val = self._n_validation(n)
        if n_val and n - n_val < 2:
            raise InvalidParameterError(
                f"validation_fraction={self.validation_fraction} leaves {n - n_val} training rows; lower it"
            )
        perm = rng_train.permutation(n) if n_val else np.arange(n)
        tr, va = np.sort(perm[n_val:]), np.sort(perm[:n_val])
        self.validation_rows_ = va if rows is None else rows[va]  # rows of the data given
        for attr in ("input_shift_", "input_scale_", "network_params_"):
            self.__dict__.pop(attr, None)
        if self.input_kind_ == "features":
            self.input_shift_, self.input_scale_ = input_scaling(self.input_scaling, take(X, tr) if n_val else X,
                                                                 None if w is None else w[tr])
        self.network_params_ = resolve_network_params(self, len(tr), self._n_inputs())
        plan = in_memory_plan(Y, ky, self.output_sketch, self.output_sketch_size, self.output_sketch_params,
                              n=len(tr))  # "auto": the sqrt(n) rule within what memory holds
        sy, self.output_sketch_spec_, size_y = size_and_resolve_sketch(
            self.output_sketch, self.output_sketch_size, self.output_sketch_params, len(tr), plan=plan,
            param="output_sketch_size")
        if sy is None:
            raise InvalidParameterError(
                "output_sketch=None: DSOKR needs an output sketch to build its output basis; use e.g. "
                "output_sketch='subsample' with output_sketch_size=m_Y"
            )
        augmented = self._augment(X_raw, rng_train) if self.smiles_augmentation else None
        if augmented is not None:
            X = augmented[0]
        with torch_settings(torch, self.n_threads):
            members, histories, embeddings, C_all = train_members(self, torch, X, Y, tr, va, ky, sy, size_y, loss,
                                                                  (rng_sketch, rng_train), progress, augmented,
                                                                  sample_weight=w)
        self.draws_ = members
        self.output_basis_ = members[0].basis
        self.output_kernel_ = ky
        self.loss_ = loss
        self._decoder = get_decoder("candidates")
        self.candidates_ = C_all
        self.candidate_embeddings_ = embeddings
        self.candidate_bias_ = None if self.output_basis_.normalized else -0.5 * self.output_basis_.self_kernel(C_all)
        self.sketch_info_ = {"output": dict(members[0].info), "n_draws": int(self.n_draws),
                             "n_seeds": int(self.n_seeds), "n_validation": int(n_val)}
        self.sketch_infos_ = [{"output": dict(m.info)} for m in members]
        self.history_ = histories
        self.n_weights_ = members[0].n_weights
        self.n_outputs_ = None if is_collection(Y) else Y.shape[1]
        self.network_factory_ = (f"{getattr(self.network, '__module__', '?')}:"
                                 f"{getattr(self.network, '__qualname__', type(self.network).__name__)}"
                                 if callable(self.network) else None)
        self.execution_ = execution_record(plan)
        self.fit_seconds_ = time.perf_counter() - t0
        self.fit_info_ = self._fit_info(torch, len(tr), n_val, histories)
        return self

    def execution_plan(self, X, y=None):
        """How a fit on ``(X, y)`` would build its output basis, without fitting: the output side's plan."""
        validate_params(self)
        if y is None:
            raise InvalidInputError(f"{type(self).__name__} plans its output side: pass the outputs, "
                                    "execution_plan(X, Y)")
        Y = check_outputs(y)
        n = n_items(Y)
        n_val = self._n_validation(n)
        ky = resolve_kernel(self.output_kernel, self.output_kernel_params)[0]
        return in_memory_plan(Y, ky, self.output_sketch, self.output_sketch_size, self.output_sketch_params,
                              n=n - n_val)

    # the output kernel trick is the same as for the kernel models
    embed_outputs = OutputKernelRegressor.embed_outputs
    surrogate_mse = OutputKernelRegressor.surrogate_mse
    score = OutputKernelRegressor.score
