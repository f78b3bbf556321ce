"""Former private name of :mod:`skframe.validation`, kept as a re-export."""

from skframe.validation import as_float_array, check_data, check_same_features, check_scalar

__all__ = ["check_scalar", "check_data", "check_same_features", "as_float_array"]
