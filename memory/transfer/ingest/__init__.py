"""Ingestion of PyRIT memory JSON: normalisation into the storage batch, the ingest and media
endpoints."""
