"""Entry-point module registering the built-in decoders: ``identity`` and ``candidates``."""

import skframe
from skframe_decoders.decoders import CandidateDecoder, IdentityDecoder


@skframe.hookimpl
def register_decoders(register):
    register("identity", IdentityDecoder)
    register("candidates", CandidateDecoder)
