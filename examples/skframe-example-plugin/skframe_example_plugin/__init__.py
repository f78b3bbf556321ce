"""Example third-party skframe plugin."""

__version__ = "0.1.0"
