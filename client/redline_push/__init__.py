"""``redline-push``: ship a local PyRIT memory to Redline, once or continuously."""

__version__ = "0.1.0"
