"""Built-in solvers of skframe."""
