"""The version of skframe, in the ground floor so that every room can name it without importing the package."""

__version__ = "0.1.0"
