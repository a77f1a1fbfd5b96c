"""The importer's one exception (kept apart so every importer module can raise it)."""

from __future__ import annotations


class ImportFailed(Exception):
    """Bad input (not SQLite, not PyRIT memory, corrupt, unknown schema): one clear line."""
