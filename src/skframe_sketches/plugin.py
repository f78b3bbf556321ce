"""Entry-point module registering the built-in sketches."""

from skframe.plugin.api import hookimpl
from skframe_sketches.sketches import (
    AccumulationSketch,
    CountSketch,
    GaussianSketch,
    LeverageScoreSketch,
    PSGSketch,
    PSRSketch,
    RandomFourierFeatures,
    SubSampleSketch,
    _FourierMap,
)


@hookimpl
def register_sketches(register):
    register("subsample", SubSampleSketch, aliases=("nystrom",))
    register("leverage", LeverageScoreSketch)
    register("gaussian", GaussianSketch)
    register("psr", PSRSketch)
    register("psg", PSGSketch)
    register("accumulation", AccumulationSketch)
    register("countsketch", CountSketch)
    register("rff", RandomFourierFeatures)


@hookimpl
def register_state_classes(register):
    # the fitted random-feature map is stored inside saved models
    register(_FourierMap)
