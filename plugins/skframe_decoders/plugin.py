"""Entry-point module registering the built-in decoders."""
