"""Importers of PyRIT memory databases (SQLite files of the PyRIT versions
``pyrit_memory_reader.source.KNOWN_VERSIONS`` names)."""
