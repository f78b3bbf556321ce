"""DSOKR: a neural network trained to the sketched output embeddings, decoded like SISOKR.

El Ahmad, Yang, Laforgue and d'Alché-Buc, "Deep Sketched Output Kernel Regression for
Structured Prediction" (ECML PKDD 2024); El Ahmad, "Learning Deep Kernel Networks:
Application to Efficient and Robust Structured Prediction", PhD thesis, Institut
Polytechnique de Paris 2024, ch. 5, Alg. 5.1.

PyTorch is imported only inside :meth:`DeepOutputKernelRegressor.fit` and prediction
(through :func:`skframe.deps.require`), never by ``import skframe``.
"""

from __future__ import annotations

import contextlib
import sys
import time

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from skframe import deps
from skframe._validation import check_scalar
from skframe.core.output_basis import SketchedOutputBasis, unique_rows
from skframe.core.sketching import draw_sketch
from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.models._base import KernelModelMixin, validate_X
from skframe.models._core import make_rngs, resolve_kernel, size_and_resolve_sketch
from skframe.models.structured._candidates import check_outputs
from skframe.models.structured._decoding import DecodingMixin
from skframe.models.structured._estimator import OutputKernelRegressor
from skframe.plugin.collections import is_collection, n_items, take
from skframe.plugin.registry import get_decoder, get_loss

__all__ = ["DeepOutputKernelRegressor"]

NETWORK_NAMES = ("mlp", "text-cnn", "transformer")
TOKEN_NETWORK_NAMES = ("text-cnn", "transformer")
UNKNOWN = 1  # token id of a character not seen in training (0 pads)
_PREDICT_BATCH = 4096


def _torch(feature="DeepOutputKernelRegressor"):
    return deps.require("torch", feature)


def _strings(X):
    """A :class:`~skframe.graphs.StringBatch` when X holds strings, else None."""
    from skframe.graphs import StringBatch

    if isinstance(X, StringBatch):
        return X
    if isinstance(X, str):
        raise InvalidInputError("X is a single string; pass a list of strings (one per sample)")
    if isinstance(X, (list, tuple)) or (isinstance(X, np.ndarray) and X.dtype.kind in "UO"):
        items = list(X)
        if items and all(isinstance(s, str) for s in items):
            return StringBatch(items)
    return None


class _DeepMember:
    """One ensemble member: an output basis and the weights of the network trained to it."""

    __module__ = "skframe.models.structured"  # the name saved model files know it by

    def __init__(self, basis, weights, seed, info):
        self.basis = basis
        self.weights = weights  # parameter name -> ndarray (the network's state_dict)
        self.seed = int(seed)
        self.info = info
        self._net = None

    def to_state(self):
        return {"basis": self.basis, "weights": self.weights, "seed": self.seed, "info": self.info}

    @classmethod
    def from_state(cls, state):
        return cls(state["basis"], dict(state["weights"]), state["seed"], state["info"])

    @property
    def n_weights(self):
        return int(sum(w.size for w in self.weights.values()))


SMALL_NETWORK = 100_000  # weights; below this, n_threads=None trains on one thread


@contextlib.contextmanager
def _torch_settings(torch, n_threads):
    """Deterministic algorithms and an optional thread count during a fit or a prediction, then restored."""
    was_det = torch.are_deterministic_algorithms_enabled()
    threads = torch.get_num_threads()
    torch.use_deterministic_algorithms(True, warn_only=True)
    if n_threads and int(n_threads) != threads:
        torch.set_num_threads(int(n_threads))
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(was_det)
        torch.set_num_threads(threads)


class DeepOutputKernelRegressor(DecodingMixin, KernelModelMixin, BaseEstimator):
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
        for a linear model; default ``(256,)``), ``activation``, ``dropout``, ``bias``;
        text-cnn ``embedding_dim``, ``n_filters``, ``kernel_sizes``, ``dropout``; transformer
        ``d_model``, ``n_heads``, ``n_layers``, ``dim_feedforward``, ``dropout``.
    output_kernel : str or kernel object, default="gaussian"
    output_kernel_params : dict, optional
    output_sketch : str or sketch object, default="subsample"
        The output sketch R_Y (required: it defines the output basis).
    output_sketch_size : int or "auto", default="auto"
        m_Y; choose it with :func:`skframe.model_selection.curves.perfect_h_curve` (Perfect h).
    output_sketch_params : dict, optional
    loss : str or loss object, default="square"
        ``square``, ``huber``, ``epsilon-svr`` or ``epsilon-ridge`` (the ``output-*`` losses of
        the loss registry, acting on the distance in the output RKHS).
    loss_params : dict, optional
        E.g. ``{"kappa": 0.5}`` for huber, ``{"epsilon": 0.1}`` for the ε-insensitive losses.
    epochs : int, default=50
        Passes over the training data (outer iterations for ``optimizer="lbfgs"``).
    batch_size : int, default=64
        Mini-batch size (adam; lbfgs uses the full batch).
    learning_rate : float, default=1e-3
    weight_decay : float, default=0.0
        L2 penalty ``(weight_decay/2) ||W||^2`` on all parameters (the ridge ``lam`` of ISOKR for
        a linear network without bias).
    optimizer : {"adam", "lbfgs"}, default="adam"
    validation_fraction : float, default=0.0
        Fraction of the training pairs held out for early stopping (0: none); the output basis is
        built on the rest. The weights of the best validation epoch are kept.
    patience : int, default=10
        Epochs without a validation improvement before stopping.
    max_length : int, optional
        Token sequences are cut to this length (default: the longest training string, at most 512).
    n_draws : int, default=1
        Ensemble over this many output-sketch draws, each with its own network.
    n_seeds : int, default=1
        Networks trained from different initialisations per sketch draw.
    aggregate : {"mean", "max"}, default="mean"
        How the members' candidate scores are combined (thesis eq. 5.19).
    device : {"cpu", "cuda"}, default="cpu"
    dtype : {"float32", "float64"}, default="float32"
        Precision of the network.
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
        Per member: ``train_loss`` and ``val_loss`` per epoch, ``best_epoch``, ``stopped``.
    n_weights_ : int
        Parameters of the first member's network (the last layer has ``(width + 1) p``).
    input_kind_ : {"features", "tokens"}
    vocabulary_ : ndarray of int64
        Unicode code points of the training characters (tokens 2, 3, ...), for string inputs.
    max_length_ : int or None
    sketch_info_, fit_seconds_ : as in :class:`OutputKernelRegressor`

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
        epochs=50,
        batch_size=64,
        learning_rate=1e-3,
        weight_decay=0.0,
        optimizer="adam",
        validation_fraction=0.0,
        patience=10,
        max_length=None,
        n_draws=1,
        n_seeds=1,
        aggregate="mean",
        device="cpu",
        dtype="float32",
        n_threads=None,
        rtol=None,
        output_rank=None,
        verbose=False,
        random_state=None,
    ):
        self.network = network
        self.network_params = network_params
        self.output_kernel = output_kernel
        self.output_kernel_params = output_kernel_params
        self.output_sketch = output_sketch
        self.output_sketch_size = output_sketch_size
        self.output_sketch_params = output_sketch_params
        self.loss = loss
        self.loss_params = loss_params
        self.epochs = epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.optimizer = optimizer
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.max_length = max_length
        self.n_draws = n_draws
        self.n_seeds = n_seeds
        self.aggregate = aggregate
        self.device = device
        self.dtype = dtype
        self.n_threads = n_threads
        self.rtol = rtol
        self.output_rank = output_rank
        self.verbose = verbose
        self.random_state = random_state

    # ------------------------------------------------------------------ checks
    def _check_params(self):
        net = self.network
        if not callable(net) and net not in NETWORK_NAMES:
            raise InvalidParameterError(
                f"network={net!r}; use one of {', '.join(NETWORK_NAMES)} or a callable factory(n_inputs, n_outputs)"
            )
        check_scalar(self.epochs, "epochs", kind=int, low=1, fix="epochs must be a positive integer")
        check_scalar(self.batch_size, "batch_size", kind=int, low=1, fix="batch_size must be a positive integer")
        check_scalar(self.learning_rate, "learning_rate", low=0, low_inclusive=False, fix="e.g. learning_rate=1e-3")
        check_scalar(self.weight_decay, "weight_decay", low=0, fix="weight_decay must be >= 0")
        check_scalar(self.validation_fraction, "validation_fraction", low=0, high=1, high_inclusive=False,
                     fix="validation_fraction must be in [0, 1), e.g. 0.1")
        check_scalar(self.patience, "patience", kind=int, low=1, fix="patience must be a positive integer")
        check_scalar(self.n_draws, "n_draws", kind=int, low=1, fix="n_draws must be a positive integer")
        check_scalar(self.n_seeds, "n_seeds", kind=int, low=1, fix="n_seeds must be a positive integer")
        if self.max_length is not None:
            check_scalar(self.max_length, "max_length", kind=int, low=1, fix="max_length must be a positive integer")
        if self.n_threads is not None:
            check_scalar(self.n_threads, "n_threads", kind=int, low=1, fix="n_threads must be a positive integer")
        for name, value, allowed in (("optimizer", self.optimizer, ("adam", "lbfgs")),
                                     ("aggregate", self.aggregate, ("mean", "max")),
                                     ("device", self.device, ("cpu", "cuda")),
                                     ("dtype", self.dtype, ("float32", "float64"))):
            if value not in allowed:
                raise InvalidParameterError(f"{name}={value!r}; use one of {', '.join(map(repr, allowed))}")
        if self.rtol is not None:
            check_scalar(self.rtol, "rtol", low=0, high=1)
        if self.output_rank is not None:
            check_scalar(self.output_rank, "output_rank", kind=int, low=1,
                         fix="output_rank must be a positive integer (p_Y <= output_sketch_size) or None")

    def _resolve_loss(self):
        loss = self.loss
        if isinstance(loss, str):
            name = loss.strip().lower()
            name = name if name.startswith("output-") else "output-" + name
            try:
                loss = get_loss(name, **dict(self.loss_params or {}))
            except InvalidParameterError:
                raise
            except Exception as exc:  # unknown name
                raise InvalidParameterError(
                    f"loss={self.loss!r} is not a loss in the output RKHS; use square, huber, epsilon-svr or "
                    f"epsilon-ridge ({exc})"
                ) from exc
        if not getattr(loss, "output_rkhs", False) or not hasattr(loss, "torch_value"):
            raise InvalidParameterError(
                f"loss={self.loss!r} does not act on the output RKHS distance; use square, huber, epsilon-svr or "
                "epsilon-ridge"
            )
        return loss

    # ------------------------------------------------------------------ inputs
    def _uses_tokens(self):
        return self.network in TOKEN_NETWORK_NAMES

    def _prepare_inputs(self, X, reset):
        """Feature matrix (dense float64 or CSR) or an (n, L) int64 token array."""
        strings = _strings(X)
        if reset:
            if self._uses_tokens() and strings is None:
                raise InvalidInputError(
                    f"network={self.network!r} reads strings; pass a list of strings (or a StringBatch), "
                    "or use network='mlp' for feature vectors"
                )
            self.input_kind_ = "tokens" if strings is not None else "features"
        elif strings is None and self.input_kind_ == "tokens":
            raise InvalidInputError("this model was trained on strings; pass a list of strings")
        elif strings is not None and self.input_kind_ == "features":
            raise InvalidInputError("this model was trained on feature vectors; pass an array, not strings")
        if self.input_kind_ == "features":
            if is_collection(X):
                raise InvalidInputError(
                    f"{type(X).__name__} inputs need a network that reads them; pass feature vectors or strings"
                )
            return validate_X(self, X, reset=reset)
        if len(strings) == 0:
            raise InvalidInputError("X holds no strings; at least one is needed")
        lengths = np.diff(strings.ptr)
        if reset:
            self.vocabulary_ = np.unique(strings.codes).astype(np.int64)
            longest = int(max(1, lengths.max()))
            self.max_length_ = int(self.max_length) if self.max_length is not None else min(longest, 512)
        L = self.max_length_
        pos = np.searchsorted(self.vocabulary_, strings.codes)
        pos = np.clip(pos, 0, max(len(self.vocabulary_) - 1, 0))
        known = self.vocabulary_[pos] == strings.codes if len(self.vocabulary_) else np.zeros(0, bool)
        ids = np.where(known, pos + 2, UNKNOWN).astype(np.int64)
        T = np.zeros((len(strings), L), dtype=np.int64)
        row = np.repeat(np.arange(len(strings)), lengths)
        col = np.arange(ids.size) - np.repeat(strings.ptr[:-1], lengths)
        keep = col < L
        T[row[keep], col[keep]] = ids[keep]
        return T

    def _n_inputs(self):
        return len(self.vocabulary_) + 2 if self.input_kind_ == "tokens" else int(self.n_features_in_)

    # ------------------------------------------------------------------ networks
    def _build(self, torch, p):
        if callable(self.network):
            net = self.network(self._n_inputs(), p)
            if not isinstance(net, torch.nn.Module):
                raise InvalidParameterError(
                    f"the network factory returned {type(net).__name__}; it must return a torch.nn.Module"
                )
            return net
        from skframe.models.structured._networks import build_network

        return build_network(self.network, self._n_inputs(), p, self.network_params,
                             max_length=getattr(self, "max_length_", None))

    def _network(self, torch, member):
        """The member's network, rebuilt from its recorded description and weights on first use."""
        if member._net is None:
            if self.network is None:
                where = getattr(self, "network_factory_", "a callable")
                raise InvalidParameterError(
                    f"this model was trained with the network factory {where}, which model files do not store; "
                    "set model.network to the same factory before predicting"
                )
            net = self._build(torch, member.basis.n_components)
            state = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in member.weights.items()}
            try:
                net.load_state_dict(state)
            except RuntimeError as exc:
                raise InvalidParameterError(
                    f"the network does not match the saved weights ({str(exc).splitlines()[0]}); use the "
                    "same network and network_params as when the model was trained"
                ) from exc
            member._net = net.to(device=self._device(torch), dtype=self._dtype(torch)).eval()
        return member._net

    def _device(self, torch):
        if self.device == "cuda" and not torch.cuda.is_available():
            raise InvalidParameterError("device='cuda' but PyTorch sees no CUDA GPU; use device='cpu'")
        return torch.device(self.device)

    def _dtype(self, torch):
        return torch.float64 if self.dtype == "float64" else torch.float32

    def _batch(self, torch, X, idx):
        """Rows ``idx`` of the prepared inputs as a tensor on the device."""
        dev = self._device(torch)
        if self.input_kind_ == "tokens":
            return torch.from_numpy(np.ascontiguousarray(X[idx])).to(dev)
        rows = X[idx]
        rows = rows.toarray() if sp.issparse(rows) else np.ascontiguousarray(rows)
        return torch.from_numpy(rows).to(device=dev, dtype=self._dtype(torch))

    # ------------------------------------------------------------------ fit
    def fit(self, X, Y, progress=None):
        """Fit: draw the output sketches, build each output basis and train the networks.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or a list of strings
        Y : array-like or sparse matrix of shape (n_samples, n_output_features)
        progress : callable, optional
            Called with 1 after every epoch (the CLI's progress bar).

        Returns
        -------
        self : DeepOutputKernelRegressor
        """
        t0 = time.perf_counter()
        self._check_params()
        if Y is None:
            raise InvalidInputError(f"{type(self).__name__} requires the outputs Y; pass them to fit(X, Y)")
        torch = _torch()
        loss = self._resolve_loss()
        for attr in ("n_features_in_", "vocabulary_", "max_length_"):
            if hasattr(self, attr):
                delattr(self, attr)
        X = self._prepare_inputs(X, reset=True)
        Y = check_outputs(Y)
        n = n_items(X)
        if n_items(Y) != n:
            raise InvalidInputError(f"X has {n} rows but Y has {n_items(Y)}; they must match")
        self._device(torch)
        ky, self.output_kernel_spec_ = resolve_kernel(self.output_kernel, self.output_kernel_params, Y)
        rng_sketch, rng_train = make_rngs(self.random_state, 2)
        n_val = int(round(self.validation_fraction * n)) if self.validation_fraction else 0
        if n_val and n - n_val < 2:
            raise InvalidParameterError(
                f"validation_fraction={self.validation_fraction} leaves {n - n_val} training rows; lower it"
            )
        perm = rng_train.permutation(n) if n_val else np.arange(n)
        tr, va = np.sort(perm[n_val:]), np.sort(perm[:n_val])
        Y_tr = Y if not n_val else take(Y, tr)
        sy, self.output_sketch_spec_, size_y = size_and_resolve_sketch(
            self.output_sketch, self.output_sketch_size, self.output_sketch_params, len(tr), param="output_sketch_size")
        if sy is None:
            raise InvalidParameterError(
                "output_sketch=None: DSOKR needs an output sketch to build its output basis; use e.g. "
                "output_sketch='subsample' with output_sketch_size=m_Y"
            )
        C, first, inverse = unique_rows(Y_tr)
        members, histories, embeddings = [], [], []
        C_all = unique_rows(Y)[0] if n_val else C
        with _torch_settings(torch, self.n_threads):
            for _d in range(int(self.n_draws)):
                R = draw_sketch(sy, len(tr), rng_sketch, X=Y_tr, kernel=ky)
                basis, Psi = SketchedOutputBasis.fit(ky, Y_tr, R, rtol=self.rtol, distinct=(first, inverse),
                                                     n_components=self.output_rank)
                off = np.clip(basis.self_kernel(Y_tr) - np.einsum("ij,ij->i", Psi, Psi), 0.0, None)
                val = None
                if n_val:
                    Y_va = take(Y, va)
                    P_va = basis.embed(Y_va)
                    val = (take(X, va), P_va, np.clip(basis.self_kernel(Y_va) - np.einsum("ij,ij->i", P_va, P_va),
                                                      0.0, None))
                E = np.ascontiguousarray(basis.embed(C_all)) if n_val else np.ascontiguousarray(Psi[first])
                info = dict(R.summary(), rank=basis.n_components, **size_y)
                basis.sketch_info = dict(basis.sketch_info, **size_y)
                for _s in range(int(self.n_seeds)):
                    seed = int(rng_train.integers(0, 2**31 - 1))
                    weights, hist = self._train(torch, X if not n_val else take(X, tr), Psi, off, val, loss, seed,
                                                progress, len(members))
                    members.append(_DeepMember(basis, weights, seed, dict(info)))
                    histories.append(hist)
                    embeddings.append(E)
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
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def _threads(self, n_weights):
        """``n_threads``, else one thread for a network under SMALL_NETWORK weights, else None (PyTorch's own)."""
        if self.n_threads is not None:
            return int(self.n_threads)
        return 1 if n_weights < SMALL_NETWORK else None

    def _train(self, torch, X, Psi, off, val, loss, seed, progress, index):
        """Train one network to the targets Psi; return its weights as arrays and the loss history."""
        dev, dt = self._device(torch), self._dtype(torch)
        n, p = Psi.shape
        devices = [torch.cuda.current_device()] if dev.type == "cuda" else []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(seed)
            net = self._build(torch, p).to(device=dev, dtype=dt)
            threads = self._threads(sum(q.numel() for q in net.parameters()))
            if threads and threads != torch.get_num_threads():
                torch.set_num_threads(threads)  # restored by _torch_settings at the end of fit
            T = torch.from_numpy(np.ascontiguousarray(Psi)).to(device=dev, dtype=dt)
            O = torch.from_numpy(np.ascontiguousarray(off)).to(device=dev, dtype=dt)
            order_rng = np.random.default_rng(seed)
            params = [q for q in net.parameters() if q.requires_grad]
            wd = float(self.weight_decay)
            if self.optimizer == "adam":
                opt = torch.optim.Adam(params, lr=float(self.learning_rate), weight_decay=wd)
            else:
                opt = torch.optim.LBFGS(params, lr=float(self.learning_rate), max_iter=50, history_size=50,
                                        tolerance_grad=1e-12, tolerance_change=1e-15, line_search_fn="strong_wolfe")

            def batch_loss(idx, penalty=False):
                G = net(self._batch(torch, X, idx))
                t = torch.from_numpy(idx).to(dev)
                u = ((G - T[t]) ** 2).sum(dim=1) + O[t]
                value = loss.torch_value(u).mean()
                if penalty and wd:
                    value = value + 0.5 * wd * sum((q * q).sum() for q in params)
                return value

            hist = {"train_loss": [], "val_loss": [], "best_epoch": None, "stopped": "epochs"}
            best, best_state, bad = np.inf, None, 0
            if progress is not None and index == 0 and hasattr(progress, "new_stage"):
                progress.new_stage("epochs", total=int(self.epochs) * int(self.n_draws) * int(self.n_seeds))
            for epoch in range(int(self.epochs)):
                net.train()
                if self.optimizer == "adam":
                    total = 0.0
                    perm = order_rng.permutation(n)
                    for start in range(0, n, int(self.batch_size)):
                        idx = perm[start : start + int(self.batch_size)]
                        opt.zero_grad()
                        value = batch_loss(idx)
                        value.backward()
                        opt.step()
                        total += float(value.detach()) * len(idx)
                    train_loss = total / n
                else:
                    every = np.arange(n)

                    def closure():
                        opt.zero_grad()
                        value = batch_loss(every, penalty=True)
                        value.backward()
                        return value

                    train_loss = float(opt.step(closure).detach())
                hist["train_loss"].append(train_loss)
                line = f"member {index + 1} epoch {epoch + 1}/{self.epochs} train loss {train_loss:.6g}"
                if val is not None:
                    v = self._loss_on(torch, net, val, loss)
                    hist["val_loss"].append(v)
                    line += f" validation loss {v:.6g}"
                    if v < best:
                        best, bad, hist["best_epoch"] = v, 0, epoch
                        best_state = {k: t.detach().clone() for k, t in net.state_dict().items()}
                    else:
                        bad += 1
                if self.verbose:
                    print(line, file=sys.stderr)
                if progress is not None:
                    progress(1)
                if not np.isfinite(train_loss):
                    raise InvalidParameterError(
                        f"training diverged (loss {train_loss}) at epoch {epoch + 1}; lower learning_rate"
                    )
                if val is not None and bad >= int(self.patience):
                    hist["stopped"] = f"early stopping: {self.patience} epochs without a validation improvement"
                    break
            if best_state is not None:
                net.load_state_dict(best_state)
        weights = {k: t.detach().cpu().numpy().copy() for k, t in net.state_dict().items()}
        return weights, hist

    def _loss_on(self, torch, net, val, loss):
        Xv, Pv, Ov = val
        G = self._forward(torch, net, Xv)
        u = np.einsum("ij,ij->i", G - Pv, G - Pv) + Ov
        return float(np.mean(loss.c(u)))

    def _forward(self, torch, net, X):
        net.eval()
        out = []
        with torch.no_grad():
            for start in range(0, n_items(X), _PREDICT_BATCH):
                idx = np.arange(start, min(n_items(X), start + _PREDICT_BATCH))
                out.append(net(self._batch(torch, X, idx)).cpu().numpy().astype(np.float64))
        return np.concatenate(out, axis=0) if out else np.zeros((0, 0))

    # ------------------------------------------------------------------ surrogate
    def _surrogate(self, X):
        """Per-member coordinates ``g(x)`` in its output basis, float64 arrays."""
        self._check_fitted()
        X = self._prepare_inputs(X, reset=False)
        torch = _torch()
        with _torch_settings(torch, self._threads(self.draws_[0].n_weights)):
            return [self._forward(torch, self._network(torch, m), X) for m in self.draws_]

    def surrogate_predict(self, X):
        """Coordinates ``g(x)`` of each member's network in its output basis.

        Returns
        -------
        list of ndarray of shape (n_samples, p)
        """
        return self._surrogate(X)

    # the output kernel trick is the same as for the kernel models
    embed_outputs = OutputKernelRegressor.embed_outputs
    surrogate_mse = OutputKernelRegressor.surrogate_mse
    score = OutputKernelRegressor.score

    # ------------------------------------------------------------------ persistence
    def to_state(self):
        """Everything but the cached networks; a callable network is recorded by name only."""
        state = dict(vars(self))
        if callable(state.get("network")):
            state["network"] = None
        return state

    @classmethod
    def from_state(cls, state):
        obj = cls.__new__(cls)
        obj.__dict__.update(state)
        obj.__dict__.setdefault("output_rank", None)  # files saved before the parameter existed
        return obj

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.string = True
        tags.target_tags.required = True
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = False
        return tags

