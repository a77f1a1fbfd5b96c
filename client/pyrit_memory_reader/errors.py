"""The reader's one exception (kept apart so every reader module can raise it)."""

from __future__ import annotations


class SourceError(Exception):
    """Bad input (not SQLite, not PyRIT memory, corrupt, unknown schema): one clear line.

    Redline's importer knows it as ``ImportFailed``; ``redline-push`` prints it and exits.
    """


class SchemaInFlux(SourceError):
    """The file is being created or migrated by PyRIT right now (empty, no tables yet, a
    migration's half-built table, a schema that changed under the reader): not bad input, a
    moment to wait. ``redline-push --watch`` waits and looks again; a one-shot push or import
    stops with this one line."""
