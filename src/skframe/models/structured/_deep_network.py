"""DSOKR's networks and their inputs: the output loss, threads and device, building a network, scaling
and batching the input rows, the optimizer and its schedule.

PyTorch arrives as the ``torch`` argument (see :mod:`skframe.models.structured._deep_training`);
this module imports it nowhere.
"""

from __future__ import annotations

import contextlib

import numpy as np
import scipy.sparse as sp

from skframe.compute.execution import NetworkPlan, plan_network
from skframe.compute.plan_rules import SMALL_NETWORK
from skframe.contract.collections import n_items
from skframe.contract.registry import get_loss
from skframe.contract.tags import get_tags
from skframe.core.threads import set_torch_threads
from skframe.exceptions import InvalidParameterError
from skframe.options import compute_dtype

__all__ = ["AUTO_BATCH", "SMALL_NETWORK", "auto_hidden", "batch_tensor", "build_network", "device_of", "dtype_of",
           "input_scaling", "member_network", "output_loss", "resident_inputs", "resolve_batch_size",
           "resolve_network_params", "scaled_rows", "network_threads", "torch_settings"]

MLP_DROPOUT = 0.2  # dropout of the mlp's hidden layers unless network_params says otherwise
AUTO_BATCH = 256  # rows per mini-batch of batch_size="auto" on the CPU (and the least on a GPU)


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
    torch.use_deterministic_algorithms(True, warn_only=True)
    threads = set_torch_threads(torch, n_threads)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(was_det)
        set_torch_threads(torch, threads)


def network_threads(est, n_weights):
    """The plan's threads of a network of ``n_weights`` weights (:meth:`skframe.compute.execution.NetworkPlan.
    threads`): ``est.n_threads``, else one under ``SMALL_NETWORK`` weights, else None (PyTorch's own)."""
    return NetworkPlan(str(est.device), est.n_threads).threads(n_weights)


def device_of(est, torch):
    """The torch device of ``est.device`` from the plan (:func:`skframe.compute.execution.plan_network`:
    ``"auto"`` is a CUDA GPU when PyTorch sees one); refuses CUDA without one."""
    return torch.device(plan_network(est.device, est.n_threads, torch.cuda.is_available).device)


def input_scaling(how, X, weights=None):
    """``(shift, scale)`` of the feature scaling learned on the training inputs X (dense or sparse).

    ``"standard"``: column means and standard deviations (weighted means with the rows' positive
    ``weights``: rows repeated by integer weights give the same scaling); ``"maxabs"``: no shift, the largest
    absolute value per column; None: no scaling (``(None, None)``). Constant columns keep scale 1.
    """
    if how is None:
        return None, None
    if how == "maxabs":
        top = abs(X).max(axis=0)
        scale = np.asarray(top.toarray() if sp.issparse(top) else top, dtype=np.float64).ravel()
        return None, np.where(scale > 0, scale, 1.0)
    if weights is not None:
        p = np.asarray(weights, dtype=np.float64) / np.sum(weights)
        mean = np.asarray(X.T @ p, dtype=np.float64).ravel()
        sq = (X.multiply(X) if sp.issparse(X) else np.square(X, dtype=np.float64)).T @ p
    else:
        mean = np.asarray(X.mean(axis=0), dtype=np.float64).ravel()
        sq = X.multiply(X).mean(axis=0) if sp.issparse(X) else np.mean(np.square(X, dtype=np.float64), axis=0)
    std = np.sqrt(np.clip(np.asarray(sq, dtype=np.float64).ravel() - mean**2, 0.0, None))
    return mean, np.where(std > 1e-12 * np.maximum(1.0, np.abs(mean)), std, 1.0)


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

    params = getattr(est, "network_params_", None)
    return build_builtin(est.network.strip().lower(), est._n_inputs(), p, est.network_params if params is None
                         else params, max_length=getattr(est, "max_length_", None))


def auto_hidden(n, d):
    """The hidden widths of ``hidden="auto"`` for ``n`` training rows of ``d`` features: one layer, wider with more
    data and features (the geometric mean of n and d rounded to a power of two, between 128 and 1024)."""
    width = 2 ** int(np.round(np.log2(max(1.0, np.sqrt(float(n) * float(d))))))
    return (int(min(1024, max(128, width))),)


def resolve_network_params(est, n, d):
    """``est.network_params`` with the data-dependent defaults of the mlp filled in (``hidden="auto"``)."""
    params = dict(est.network_params or {})
    if callable(est.network) or est.network.strip().lower() != "mlp":
        return params
    if params.get("hidden", "auto") == "auto":
        params["hidden"] = auto_hidden(n, d)
    params.setdefault("dropout", MLP_DROPOUT)
    return params


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


RESIDENT_BYTES_CPU = 512 * 2**20  # inputs up to this size live as one dense tensor during training (CPU)
RESIDENT_FRACTION_GPU = 0.25  # on a GPU: up to this fraction of its free memory


def scaled_rows(est, rows):
    """Rows of a feature matrix as a dense float64 array, with the input scaling learned in fit applied."""
    rows = rows.toarray() if sp.issparse(rows) else np.array(rows, dtype=np.float64)
    shift, scale = getattr(est, "input_shift_", None), getattr(est, "input_scale_", None)
    if shift is not None:
        rows -= shift
    if scale is not None:
        rows /= scale
    return rows


def batch_tensor(est, torch, X, idx):
    """Rows ``idx`` of the prepared inputs as a tensor on the device (features scaled as learned in fit)."""
    dev = device_of(est, torch)
    if est.input_kind_ == "tokens":
        return torch.from_numpy(np.ascontiguousarray(X[idx])).to(dev)
    return torch.from_numpy(scaled_rows(est, X[idx])).to(device=dev, dtype=dtype_of(est, torch))


def resident_inputs(est, torch, X):
    """All the prepared inputs as one tensor on the device when they fit (see RESIDENT_*), else None.

    Training then takes its mini-batches by indexing this tensor: no per-batch densifying and,
    on a GPU, no per-batch copy from the host.
    """
    dev, dt = device_of(est, torch), dtype_of(est, torch)
    n = n_items(X)
    if est.input_kind_ == "tokens":
        nbytes = 8 * X.size
    else:
        nbytes = n * int(est.n_features_in_) * torch.tensor([], dtype=dt).element_size()
    if dev.type == "cuda":
        budget = RESIDENT_FRACTION_GPU * torch.cuda.mem_get_info(dev)[0]
    else:
        budget = RESIDENT_BYTES_CPU
    if nbytes > budget:
        return None
    if est.input_kind_ == "tokens":
        return torch.from_numpy(np.ascontiguousarray(X)).to(dev)
    return batch_tensor(est, torch, X, np.arange(n))


def resolve_batch_size(est, torch, n):
    """``est.batch_size``, or for ``"auto"``: 256 rows, larger on a GPU for large data (n / 32, at most 4096)."""
    if est.batch_size != "auto":
        return int(est.batch_size)
    size = AUTO_BATCH
    if device_of(est, torch).type == "cuda":
        size = max(size, min(4096, n // 32))
    return int(max(1, min(size, n)))


def _optimizer(est, torch, params, lr):
    wd = float(est.weight_decay)
    name = est.optimizer.strip().lower()
    if name == "adam":
        return torch.optim.Adam(params, lr=lr, weight_decay=wd)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=wd)
    return torch.optim.LBFGS(params, lr=lr, max_iter=50, history_size=50,
                             tolerance_grad=1e-12, tolerance_change=1e-15, line_search_fn="strong_wolfe")


def _schedule(est, torch, opt, steps_per_epoch):
    """The learning-rate schedule over ``est.epochs`` epochs: None (constant), cosine or one-cycle, per step."""
    name = str(est.lr_schedule or "constant").strip().lower()
    total = max(1, int(est.epochs) * int(steps_per_epoch))
    if name == "constant" or est.optimizer.strip().lower() == "lbfgs":
        return None
    if name == "one-cycle":
        return torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=float(est.learning_rate), total_steps=total,
                                                   pct_start=0.3, anneal_strategy="cos", cycle_momentum=False)
    warm = min(total // 10, int(steps_per_epoch))  # cosine: one epoch (at most a tenth of the steps) of warm-up

    def factor(step):
        if step < warm:
            return (step + 1) / (warm + 1)
        return 0.5 * (1.0 + np.cos(np.pi * min(1.0, (step - warm) / max(1, total - warm))))

    return torch.optim.lr_scheduler.LambdaLR(opt, factor)
