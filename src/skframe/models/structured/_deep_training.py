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

import sys

import numpy as np
import scipy.sparse as sp

from skframe.contract.collections import is_collection, n_items, take
from skframe.core.output_basis import SketchedOutputBasis, unique_rows
from skframe.core.sketching import draw_sketch
from skframe.core.threads import set_torch_threads
from skframe.exceptions import InvalidParameterError
from skframe.models.structured._deep_network import (
    _optimizer,
    _schedule,
    batch_tensor,
    build_network,
    device_of,
    dtype_of,
    network_threads,
    resident_inputs,
    resolve_batch_size,
)

__all__ = ["ValidationSet", "decode_on_device", "forward", "surrogate_loss", "train_members", "train_network"]

PREDICT_BATCH = 4096  # rows per forward pass at prediction


class _DeepMember:
    """One ensemble member: an output basis and the weights of the network trained to it."""

    __module__ = "skframe.models.structured"  # the name saved model files know it by

    def __init__(self, basis, weights, seed, info, target=None):
        self.basis = basis
        self.weights = weights  # parameter name -> ndarray (the network's state_dict)
        self.seed = int(seed)
        self.info = info
        # the network predicts z; the coordinates are shift + scale z (None: g = z, files saved before)
        self.target_shift = None if target is None else np.asarray(target[0], dtype=np.float64)
        self.target_scale = 1.0 if target is None else float(target[1])
        self._net = None

    def to_state(self):
        return {"basis": self.basis, "weights": self.weights, "seed": self.seed, "info": self.info,
                "target_shift": self.target_shift, "target_scale": self.target_scale}

    @classmethod
    def from_state(cls, state):
        shift = state.get("target_shift")
        target = None if shift is None else (shift, state.get("target_scale", 1.0))
        return cls(state["basis"], dict(state["weights"]), state["seed"], state["info"], target=target)

    def coordinates(self, Z):
        """The coordinates ``g = shift + scale z`` of the network's outputs ``Z``."""
        if self.target_shift is None:
            return Z
        return self.target_shift + self.target_scale * Z

    @property
    def n_weights(self):
        return int(sum(w.size for w in self.weights.values()))


class ValidationSet:
    """The held-out pairs of early stopping: inputs, targets, and what the decoded metric needs.

    ``metric`` is ``"loss"`` (the surrogate loss), ``"f1"`` (example-based F1 of the decoded
    candidate against the true output, for 0/1 label vectors) or ``"top-k"`` (the true output
    among the k best-scored candidates). ``E`` (candidate embeddings), ``bias`` (``-k(c, c)/2``
    or None), ``true`` (the candidate row of each held-out output) and ``labels`` (the candidate
    rows as a CSR 0/1 matrix, for F1) serve the decoded metrics. ``weights`` (the held-out rows' sample
    weights, or None) make every metric a weighted mean over the rows.
    """

    def __init__(self, X, Psi, off, metric, E=None, bias=None, true=None, labels=None, weights=None):
        self.X, self.Psi, self.off, self.metric = X, Psi, off, metric
        self.E, self.bias, self.true, self.labels = E, bias, true, labels
        self.weights = weights

    def decoded_score(self, torch, G, dev, dt):
        """The decoded metric (higher is better) of the surrogate ``G`` (float64 rows), computed on ``dev``."""
        Gt = torch.from_numpy(np.ascontiguousarray(G)).to(device=dev, dtype=dt)
        if not hasattr(self, "_Et"):
            self._Et = torch.from_numpy(np.ascontiguousarray(self.E)).to(device=dev, dtype=dt)
            self._bt = None if self.bias is None else torch.from_numpy(self.bias).to(device=dev, dtype=dt)
            self._true_t = torch.from_numpy(self.true).to(dev)
        S = Gt @ self._Et.T
        if self._bt is not None:
            S = S + self._bt[None, :]
        if self.metric == "f1":
            pred = S.argmax(dim=1).cpu().numpy()
            A, B = self.labels[pred], self.labels[self.true]
            inter = np.asarray(A.multiply(B).sum(axis=1)).ravel()
            size = np.asarray(A.sum(axis=1)).ravel() + np.asarray(B.sum(axis=1)).ravel()
            f1 = np.where(size > 0, 2 * inter / np.maximum(size, 1e-300), 1.0)
            return float(np.average(f1, weights=self.weights))
        k = int(self.metric.split("-")[1])
        s_true = S.gather(1, self._true_t[:, None])
        hit = ((S > s_true).sum(dim=1) < k).cpu().numpy()
        return float(np.average(hit, weights=self.weights))


def surrogate_loss(loss, Z, T, outside, s2=1.0, weights=None):
    """The training objective's data term on a batch: ``(1/b) sum_i w_i c(s2 u_i) / s2`` (torch tensors).

    ``u_i = ||Z_i - T_i||^2 + outside_i`` is the squared distance in the output RKHS in units of ``s2``;
    ``weights`` are the batch rows' sample weights, scaled to mean 1 over the training rows (None: all 1), so
    that the mean over mini-batches estimates the weighted mean over the training rows without bias and
    integer weights give the loss of the rows repeated that many times.
    """
    c = loss.torch_value((((Z - T) ** 2).sum(dim=1) + outside) * s2)
    return (c if weights is None else c * weights).mean() / s2


def train_network(est, torch, X, Psi, off, val, loss, seed, progress, index, target=(0.0, 1.0), sample_weight=None):
    """Train one network of ``est`` to the targets ``Psi``; return its weights as arrays and its history.

    The network predicts ``z`` with ``g = shift + scale z`` (``target = (shift, scale)``, the
    target scaling of the member). Minimises ``(1/n) sum_i c(s^2 u_i) / s^2`` with
    ``u_i = ||z_i - (Psi_i - shift)/s||^2 + off_i / s^2`` (that is, the loss ``c`` of the
    distances in the output RKHS, in units of ``s^2``; ``off_i`` is the part of ``psi(y_i)``
    outside the basis) plus the weight decay: coupled ``(weight_decay/2) ||W||^2`` for adam and
    lbfgs, decoupled for adamw. Mini-batches (adam, adamw) follow the learning-rate schedule;
    lbfgs takes the full batch. ``val`` (a :class:`ValidationSet`) enables early stopping on its
    metric (ties broken by the validation loss); the weights of the best epoch are restored.
    ``index`` numbers the member in the messages. ``sample_weight`` (the rows' weights, mean 1, or None)
    weight each row's loss (:func:`surrogate_loss`).
    """
    dev, dt = device_of(est, torch), dtype_of(est, torch)
    n, p = Psi.shape
    shift, scale = target
    variants = X.shape[0] if est.input_kind_ == "tokens" and X.ndim == 3 else 0  # augmented token rows
    adam = est.optimizer.strip().lower() in ("adam", "adamw")
    batch_size = resolve_batch_size(est, torch, n)
    devices = [torch.cuda.current_device()] if dev.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        net = build_network(est, torch, p).to(device=dev, dtype=dt)
        threads = network_threads(est, sum(q.numel() for q in net.parameters()))
        set_torch_threads(torch, threads)  # restored by torch_settings at the end of fit
        T = torch.from_numpy(np.ascontiguousarray((Psi - shift) / scale)).to(device=dev, dtype=dt)
        outside = torch.from_numpy(np.ascontiguousarray(off / scale**2)).to(device=dev, dtype=dt)
        rows_w = (None if sample_weight is None
                  else torch.from_numpy(np.ascontiguousarray(sample_weight)).to(device=dev, dtype=dt))
        Xres = resident_inputs(est, torch, X)
        order_rng = np.random.default_rng(seed)
        params = [q for q in net.parameters() if q.requires_grad]
        wd = float(est.weight_decay)
        opt = _optimizer(est, torch, params, float(est.learning_rate))
        steps = -(-n // batch_size)
        sched = _schedule(est, torch, opt, steps) if adam else None
        s2 = float(scale) ** 2
        amp = bool(getattr(est, "mixed_precision", False))  # models saved before the option train without

        def batch_loss(idx, penalty=False):
            if variants:  # one of the equivalent strings of each row, drawn afresh every time
                v = order_rng.integers(0, variants, size=len(idx))
                xb = (Xres[torch.from_numpy(v).to(dev), torch.from_numpy(idx).to(dev)] if Xres is not None
                      else torch.from_numpy(np.ascontiguousarray(X[v, idx])).to(dev))
            elif Xres is not None:
                xb = Xres[torch.from_numpy(idx).to(dev)]
            else:
                xb = batch_tensor(est, torch, X, idx)
            with torch.autocast(device_type=dev.type, dtype=torch.bfloat16, enabled=amp):
                Z = net(xb)
            Z = Z.to(dt)  # the loss in the network's precision
            t = torch.from_numpy(idx).to(dev)
            value = surrogate_loss(loss, Z, T[t], outside[t], s2, None if rows_w is None else rows_w[t])
            if penalty and wd:
                value = value + 0.5 * wd * sum((q * q).sum() for q in params)
            return value

        def closure():  # full batch (L-BFGS)
            opt.zero_grad()
            value = batch_loss(np.arange(n), penalty=True)
            value.backward()
            return value

        hist = {"train_loss": [], "val_loss": [], "val_score": [], "metric": None if val is None else val.metric,
                "best_epoch": None, "best_score": None, "stopped": "epochs", "batch_size": batch_size,
                "resident": Xres is not None}
        best, best_state, bad = (-np.inf, -np.inf), None, 0
        if progress is not None and index == 0 and hasattr(progress, "new_stage"):
            progress.new_stage("epochs", total=int(est.epochs) * int(est.n_draws) * int(est.n_seeds))
        for epoch in range(int(est.epochs)):
            net.train()
            if adam:
                total = 0.0
                perm = order_rng.permutation(n)
                for start in range(0, n, batch_size):
                    idx = perm[start : start + batch_size]
                    opt.zero_grad()
                    value = batch_loss(idx)
                    value.backward()
                    opt.step()
                    if sched is not None:
                        sched.step()
                    total += float(value.detach()) * len(idx)
                train_loss = total / n * s2
            else:
                train_loss = float(opt.step(closure).detach()) * s2
            hist["train_loss"].append(train_loss)
            line = f"member {index + 1} epoch {epoch + 1}/{est.epochs} train loss {train_loss:.6g}"
            if val is not None:
                G = shift + scale * forward(est, torch, net, val.X)
                u = np.einsum("ij,ij->i", G - val.Psi, G - val.Psi) + val.off
                v = float(np.average(loss.c(u), weights=val.weights))
                score = -v if val.metric == "loss" else val.decoded_score(torch, G, dev, dt)
                hist["val_loss"].append(v)
                hist["val_score"].append(score)
                line += f" validation loss {v:.6g}" + ("" if val.metric == "loss" else f" {val.metric} {score:.4g}")
                if (score, -v) > best:
                    best, bad, hist["best_epoch"], hist["best_score"] = (score, -v), 0, epoch, score
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
        hist["epochs_run"] = len(hist["train_loss"])
        if best_state is not None:
            net.load_state_dict(best_state)
    weights = {k: t.detach().cpu().numpy().copy() for k, t in net.state_dict().items()}
    return weights, hist


def _validation_metric(est, Y):
    """The metric of early stopping: ``est.validation_metric``, or for ``"auto"`` F1 on 0/1 label matrices,
    top-1 on structured outputs (graphs, strings), the surrogate loss on real-valued outputs."""
    metric = str(est.validation_metric).strip().lower()
    if metric != "auto":
        return metric
    if is_collection(Y):
        return "top-1"
    vals = Y.data if sp.issparse(Y) else np.asarray(Y)
    return "f1" if vals.size and np.all((vals == 0) | (vals == 1)) else "loss"


def target_scaling(est, Psi, weights=None):
    """``(shift, scale)`` of a member's targets: column means and the root-mean-square of the centred coordinates.

    Sketched coordinates are often tiny (a Gaussian output kernel of large width leaves them
    near 1e-3) and all but the first centred near zero; the network predicts the centred
    coordinates in units of their overall spread. One scale for all coordinates keeps the
    geometry of the output space (no direction is re-weighted). ``(0, 1)`` when
    ``est.target_scaling`` is False. With sample ``weights`` the means are weighted (rows repeated by
    integer weights give the same scaling).
    """
    if not est.target_scaling or Psi.shape[0] < 2:
        return np.zeros(Psi.shape[1]), 1.0
    shift = np.average(Psi, axis=0, weights=weights)
    scale = float(np.sqrt(np.average(np.mean((Psi - shift) ** 2, axis=1), weights=weights)))
    return shift, (scale if scale > 0 else 1.0)


def train_members(est, torch, X, Y, tr, va, kernel, sketch, size_info, loss, rngs, progress, augmented=None,
                  sample_weight=None):
    """The ensemble: ``est.n_draws`` output-sketch draws, each with ``est.n_seeds`` networks trained to its basis.

    ``tr`` and ``va`` index the training and validation pairs (``va`` empty: no early
    stopping); ``rngs = (rng_sketch, rng_train)`` draw the sketches and the seeds; ``augmented`` holds the token
    rows of equivalent strings (shape ``(k + 1, n, L)``, the first the strings themselves). Returns the
    members, their loss histories, the candidate embeddings of each member and the candidate
    set (the distinct outputs of all pairs). ``sample_weight`` (positive weights of all pairs, or None)
    weight the training loss (scaled to mean 1 over the training pairs) and the validation metrics.
    """
    rng_sketch, rng_train = rngs
    w_tr = w_va = None
    if sample_weight is not None:
        w_tr = sample_weight[tr] * (len(tr) / sample_weight[tr].sum())
        w_va = sample_weight[va] if len(va) else None
    n_val = len(va)
    Y_tr = Y if not n_val else take(Y, tr)
    C, first, inverse = unique_rows(Y_tr)
    C_all, _, inverse_all = unique_rows(Y) if n_val else (C, first, inverse)
    metric = _validation_metric(est, Y) if n_val else None
    labels = None
    if metric == "f1":
        if is_collection(C_all):
            raise InvalidParameterError("validation_metric='f1' needs 0/1 label vectors as outputs; use 'top-1'")
        labels = sp.csr_matrix(C_all)
    if augmented is not None:  # (k + 1, n, L) token arrays: the strings and k equivalent ones
        X_tr = augmented[:, tr]
    else:
        X_tr = X if not n_val else take(X, tr)
    X_va = take(X, va) if n_val else None
    members, histories, embeddings = [], [], []
    for _d in range(int(est.n_draws)):
        R = draw_sketch(sketch, len(tr), rng_sketch, X=Y_tr, kernel=kernel)
        basis, Psi = SketchedOutputBasis.fit(kernel, Y_tr, R, rtol=est.rtol, distinct=(first, inverse),
                                             n_components=est.output_rank)
        off = np.clip(basis.self_kernel(Y_tr) - np.einsum("ij,ij->i", Psi, Psi), 0.0, None)
        E = np.ascontiguousarray(basis.embed(C_all)) if n_val else np.ascontiguousarray(Psi[first])
        val = None
        if n_val:
            P_va = E[inverse_all[va]]
            bias = None if basis.normalized else -0.5 * basis.self_kernel(C_all)
            val = ValidationSet(X_va, P_va, np.clip(basis.self_kernel(take(Y, va)) - np.einsum("ij,ij->i", P_va, P_va),
                                                    0.0, None), metric, E=E, bias=bias,
                                true=np.ascontiguousarray(inverse_all[va]), labels=labels, weights=w_va)
        target = target_scaling(est, Psi, w_tr)
        info = dict(R.summary(), rank=basis.n_components, **size_info)
        basis.sketch_info = dict(basis.sketch_info, **size_info)
        for _s in range(int(est.n_seeds)):
            seed = int(rng_train.integers(0, 2**31 - 1))
            weights, hist = train_network(est, torch, X_tr, Psi, off, val, loss, seed, progress, len(members),
                                          target=target, sample_weight=w_tr)
            members.append(_DeepMember(basis, weights, seed, dict(info), target=target))
            histories.append(hist)
            embeddings.append(E)
    return members, histories, embeddings, C_all


def forward(est, torch, net, X):
    """``net`` on the prepared inputs X, in batches of PREDICT_BATCH rows, as a float64 array."""
    net.eval()
    out = []
    with torch.no_grad():
        for start in range(0, n_items(X), PREDICT_BATCH):
            idx = np.arange(start, min(n_items(X), start + PREDICT_BATCH))
            out.append(net(batch_tensor(est, torch, X, idx)).cpu().numpy().astype(np.float64))
    return np.concatenate(out, axis=0) if out else np.zeros((0, 0))


def decode_on_device(est, torch, G_list, k, dev, rows=PREDICT_BATCH):
    """The k best candidates of the default set (``est.candidates_``) for each row, searched on ``dev``.

    The members' scores ``g(x) . psi~(c) + bias(c)`` are formed in float64 on the device,
    ``rows`` queries at a time, aggregated like the decoder (mean or max over members) and
    reduced by ``torch.topk``. Returns ``(indices, scores)`` as NumPy arrays, best first,
    the scores without the constant offset of a normalised kernel.
    """
    f64 = torch.float64
    E = [torch.from_numpy(np.ascontiguousarray(e)).to(device=dev, dtype=f64) for e in est.candidate_embeddings_]
    b = est.candidate_bias_
    b = None if b is None else torch.from_numpy(np.ascontiguousarray(b)).to(device=dev, dtype=f64)
    use_max = str(est.aggregate).strip().lower() == "max"
    idx, scores = [], []
    with torch.no_grad():
        for start in range(0, G_list[0].shape[0], rows):
            blocks = torch.stack([torch.from_numpy(np.ascontiguousarray(g[start : start + rows])).to(
                device=dev, dtype=f64) @ e.T for g, e in zip(G_list, E)])
            S = blocks.amax(dim=0) if use_max else blocks.mean(dim=0)
            if b is not None:
                S = S + b[None, :]
            s, i = torch.topk(S, int(k), dim=1)
            idx.append(i.cpu().numpy())
            scores.append(s.cpu().numpy())
    if not idx:
        return np.zeros((0, int(k)), np.int64), np.zeros((0, int(k)))
    return np.concatenate(idx).astype(np.int64), np.concatenate(scores)
