"""Entry-point module registering the built-in decoders: ``identity`` and ``candidates``."""

from skframe.plugin.api import hookimpl
from skframe_decoders.decoders import CandidateDecoder, IdentityDecoder


@hookimpl
def register_decoders(register):
    register("identity", IdentityDecoder)
    register("candidates", CandidateDecoder)
