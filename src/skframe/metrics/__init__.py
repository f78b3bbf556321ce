"""Evaluation metrics of the papers skframe reproduces.

Regression (scalar and multi-output): :func:`mse`, :func:`mae`, :func:`r2`, :func:`rrmse`,
:func:`arrmse`, :func:`relative_mse`; joint quantile regression: :func:`pinball_loss`,
:func:`crossing_loss`; multi-label: :func:`accuracy`, :func:`example_based_f1`,
:func:`hamming_loss`; classes: :func:`classifier_report`; ranking of candidates (structured
prediction): :func:`rank_of_true`, :func:`hits_at_k`, :func:`mean_reciprocal_rank`,
:func:`mean_rank`. :func:`regression_report` gathers the regression metrics in a JSON-serialisable
dict for the CLI.

Arrays are samples × outputs; a 1-D array is one output. Shapes are checked and a mismatch
raises :class:`~skframe.exceptions.InvalidInputError` naming both shapes.
"""

from skframe.metrics.classification import accuracy, classifier_report, example_based_f1, hamming_loss
from skframe.metrics.quantile import check_quantiles, crossing_loss, pinball_loss
from skframe.metrics.ranking import hits_at_k, mean_rank, mean_reciprocal_rank, rank_of_true
from skframe.metrics.regression import arrmse, mae, mse, r2, regression_report, relative_mse, rrmse

__all__ = [
    "mse",
    "mae",
    "r2",
    "rrmse",
    "arrmse",
    "relative_mse",
    "check_quantiles",
    "pinball_loss",
    "crossing_loss",
    "accuracy",
    "example_based_f1",
    "hamming_loss",
    "classifier_report",
    "rank_of_true",
    "hits_at_k",
    "mean_reciprocal_rank",
    "mean_rank",
    "regression_report",
]
