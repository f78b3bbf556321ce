"""Entry-point module registering the built-in solvers."""
