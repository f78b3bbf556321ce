"""Hook implementation registering the graph and string kernels (public plugin API only)."""

from skframe.plugin.api import hookimpl
from skframe_graphs.kernels import (
    CoreWLKernel,
    EdgeHistogramKernel,
    NGramKernel,
    NSPDKernel,
    ShortestPathKernel,
    VertexHistogramKernel,
    WLSubtreeKernel,
)

__all__ = ["register_kernels"]


@hookimpl
def register_kernels(register):
    """Register the graph kernels and the n-gram string kernel (the hook specification documents ``register``)."""
    register("vertex-histogram", VertexHistogramKernel)
    register("edge-histogram", EdgeHistogramKernel)
    register("shortest-path", ShortestPathKernel)
    register("wl-subtree", WLSubtreeKernel)
    register("nspd", NSPDKernel)
    register("core-wl", CoreWLKernel)
    register("ngram", NGramKernel)
