"""What ``lam="auto"`` and ``gamma="auto"`` chose, for ``skframe fit``'s report: one line each, with the reason."""

from __future__ import annotations

__all__ = ["chosen_info", "training_info", "chosen_lines"]

_AUTO_KEYS = ("lam", "gamma")


def chosen_info(model):
    """``{"lam": {...}, "gamma": {...}}`` from ``model.fit_info_`` (the parameters chosen from the data), or None."""
    info = getattr(model, "fit_info_", None)
    if not isinstance(info, dict):
        return None
    out = {k: info[k] for k in _AUTO_KEYS if isinstance(info.get(k), dict)}
    return out or None


def training_info(model):
    """``model.fit_info_`` when it describes a network's training (DSOKR), else None."""
    info = getattr(model, "fit_info_", None)
    return info if isinstance(info, dict) and "members" in info else None


def chosen_lines(chosen):
    """One report line per chosen parameter: ``lam        2.3e-05 chosen: least ... (gcv 0.0123)``."""
    lines = []
    for key in _AUTO_KEYS:
        c = (chosen or {}).get(key)
        if c:
            lines.append(f"{key:<10} {c['chosen']:.3g} chosen: {c['reason']} ({c['criterion']} {c['value']:.4g})")
    return lines
