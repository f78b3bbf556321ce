"""Built-in sketches of skframe: sub-sampling, leverage scores, Gaussian, p-SR, p-SG,
Accumulation, CountSketch and random Fourier features."""

from skframe_sketches.sketches import (
    AccumulationSketch,
    CountSketch,
    GaussianSketch,
    LeverageScoreSketch,
    PSGSketch,
    PSparsifiedSketch,
    PSRSketch,
    RandomFourierFeatures,
    SubSampleSketch,
)

__all__ = [
    "AccumulationSketch",
    "CountSketch",
    "GaussianSketch",
    "LeverageScoreSketch",
    "PSGSketch",
    "PSparsifiedSketch",
    "PSRSketch",
    "RandomFourierFeatures",
    "SubSampleSketch",
]
