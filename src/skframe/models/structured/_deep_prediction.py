"""DSOKR after the fit: the record of the fit, the networks' coordinates in the output bases, decoding on
the device, and the saved state (:class:`DeepPredictionMixin`)."""

from __future__ import annotations

from skframe import deps
from skframe.models.structured._deep_network import (
    device_of,
    member_network,
    network_threads,
    torch_settings,
)
from skframe.models.structured._deep_training import decode_on_device, forward

__all__ = ["DeepPredictionMixin"]


def _torch(feature="DeepOutputKernelRegressor"):
    return deps.require("torch", feature)


class DeepPredictionMixin:
    """The fit record, prediction and persistence of :class:`~skframe.models.structured.DeepOutputKernelRegressor`."""

    def _fit_info(self, torch, n_train, n_val, histories):
        """The recipe the fit used (the ``"auto"`` values resolved) and how each member's training went."""
        first = histories[0]
        return {
            "network": self.network if isinstance(self.network, str) else self.network_factory_,
            "network_params": dict(self.network_params_), "n_weights": int(self.n_weights_),
            "input_scaling": self.input_scaling if self.input_kind_ == "features" else None,
            "target_scaling": bool(self.target_scaling), "optimizer": self.optimizer,
            "learning_rate": float(self.learning_rate), "lr_schedule": self.lr_schedule,
            "weight_decay": float(self.weight_decay), "batch_size": first["batch_size"], "epochs": int(self.epochs),
            "patience": int(self.patience), "device": str(device_of(self, torch)), "inputs_resident": first["resident"],
            "mixed_precision": bool(getattr(self, "mixed_precision", False)),
            "n_train": int(n_train), "n_validation": int(n_val), "validation_metric": first["metric"],
            "members": [{"epochs_run": h["epochs_run"], "best_epoch": h["best_epoch"], "best_score": h["best_score"],
                         "stopped": h["stopped"]} for h in histories],
            "fit_seconds": float(self.fit_seconds_),
        }

    # ------------------------------------------------------------------ surrogate
    def _surrogate(self, X):
        """Per-member coordinates ``g(x)`` in its output basis, float64 arrays."""
        self._check_fitted()
        X = self._prepare_inputs(X, reset=False)
        torch = _torch()
        with torch_settings(torch, network_threads(self, self.draws_[0].n_weights)):
            return [m.coordinates(forward(self, torch, member_network(self, torch, m), X)) for m in self.draws_]

    def _decode(self, X, k, candidates):
        """On a GPU, the search over the default candidate set runs there (float64); otherwise the decoder's."""
        torch = _torch()
        dev = device_of(self, torch)
        E = getattr(self, "candidate_embeddings_", None)
        if candidates is not None or dev.type != "cuda" or E is None or int(k) > E[0].shape[0]:
            return super()._decode(X, k, candidates)
        idx, scores = decode_on_device(self, torch, self._surrogate(X), k, dev)
        return idx, scores + self._offset(), self.candidates_

    def surrogate_predict(self, X):
        """Coordinates ``g(x)`` of each member's network in its output basis.

        Returns
        -------
        list of ndarray of shape (n_samples, p)
        """
        return self._surrogate(X)

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
        # files saved before the default recipe: the parameters that reproduce how they were trained
        for name, value in (("lr_schedule", "constant"), ("validation_metric", "loss"), ("input_scaling", None),
                            ("target_scaling", False), ("input_features", None), ("input_features_params", None),
                            ("smiles_augmentation", 0)):
            obj.__dict__.setdefault(name, value)
        return obj
