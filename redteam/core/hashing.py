"""Hashes of text as PyRIT computes them."""

from __future__ import annotations

import hashlib


def sha256_text(value: str) -> str:
    """PyRIT's ``*_sha256`` of a text value: SHA-256 of its UTF-8 bytes (contract §2.3)."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()
