"""Read a PyRIT SQLite memory file of any version into PyRIT's JSON shapes.

Shared by Redline's importer (``manage.py import_pyrit``, browser uploads) and the
``redline-push`` client, so both read every PyRIT version the same way. Plain Python: it
imports no Django and nothing of Redline, and runs on PyRIT's own minimum Python (3.10).

- :mod:`~pyrit_memory_reader.source`: open a file read-only, check it, detect its schema;
- :mod:`~pyrit_memory_reader.rows`: decode one table's rows into PyRIT-shaped dicts;
- :mod:`~pyrit_memory_reader.chunks`: walk the whole file (or what changed) as ingestion
  payloads, in the order references need;
- :mod:`~pyrit_memory_reader.media`: find the media files the values name.
"""
