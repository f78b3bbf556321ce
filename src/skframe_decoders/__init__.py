"""Built-in decoders of skframe."""
