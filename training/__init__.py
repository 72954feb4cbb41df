"""Training and evaluation tools for three-thirteen agents (``python -m training.evaluate``)."""
