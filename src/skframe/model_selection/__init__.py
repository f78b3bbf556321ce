"""Choosing a model: sketch-size selection curves."""
