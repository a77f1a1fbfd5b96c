"""Browser uploads of PyRIT memory databases, imported by a background task."""
