"""A full disk, simulated for the media store's writes (fault injection), and what it left."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from redteam.core import storage


def fill_disk(monkeypatch) -> list[int]:
    """From now on the disk fills up part way: the store's first write lands a few bytes, every
    later one fails with ``ENOSPC``. Returns the file descriptors written to, as they come."""
    real_write = os.write
    calls: list[int] = []

    def write(fd, data):
        calls.append(fd)
        if len(calls) == 1:
            return real_write(fd, bytes(data[:8]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(storage.os, "write", write)
    return calls


def stored_files(root: Path) -> list[Path]:
    """Every file under ``root`` (MEDIA_ROOT), temporary ones included."""
    return [path for path in root.rglob("*") if path.is_file()] if root.exists() else []
