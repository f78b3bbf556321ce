"""Entry-point module registering the built-in losses and output matrices."""

from skframe.plugin.api import hookimpl
from skframe_losses.classification import LogisticLoss, MultinomialLoss
from skframe_losses.losses import (
    EpsilonInsensitiveL1Loss,
    EpsilonInsensitiveL2Loss,
    HingeLoss,
    HuberLoss,
    PinballLoss,
    SquareLoss,
)
from skframe_losses.output_losses import OutputEpsilonRidgeLoss, OutputEpsilonSVRLoss, OutputHuberLoss, OutputSquareLoss
from skframe_losses.output_matrices import (
    CovarianceOutputMatrix,
    GraphOutputMatrix,
    IdentityOutputMatrix,
    QuantileOutputMatrix,
)


@hookimpl
def register_losses(register):
    register("square", SquareLoss)
    register("huber", HuberLoss)
    register("epsilon-svr", EpsilonInsensitiveL1Loss)
    register("epsilon-ridge", EpsilonInsensitiveL2Loss)
    register("pinball", PinballLoss)
    register("hinge", HingeLoss)
    register("logistic", LogisticLoss)
    register("multinomial", MultinomialLoss)
    # losses in the output RKHS, c(||g(x) - psi~(y)||^2 + r(y)), for neural output kernel regression
    register("output-square", OutputSquareLoss)
    register("output-huber", OutputHuberLoss)
    register("output-epsilon-svr", OutputEpsilonSVRLoss)
    register("output-epsilon-ridge", OutputEpsilonRidgeLoss)


@hookimpl
def register_output_matrices(register):
    register("identity", IdentityOutputMatrix)
    register("quantile", QuantileOutputMatrix)
    register("graph", GraphOutputMatrix)
    register("covariance", CovarianceOutputMatrix)
