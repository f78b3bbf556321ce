"""Built-in losses of skframe."""
