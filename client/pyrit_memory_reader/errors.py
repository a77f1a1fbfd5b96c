"""The reader's one exception (kept apart so every reader module can raise it)."""

from __future__ import annotations


class SourceError(Exception):
    """Bad input (not SQLite, not PyRIT memory, corrupt, unknown schema): one clear line.

    Redline's importer knows it as ``ImportFailed``; ``redline-push`` prints it and exits.
    """
