"""What a model can do: the capabilities model selection and intervals ask of an estimator.

Model selection and the intervals never test an estimator's class or its name: they read its
:class:`ModelTags` with :func:`model_tags`. An estimator declares them with ``__skframe_model_tags__``,
a class attribute (a :class:`ModelTags`) or a method returning one. A subclass inherits its parent's
tags, as it inherits scikit-learn's; a subclass that changes what ``fit`` or ``predict`` compute
declares its own (``__skframe_model_tags__ = ModelTags()`` turns every shortcut off). An object that
declares nothing has no shortcut: it is cross-validated fit by fit and gets conformal intervals only.

>>> class Plain:
...     pass
>>> model_tags(Plain()).lam_path is None
True
>>> class Closed:
...     __skframe_model_tags__ = ModelTags(lam_path="square", posterior=True, shared_fold_sketch=True)
>>> model_tags(Closed()).posterior
True
"""

from __future__ import annotations

from dataclasses import dataclass

from skframe.exceptions import PluginError

__all__ = ["LAM_PATHS", "ModelTags", "model_tags"]

#: the λ-path shortcuts of :mod:`skframe.model_selection` an estimator may declare
LAM_PATHS = ("square", "machine", "structured")


@dataclass(frozen=True)
class ModelTags:
    """Capabilities of an estimator.

    Attributes
    ----------
    lam_path : {"square", "machine", "structured"} or None, default None
        The cross-validated λ path that reproduces fresh fits of the estimator: ``"square"``, one
        eigendecomposition per fold of the square-loss ridge system; ``"machine"``, warm-started (or
        batched) certified solves on each fold's shared features; ``"structured"``, one eigendecomposition
        per fold of the output kernel regressor's input system. None: every λ is a fresh fit.
    posterior : bool, default False
        ``predict(X, return_std=True, noise=True)`` gives the predictive standard deviation of the
        Gaussian posterior of the fit (the ``posterior`` interval method).
    shared_fold_sketch : bool, default False
        The CV+ folds may share one sketch of all rows (``sketch_sharing="shared"``): the model is the
        square-loss ridge solution on the sketched features.
    """

    lam_path: str | None = None
    posterior: bool = False
    shared_fold_sketch: bool = False

    def __post_init__(self):
        if self.lam_path is not None and self.lam_path not in LAM_PATHS:
            raise PluginError(f"ModelTags(lam_path={self.lam_path!r}); use one of {', '.join(LAM_PATHS)} or None")


def model_tags(estimator):
    """The :class:`ModelTags` an estimator (or its class) declares; the defaults when it declares none.

    Raises
    ------
    skframe.exceptions.PluginError
        ``__skframe_model_tags__`` gives something else than a :class:`ModelTags`.
    """
    declared = getattr(estimator, "__skframe_model_tags__", None)
    if callable(declared):
        declared = declared() if not isinstance(estimator, type) else None
    if declared is None:
        return ModelTags()
    if not isinstance(declared, ModelTags):
        name = estimator.__qualname__ if isinstance(estimator, type) else type(estimator).__qualname__
        raise PluginError(f"{name}.__skframe_model_tags__ gave {declared!r}; declare a "
                          "skframe.contract.model_tags.ModelTags")
    return declared
