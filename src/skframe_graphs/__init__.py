"""Built-in graph and string kernels of skframe (a plugin registered through the ``skframe`` entry points)."""
