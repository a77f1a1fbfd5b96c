"""Importers of PyRIT memory databases (SQLite files written by PyRIT 0.9 to 1.1.0)."""
