"""Unpacking an uploaded ``dbdata`` zip without trusting it (pure; no Django).

A zip from a browser can lie and can attack: a few kilobytes that inflate to terabytes
(a zip bomb), member names that climb out of the target folder (``../../.ssh/x``, ``/etc/x``,
``C:\\x``), symbolic links pointing anywhere, thousands of tiny members. So:

* the central directory is checked first (:func:`check_members`): member count, declared
  size of each member and of all together, compression ratio, names (no absolute paths, no
  ``..``, no drive letters, no NUL), no links or device files, no encryption, no duplicates;
* extraction (:func:`extract_zip`) then counts the bytes actually inflated against the same
  limits (headers can lie), writes only regular files with ``O_EXCL | O_NOFOLLOW`` into a
  fresh private folder, and gives up on the first violation;
* every refusal is a :class:`ZipRefused` with one line a user can act on.
"""

from __future__ import annotations

import os
import re
import stat
import zipfile
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

#: File names of a SQLite memory inside a zip (PyRIT's default is ``pyrit.db``).
DATABASE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
PYRIT_DATABASE_NAME = "pyrit.db"
SQLITE_HEADER = b"SQLite format 3\x00"
#: Bytes inflated at a time.
READ_SIZE = 1024 * 1024
_DRIVE = re.compile(r"^[A-Za-z]:")


class ZipRefused(Exception):
    """The zip is unsafe, damaged or holds no database; the message says which, in one line."""


@dataclass(frozen=True)
class ZipLimits:
    """What an uploaded zip may hold. Sizes are uncompressed bytes."""

    max_members: int = 50_000
    max_total_bytes: int = 8 * 1024**3
    max_member_bytes: int = 4 * 1024**3
    #: Uncompressed / compressed size of one member; bombs reach 1000:1, SQLite files ~10:1.
    max_ratio: int = 200
    #: Members smaller than this are not ratio-checked (tiny files compress absurdly well).
    ratio_floor_bytes: int = 1024 * 1024


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def safe_member_path(name: str) -> PurePosixPath:
    """The relative path a member may be written to; ZipRefused for anything that escapes."""
    if "\x00" in name:
        raise ZipRefused(f"The zip holds a member whose name contains a NUL byte ({name!r}).")
    normalized = name.replace("\\", "/")
    if normalized.startswith("/") or _DRIVE.match(normalized):
        raise ZipRefused(f"The zip holds a member with an absolute path ({name!r}); refused.")
    parts = [part for part in normalized.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise ZipRefused(f"The zip holds a member that climbs out of its folder ({name!r}).")
    if not parts:
        raise ZipRefused(f"The zip holds a member with an empty name ({name!r}).")
    return PurePosixPath(*parts)


def _file_type(info: zipfile.ZipInfo) -> int:
    """The Unix file type bits of a member (0 when the zip was made without them)."""
    if info.create_system != 3:  # only Unix zips carry st_mode in external_attr
        return 0
    return stat.S_IFMT(info.external_attr >> 16)


def check_members(infos: Iterable[zipfile.ZipInfo], limits: ZipLimits) -> list[zipfile.ZipInfo]:
    """Check a zip's central directory against ``limits``; return the members to extract."""
    infos = list(infos)
    if len(infos) > limits.max_members:
        raise ZipRefused(
            f"The zip holds {len(infos):,} members; at most {limits.max_members:,} are accepted."
        )
    seen: dict[PurePosixPath, str] = {}
    total = 0
    for info in infos:
        path = safe_member_path(info.filename)
        kind = _file_type(info)
        if kind == stat.S_IFLNK:
            raise ZipRefused(f"The zip holds a symbolic link ({info.filename!r}); refused.")
        if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise ZipRefused(f"The zip holds a special file ({info.filename!r}); refused.")
        if info.flag_bits & 0x1:
            raise ZipRefused(f"The zip is encrypted ({info.filename!r}); upload it unencrypted.")
        if path in seen:
            raise ZipRefused(f"The zip holds {info.filename!r} twice.")
        seen[path] = info.filename
        if info.file_size > limits.max_member_bytes:
            raise ZipRefused(
                f"{info.filename!r} unpacks to {_size(info.file_size)}; "
                f"one file may be at most {_size(limits.max_member_bytes)}."
            )
        total += info.file_size
        if total > limits.max_total_bytes:
            raise ZipRefused(
                f"The zip unpacks to more than {_size(limits.max_total_bytes)}, the limit."
            )
        if info.file_size >= limits.ratio_floor_bytes and info.file_size > limits.max_ratio * max(
            info.compress_size, 1
        ):
            raise ZipRefused(
                f"{info.filename!r} inflates {info.file_size // max(info.compress_size, 1):,} "
                f"times (more than {limits.max_ratio}:1): refused as a possible zip bomb."
            )
    return infos


def database_members(infos: Iterable[zipfile.ZipInfo]) -> list[zipfile.ZipInfo]:
    """Members named like a SQLite database, ignoring macOS resource forks."""
    return [
        info
        for info in infos
        if not info.is_dir()
        and info.filename.lower().endswith(DATABASE_SUFFIXES)
        and "__MACOSX/" not in info.filename
        and not PurePosixPath(info.filename.replace("\\", "/")).name.startswith("._")
    ]


def choose_database(candidates: list[PurePosixPath]) -> PurePosixPath:
    """The one database of a zip: the only candidate, else the only ``pyrit.db``."""
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise ZipRefused(
            "The zip holds no PyRIT database (a .db file); zip the dbdata folder that "
            "contains pyrit.db."
        )
    named = [c for c in candidates if c.name.lower() == PYRIT_DATABASE_NAME]
    if len(named) == 1:
        return named[0]
    names = ", ".join(str(c) for c in sorted(candidates)[:5])
    raise ZipRefused(f"The zip holds several databases ({names}); upload one at a time.")


def inspect_zip(source: str | os.PathLike[str] | BinaryIO, limits: ZipLimits) -> PurePosixPath:
    """Cheap up-front check (central directory only): safe, and holds one database."""
    try:
        with zipfile.ZipFile(source) as archive:
            infos = check_members(archive.infolist(), limits)
    except zipfile.BadZipFile as exc:
        raise ZipRefused(f"The zip is damaged ({exc}).") from exc
    return choose_database([safe_member_path(i.filename) for i in database_members(infos)])


def extract_zip(
    source: str | os.PathLike[str],
    target: Path,
    limits: ZipLimits,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[Path, Path]:
    """Extract the zip into the empty private folder ``target``; return (database, root).

    ``root`` is ``target`` itself: every extracted file is a candidate media file. The
    database is checked to start with SQLite's header. ``progress(done, total)`` is called
    after each member. On ZipRefused the caller deletes ``target`` (partial files may be
    left there).
    """
    try:
        with zipfile.ZipFile(source) as archive:
            infos = check_members(archive.infolist(), limits)
            database = choose_database(
                [safe_member_path(i.filename) for i in database_members(infos)]
            )
            total = 0
            for done, info in enumerate(infos, start=1):
                path = safe_member_path(info.filename)
                destination = target.joinpath(*path.parts)
                if info.is_dir() or _file_type(info) == stat.S_IFDIR:
                    _make_dirs(destination, target)
                else:
                    _make_dirs(destination.parent, target)
                    total = _extract_member(archive, info, destination, total, limits)
                if progress is not None:
                    progress(done, len(infos))
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise ZipRefused(f"The zip is damaged ({exc}).") from exc
    except NotImplementedError as exc:
        raise ZipRefused(f"The zip uses a compression method we cannot read ({exc}).") from exc
    database_path = target.joinpath(*database.parts)
    with database_path.open("rb") as handle:
        if handle.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
            raise ZipRefused(f"{database} in the zip is not a SQLite database.")
    return database_path, target


def _make_dirs(folder: Path, root: Path) -> None:
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as exc:
        raise ZipRefused(
            f"The zip holds both a file and a folder named {folder.relative_to(root)}."
        ) from exc
    if not folder.resolve().is_relative_to(root.resolve()):
        raise ZipRefused(f"The zip holds a member outside its folder ({folder}); refused.")


def _extract_member(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    destination: Path,
    total: int,
    limits: ZipLimits,
) -> int:
    """Write one member, counting inflated bytes; return the running total."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(destination, flags, 0o600)
    except FileExistsError as exc:
        raise ZipRefused(f"The zip holds {info.filename!r} twice.") from exc
    written = 0
    with os.fdopen(fd, "wb") as out, archive.open(info) as member:
        while data := member.read(READ_SIZE):
            written += len(data)
            total += len(data)
            if written > info.file_size or written > limits.max_member_bytes:
                raise ZipRefused(
                    f"{info.filename!r} inflates beyond the size its header declares; refused."
                )
            if total > limits.max_total_bytes:
                raise ZipRefused(
                    f"The zip unpacks to more than {_size(limits.max_total_bytes)}, the limit."
                )
            out.write(data)
    return total
