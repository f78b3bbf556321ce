"""Entry-point module registering the built-in losses."""

import skframe

from .losses import (
    EpsilonInsensitiveL1Loss,
    EpsilonInsensitiveL2Loss,
    HingeLoss,
    HuberLoss,
    PinballLoss,
    SquareLoss,
)


@skframe.hookimpl
def register_losses(register):
    register("square", SquareLoss)
    register("huber", HuberLoss)
    register("epsilon-svr", EpsilonInsensitiveL1Loss)
    register("epsilon-ridge", EpsilonInsensitiveL2Loss)
    register("pinball", PinballLoss)
    register("hinge", HingeLoss)
