"""Memory in and out: ingestion, PyRIT database imports, browser uploads, exports, read API."""
