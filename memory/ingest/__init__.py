"""Ingestion of PyRIT memory JSON: pure normalisation into specs (see ``normalize``)."""
