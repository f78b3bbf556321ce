"""Entry-point module registering the built-in sketches."""

import skframe

from .sketches import (
    AccumulationSketch,
    CountSketch,
    GaussianSketch,
    LeverageScoreSketch,
    PSparsifiedSketch,
    RandomFourierFeatures,
    SubSampleSketch,
    _FourierMap,
)


def _psr(size=100, **params):
    return PSparsifiedSketch(size, distribution="rademacher", **params)


def _psg(size=100, **params):
    return PSparsifiedSketch(size, distribution="gaussian", **params)


@skframe.hookimpl
def register_sketches(register):
    register("subsample", SubSampleSketch, aliases=("nystrom",))
    register("leverage", LeverageScoreSketch)
    register("gaussian", GaussianSketch)
    register("psr", _psr)
    register("psg", _psg)
    register("accumulation", AccumulationSketch)
    register("countsketch", CountSketch)
    register("rff", RandomFourierFeatures)


@skframe.hookimpl
def register_state_classes(register):
    # the fitted random-feature map is stored inside saved models
    register(_FourierMap)
