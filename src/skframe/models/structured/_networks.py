"""Built-in input networks g_W of :class:`DeepOutputKernelRegressor` (PyTorch; imported only when used).

Each builder takes the input size (features, or the vocabulary size for token
sequences), the output size p (the dimension of the sketched output basis) and its
hyper-parameters, and returns a ``torch.nn.Module`` mapping a batch to ``(batch, p)``
coordinates. The last layer is always a plain linear one (El Ahmad, PhD thesis 2024,
Remark 5.1): the fixed functional last layer ``g_E`` lives outside the network.

``mlp``
    Dense inputs (scipy sparse inputs are densified one batch at a time).
    ``hidden`` (tuple of widths, ``()`` for a linear model), ``activation``
    (relu, tanh, gelu), ``dropout``, ``bias``.
``text-cnn``
    Token sequences (characters of SMILES or text): an embedding, parallel 1-D
    convolutions of several widths, max-pooling over positions, dropout, linear.
    ``embedding_dim``, ``n_filters``, ``kernel_sizes``, ``dropout``.
``transformer``
    Token sequences: embedding plus learned positions, a Transformer encoder (thesis
    App. C.3: ``n_layers``, ``d_model``, ``n_heads``, feed-forward ``4 d_model``,
    ``dropout``), mean-pooling over non-padding tokens, linear.
"""

from __future__ import annotations

import torch
from torch import nn

from skframe.exceptions import InvalidParameterError

__all__ = ["NETWORKS", "TOKEN_NETWORKS", "build_network", "network_defaults"]

PAD = 0  # token id of the padding

_DEFAULTS = {
    "mlp": {"hidden": (256,), "activation": "relu", "dropout": 0.0, "bias": True},
    "text-cnn": {"embedding_dim": 64, "n_filters": 64, "kernel_sizes": (3, 5, 7), "dropout": 0.1},
    "transformer": {"d_model": 64, "n_heads": 4, "n_layers": 2, "dim_feedforward": None, "dropout": 0.1},
}
NETWORKS = tuple(_DEFAULTS)
TOKEN_NETWORKS = ("text-cnn", "transformer")
_ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU}


def network_defaults(name):
    """The hyper-parameters of a built-in network, with their defaults."""
    return dict(_DEFAULTS[name])


def _params(name, params):
    out = network_defaults(name)
    unknown = sorted(set(params or {}) - set(out) - {"max_length"})
    if unknown:
        raise InvalidParameterError(
            f"network_params {unknown} are not parameters of the {name!r} network; it takes {sorted(out)}"
        )
    out.update(params or {})
    return out


class MLP(nn.Module):
    """Fully connected network ``hidden`` widths -> p (linear when ``hidden`` is empty)."""

    def __init__(self, n_inputs, n_outputs, hidden=(256,), activation="relu", dropout=0.0, bias=True):
        super().__init__()
        if activation not in _ACTIVATIONS:
            raise InvalidParameterError(f"activation={activation!r}; use one of {sorted(_ACTIVATIONS)}")
        if isinstance(hidden, int):
            hidden = (hidden,)
        layers, width = [], int(n_inputs)
        for h in hidden:
            layers += [nn.Linear(width, int(h), bias=bool(bias)), _ACTIVATIONS[activation]()]
            if dropout:
                layers.append(nn.Dropout(float(dropout)))
            width = int(h)
        layers.append(nn.Linear(width, int(n_outputs), bias=bool(bias)))
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)


class TextCNN(nn.Module):
    """Character CNN: embedding, convolutions of several widths, max over positions, linear."""

    def __init__(self, vocab_size, n_outputs, embedding_dim=64, n_filters=64, kernel_sizes=(3, 5, 7), dropout=0.1):
        super().__init__()
        self.embedding = nn.Embedding(int(vocab_size), int(embedding_dim), padding_idx=PAD)
        self.convs = nn.ModuleList(
            nn.Conv1d(int(embedding_dim), int(n_filters), int(k), padding=int(k) // 2) for k in kernel_sizes
        )
        self.dropout = nn.Dropout(float(dropout))
        self.out = nn.Linear(int(n_filters) * len(kernel_sizes), int(n_outputs))

    def forward(self, tokens):
        mask = (tokens != PAD).unsqueeze(1)  # (b, 1, L)
        e = self.embedding(tokens).transpose(1, 2)  # (b, emb, L)
        pooled = []
        for conv in self.convs:
            h = torch.relu(conv(e))[..., : tokens.shape[1]]
            pooled.append(h.masked_fill(~mask, float("-inf")).amax(dim=2).clamp_min(0.0))
        return self.out(self.dropout(torch.cat(pooled, dim=1)))


class TransformerRegressor(nn.Module):
    """Transformer encoder over tokens with learned positions, mean-pooled, then linear."""

    def __init__(self, vocab_size, n_outputs, max_length, d_model=64, n_heads=4, n_layers=2, dim_feedforward=None,
                 dropout=0.1):
        super().__init__()
        d_model = int(d_model)
        if d_model % int(n_heads):
            raise InvalidParameterError(f"d_model={d_model} must be a multiple of n_heads={n_heads}")
        self.embedding = nn.Embedding(int(vocab_size), d_model, padding_idx=PAD)
        self.position = nn.Embedding(int(max_length), d_model)
        layer = nn.TransformerEncoderLayer(d_model, int(n_heads), int(dim_feedforward or 4 * d_model),
                                           float(dropout), batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, int(n_layers), enable_nested_tensor=False)
        self.out = nn.Linear(d_model, int(n_outputs))

    def forward(self, tokens):
        pad = tokens == PAD
        pos = torch.arange(tokens.shape[1], device=tokens.device)
        h = self.encoder(self.embedding(tokens) + self.position(pos)[None], src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(2).to(h.dtype)
        return self.out((h * keep).sum(1) / keep.sum(1).clamp_min(1.0))


def build_network(name, n_inputs, n_outputs, params=None, *, max_length=None):
    """Build a built-in network by name (see the module docstring)."""
    if name not in _DEFAULTS:
        raise InvalidParameterError(f"network={name!r}; use one of {', '.join(NETWORKS)} or a callable factory")
    p = _params(name, params)
    p.pop("max_length", None)
    if name == "mlp":
        return MLP(n_inputs, n_outputs, **p)
    if name == "text-cnn":
        return TextCNN(n_inputs, n_outputs, **p)
    return TransformerRegressor(n_inputs, n_outputs, max_length, **p)
