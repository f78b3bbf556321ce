"""Reproducible model files: what a saved model leaves out (timings, the machine's measurements)."""

from __future__ import annotations

__all__ = ["reproducible_execution", "saved_state"]

#: ``execution_`` entries that depend on the machine's state rather than on the fit's inputs
_MACHINE_KEYS = ("machine",)
_MEASURED_BUDGETS = ("machine", "gpu")


def reproducible_execution(execution):
    """``execution_`` as a model file stores it: the fit's decisions without the machine's measurements.

    ``machine`` is dropped; when the memory budget was measured (``budget_source`` ``"machine"`` or
    ``"gpu"``, not ``"given"``), so are ``memory_budget`` and the ``reasons`` (which quote it).
    Nested plans (the ``"output"`` side of structured models) are treated alike.

    >>> reproducible_execution({"executor": "in-memory", "memory_budget": 8, "budget_source": "machine",
    ...                         "reasons": {"executor": "fits"}, "machine": {"cores": 2}})
    {'executor': 'in-memory', 'budget_source': 'machine'}
    """
    if not isinstance(execution, dict):
        return execution
    out = {}
    measured = execution.get("budget_source") in _MEASURED_BUDGETS
    for key, value in execution.items():
        if key in _MACHINE_KEYS or (measured and key in ("memory_budget", "reasons")):
            continue
        out[key] = reproducible_execution(value) if isinstance(value, dict) and "executor" in value else value
    return out


def saved_state(state):
    """An object's state as saved: no timings (``*_seconds_``), ``execution_`` without machine state."""
    if not any(isinstance(k, str) and (k.endswith("_seconds_") or k == "execution_") for k in state):
        return state
    out = {k: v for k, v in state.items() if not (isinstance(k, str) and k.endswith("_seconds_"))}
    if "execution_" in out:
        out["execution_"] = reproducible_execution(out["execution_"])
    return out
