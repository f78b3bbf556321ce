"""How the work runs: array backends and engines, threads, memory planning, streaming, out-of-core data, Dask."""
