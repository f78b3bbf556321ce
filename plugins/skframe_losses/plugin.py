"""Entry-point module registering the built-in losses."""
