"""DSOKR's networks at work: building them, training them to the sketched outputs, running them.

The estimator (:class:`skframe.models.structured.DeepOutputKernelRegressor`) hands its
parameters and the prepared data to these functions; PyTorch arrives as the ``torch``
argument (imported by the estimator through :func:`skframe.deps.require`), so this module
imports it nowhere. One ensemble member is a :class:`_DeepMember`: an output basis and the
weights of the network trained to it (El Ahmad, "Learning Deep Kernel Networks:
Application to Efficient and Robust Structured Prediction", PhD thesis, Institut
Polytechnique de Paris 2024, Alg. 5.1).
"""

from __future__ import annotations

import contextlib
import sys

import numpy as np
import scipy.sparse as sp

from skframe.core.output_basis import SketchedOutputBasis, unique_rows
from skframe.core.sketching import draw_sketch
from skframe.exceptions import InvalidParameterError
from skframe.options import compute_dtype
from skframe.plugin.collections import n_items, take
from skframe.plugin.registry import get_loss
from skframe.plugin.tags import get_tags

__all__ = ["SMALL_NETWORK", "output_loss", "torch_settings", "build_network", "member_network", "train_members",
           "train_network", "forward"]

SMALL_NETWORK = 100_000  # weights; below this, n_threads=None trains on one thread
PREDICT_BATCH = 4096  # rows per forward pass at prediction


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


def output_loss(loss, loss_params=None):
    """The loss object of a DSOKR ``loss`` parameter: a name (``square`` means ``output-square``) or an object.

    Raises
    ------
    InvalidParameterError
        A name that is not a loss, or a loss that does not act on the output RKHS distance.
    """
    given = loss
    if isinstance(loss, str):
        name = loss.strip().lower()
        name = name if name.startswith("output-") else "output-" + name
        try:
            loss = get_loss(name, **dict(loss_params or {}))
        except InvalidParameterError:
            raise
        except Exception as exc:  # unknown name
            raise InvalidParameterError(
                f"loss={given!r} is not a loss in the output RKHS; use square, huber, epsilon-svr or "
                f"epsilon-ridge ({exc})"
            ) from exc
    if not get_tags(loss, "loss").output_rkhs or not hasattr(loss, "torch_value"):
        raise InvalidParameterError(
            f"loss={given!r} does not act on the output RKHS distance; use square, huber, epsilon-svr or "
            "epsilon-ridge"
        )
    return loss


@contextlib.contextmanager
def torch_settings(torch, n_threads):
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


def threads_for(est, n_weights):
    """``est.n_threads``, else one thread for a network under SMALL_NETWORK weights, else None (PyTorch's own)."""
    if est.n_threads is not None:
        return int(est.n_threads)
    return 1 if n_weights < SMALL_NETWORK else None


def device_of(est, torch):
    """The torch device of ``est.device``; refuses CUDA when PyTorch sees no GPU."""
    if est.device.strip().lower() == "cuda" and not torch.cuda.is_available():
        raise InvalidParameterError("device='cuda' but PyTorch sees no CUDA GPU; use device='cpu'")
    return torch.device(est.device.strip().lower())


def dtype_of(est, torch):
    """The torch dtype of ``est.dtype`` (``float32`` or ``float64``)."""
    return getattr(torch, compute_dtype(est.dtype.strip().lower()).name)


def build_network(est, torch, p):
    """A fresh network of ``est`` with ``p`` outputs: the user's factory or a built-in one."""
    if callable(est.network):
        net = est.network(est._n_inputs(), p)
        if not isinstance(net, torch.nn.Module):
            raise InvalidParameterError(
                f"the network factory returned {type(net).__name__}; it must return a torch.nn.Module"
            )
        return net
    from skframe.models.structured._networks import build_network as build_builtin  # lazy: imports torch

    return build_builtin(est.network.strip().lower(), est._n_inputs(), p, est.network_params,
                         max_length=getattr(est, "max_length_", None))


def member_network(est, torch, member):
    """The member's network, rebuilt from its recorded description and weights on first use."""
    if member._net is None:
        if est.network is None:
            where = getattr(est, "network_factory_", "a callable")
            raise InvalidParameterError(
                f"this model was trained with the network factory {where}, which model files do not store; "
                "set model.network to the same factory before predicting"
            )
        net = build_network(est, torch, member.basis.n_components)
        state = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in member.weights.items()}
        try:
            net.load_state_dict(state)
        except RuntimeError as exc:
            raise InvalidParameterError(
                f"the network does not match the saved weights ({str(exc).splitlines()[0]}); use the "
                "same network and network_params as when the model was trained"
            ) from exc
        member._net = net.to(device=device_of(est, torch), dtype=dtype_of(est, torch)).eval()
    return member._net


def batch_tensor(est, torch, X, idx):
    """Rows ``idx`` of the prepared inputs as a tensor on the device."""
    dev = device_of(est, torch)
    if est.input_kind_ == "tokens":
        return torch.from_numpy(np.ascontiguousarray(X[idx])).to(dev)
    rows = X[idx]
    rows = rows.toarray() if sp.issparse(rows) else np.ascontiguousarray(rows)
    return torch.from_numpy(rows).to(device=dev, dtype=dtype_of(est, torch))


def _optimizer(est, torch, params):
    wd = float(est.weight_decay)
    if est.optimizer.strip().lower() == "adam":
        return torch.optim.Adam(params, lr=float(est.learning_rate), weight_decay=wd)
    return torch.optim.LBFGS(params, lr=float(est.learning_rate), max_iter=50, history_size=50,
                             tolerance_grad=1e-12, tolerance_change=1e-15, line_search_fn="strong_wolfe")


def train_network(est, torch, X, Psi, off, val, loss, seed, progress, index):
    """Train one network of ``est`` to the targets ``Psi``; return its weights as arrays and the loss history.

    Minimises ``(1/n) sum_i c(||g_W(x_i) - Psi_i||^2 + off_i)`` (``c`` the loss in the output
    RKHS, ``off_i`` the part of ``psi(y_i)`` outside the basis) plus ``(weight_decay/2) ||W||^2``
    by Adam on mini-batches or full-batch L-BFGS. ``val = (X_val, Psi_val, off_val)`` enables
    early stopping (the weights of the best validation epoch are kept); ``index`` numbers the
    member in the messages.
    """
    dev, dt = device_of(est, torch), dtype_of(est, torch)
    n, p = Psi.shape
    adam = est.optimizer.strip().lower() == "adam"
    devices = [torch.cuda.current_device()] if dev.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        net = build_network(est, torch, p).to(device=dev, dtype=dt)
        threads = threads_for(est, sum(q.numel() for q in net.parameters()))
        if threads and threads != torch.get_num_threads():
            torch.set_num_threads(threads)  # restored by torch_settings at the end of fit
        T = torch.from_numpy(np.ascontiguousarray(Psi)).to(device=dev, dtype=dt)
        outside = torch.from_numpy(np.ascontiguousarray(off)).to(device=dev, dtype=dt)
        order_rng = np.random.default_rng(seed)
        params = [q for q in net.parameters() if q.requires_grad]
        wd = float(est.weight_decay)
        opt = _optimizer(est, torch, params)

        def batch_loss(idx, penalty=False):
            G = net(batch_tensor(est, torch, X, idx))
            t = torch.from_numpy(idx).to(dev)
            u = ((G - T[t]) ** 2).sum(dim=1) + outside[t]
            value = loss.torch_value(u).mean()
            if penalty and wd:
                value = value + 0.5 * wd * sum((q * q).sum() for q in params)
            return value

        def closure():  # full batch (L-BFGS)
            opt.zero_grad()
            value = batch_loss(np.arange(n), penalty=True)
            value.backward()
            return value

        hist = {"train_loss": [], "val_loss": [], "best_epoch": None, "stopped": "epochs"}
        best, best_state, bad = np.inf, None, 0
        if progress is not None and index == 0 and hasattr(progress, "new_stage"):
            progress.new_stage("epochs", total=int(est.epochs) * int(est.n_draws) * int(est.n_seeds))
        for epoch in range(int(est.epochs)):
            net.train()
            if adam:
                total = 0.0
                perm = order_rng.permutation(n)
                for start in range(0, n, int(est.batch_size)):
                    idx = perm[start : start + int(est.batch_size)]
                    opt.zero_grad()
                    value = batch_loss(idx)
                    value.backward()
                    opt.step()
                    total += float(value.detach()) * len(idx)
                train_loss = total / n
            else:
                train_loss = float(opt.step(closure).detach())
            hist["train_loss"].append(train_loss)
            line = f"member {index + 1} epoch {epoch + 1}/{est.epochs} train loss {train_loss:.6g}"
            if val is not None:
                v = _loss_on(est, torch, net, val, loss)
                hist["val_loss"].append(v)
                line += f" validation loss {v:.6g}"
                if v < best:
                    best, bad, hist["best_epoch"] = v, 0, epoch
                    best_state = {k: t.detach().clone() for k, t in net.state_dict().items()}
                else:
                    bad += 1
            if est.verbose:
                print(line, file=sys.stderr)
            if progress is not None:
                progress(1)
            if not np.isfinite(train_loss):
                raise InvalidParameterError(
                    f"training diverged (loss {train_loss}) at epoch {epoch + 1}; lower learning_rate"
                )
            if val is not None and bad >= int(est.patience):
                hist["stopped"] = f"early stopping: {est.patience} epochs without a validation improvement"
                break
        if best_state is not None:
            net.load_state_dict(best_state)
    weights = {k: t.detach().cpu().numpy().copy() for k, t in net.state_dict().items()}
    return weights, hist


def train_members(est, torch, X, Y, tr, va, kernel, sketch, size_info, loss, rngs, progress):
    """The ensemble: ``est.n_draws`` output-sketch draws, each with ``est.n_seeds`` networks trained to its basis.

    ``tr`` and ``va`` index the training and validation pairs (``va`` empty: no early
    stopping); ``rngs = (rng_sketch, rng_train)`` draw the sketches and the seeds. Returns the
    members, their loss histories, the candidate embeddings of each member and the candidate
    set (the distinct outputs of all pairs).
    """
    rng_sketch, rng_train = rngs
    n_val = len(va)
    Y_tr = Y if not n_val else take(Y, tr)
    C, first, inverse = unique_rows(Y_tr)
    C_all = unique_rows(Y)[0] if n_val else C
    members, histories, embeddings = [], [], []
    for _d in range(int(est.n_draws)):
        R = draw_sketch(sketch, len(tr), rng_sketch, X=Y_tr, kernel=kernel)
        basis, Psi = SketchedOutputBasis.fit(kernel, Y_tr, R, rtol=est.rtol, distinct=(first, inverse),
                                             n_components=est.output_rank)
        off = np.clip(basis.self_kernel(Y_tr) - np.einsum("ij,ij->i", Psi, Psi), 0.0, None)
        val = None
        if n_val:
            Y_va = take(Y, va)
            P_va = basis.embed(Y_va)
            val = (take(X, va), P_va, np.clip(basis.self_kernel(Y_va) - np.einsum("ij,ij->i", P_va, P_va), 0.0, None))
        E = np.ascontiguousarray(basis.embed(C_all)) if n_val else np.ascontiguousarray(Psi[first])
        info = dict(R.summary(), rank=basis.n_components, **size_info)
        basis.sketch_info = dict(basis.sketch_info, **size_info)
        for _s in range(int(est.n_seeds)):
            seed = int(rng_train.integers(0, 2**31 - 1))
            weights, hist = train_network(est, torch, X if not n_val else take(X, tr), Psi, off, val, loss, seed,
                                          progress, len(members))
            members.append(_DeepMember(basis, weights, seed, dict(info)))
            histories.append(hist)
            embeddings.append(E)
    return members, histories, embeddings, C_all


def _loss_on(est, torch, net, val, loss):
    """Mean loss of ``net`` on the validation triple ``(X_val, Psi_val, off_val)``."""
    Xv, Pv, Ov = val
    G = forward(est, torch, net, Xv)
    u = np.einsum("ij,ij->i", G - Pv, G - Pv) + Ov
    return float(np.mean(loss.c(u)))


def forward(est, torch, net, X):
    """``net`` on the prepared inputs X, in batches of PREDICT_BATCH rows, as a float64 array."""
    net.eval()
    out = []
    with torch.no_grad():
        for start in range(0, n_items(X), PREDICT_BATCH):
            idx = np.arange(start, min(n_items(X), start + PREDICT_BATCH))
            out.append(net(batch_tensor(est, torch, X, idx)).cpu().numpy().astype(np.float64))
    return np.concatenate(out, axis=0) if out else np.zeros((0, 0))
