"""The media store: Django's file-system storage, written atomically.

Django writes an upload straight to its final name, so a write that fails half way (a full
disk, a quota) leaves a truncated file that a later content-addressed upload would find and
trust. Here the bytes go to a temporary file in the same folder, which is renamed into place
only once complete and removed on any error.
"""

from __future__ import annotations

import errno
import os
import tempfile
from typing import Any

from django.core.files.storage import FileSystemStorage
from django.utils._os import safe_makedirs

#: ``errno`` values that mean "the disk or the quota is full", answered 507 (RFC 4918).
NO_SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def is_out_of_space(exc: BaseException) -> bool:
    """Whether ``exc`` is a write refused for lack of space (disk full, quota, file size)."""
    return isinstance(exc, OSError) and exc.errno in NO_SPACE_ERRNOS


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd`` (``os.write`` may write only part)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class AtomicFileSystemStorage(FileSystemStorage):
    """:class:`FileSystemStorage` whose files appear complete or not at all."""

    def _save(self, name: str, content: Any) -> str:
        full_path = self.path(name)
        directory = os.path.dirname(full_path)
        if self.directory_permissions_mode is not None:
            safe_makedirs(directory, self.directory_permissions_mode, exist_ok=True)
        else:
            os.makedirs(directory, exist_ok=True)
        # mkstemp creates the file 0600; FILE_UPLOAD_PERMISSIONS widens it below when set.
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=".upload-", suffix=".part")
        try:
            try:
                for chunk in content.chunks():
                    _write_all(fd, chunk.encode() if isinstance(chunk, str) else chunk)
                os.fsync(fd)
            finally:
                os.close(fd)
            if self.file_permissions_mode is not None:
                os.chmod(temporary, self.file_permissions_mode)
            name = self._place(temporary, name)
            self._ensure_location_group_id(self.path(name))
        finally:
            # After a successful link the temporary name is a second link to the same file.
            if os.path.exists(temporary):
                os.unlink(temporary)
        return os.path.relpath(self.path(name), self.location).replace("\\", "/")

    def _place(self, temporary: str, name: str) -> str:
        """Give the complete file its final ``name`` (another free name when it is taken and
        overwriting is off, as Django does) and return that name."""
        while True:
            full_path = self.path(name)
            if self._allow_overwrite:
                os.replace(temporary, full_path)
                return name
            try:
                # A hard link fails when the name exists, where a rename would replace it.
                os.link(temporary, full_path)
                return name
            except FileExistsError:
                name = self.get_available_name(name)
