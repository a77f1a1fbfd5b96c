"""The importer's one exception (kept apart so every importer module can raise it).

It is the shared reader's :class:`~pyrit_memory_reader.errors.SourceError` (bad input: not
SQLite, not PyRIT memory, corrupt, unknown schema — one clear line), so what the reader
refuses and what the importer refuses are caught alike.
"""

from __future__ import annotations

from pyrit_memory_reader.errors import SourceError

ImportFailed = SourceError

__all__ = ["ImportFailed"]
