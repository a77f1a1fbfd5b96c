"""PyRIT's media values, and the files under a media root that they name (contract §13).

PyRIT keeps media bytes beside its database (``dbdata/prompt-memory-entries/…`` and
``dbdata/seed-prompt-entries/…``) and stores their location strings — paths on the machine
that ran PyRIT. Those strings are never opened: the media root is listed once, and a value is
matched to a listed file by (a) the path after PyRIT's results-folder marker, else (b) the
file name, else (c) the SHA-256 the value was stored with. A file matched by name whose bytes
contradict a stored SHA-256 is not used for that value: PyRIT names media files by timestamp,
so several values can name one file whose bytes only the last writer kept. Such a value stays
without media, and :func:`match_media_values` warns once per piece (or seed) that names it
(:data:`MEDIA_DIFFERS`, :func:`media_differs_message`).

The listing lives in the importer's scratch SQLite database, so a folder of a million files
costs disk, not memory. Only regular files inside the root are listed (symbolic links are
skipped, so nothing outside the root is reachable), and files over the media size limit are
left out.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: PyRIT's results folders: a media value's path after one of them identifies the file.
MARKERS = ("prompt-memory-entries/", "seed-prompt-entries/")

#: Data types whose value is a path/URI to a file rather than content (contract §1, §13).
MEDIA_DATA_TYPES = frozenset({"image_path", "audio_path", "video_path", "binary_path"})


def is_media_value(data_type: str, value: str) -> bool:
    """True when ``value`` of ``data_type`` names a file (``url`` only when not http(s))."""
    if data_type in MEDIA_DATA_TYPES:
        return True
    return data_type == "url" and not value.startswith(("http://", "https://"))


def media_key(location: str) -> str:
    """The file name of a PyRIT media location (``/``, ``\\`` or URL paths): the match key.

    Only ever used as a lookup string; nothing here touches the filesystem.
    """
    # Strip: YAML block scalars leave a trailing newline on paths.
    path = location.strip().split("?", 1)[0].replace("\\", "/")
    return path.rstrip("/").rsplit("/", 1)[-1][:255]


def media_suffix(location: str) -> str | None:
    """The part after PyRIT's results folder marker (``images/1732.png``), if present."""
    path = location.strip().split("?", 1)[0].replace("\\", "/")
    for marker in MARKERS:
        cut = path.rfind(marker)
        if cut >= 0:
            return path[cut:]
    return None


def locations_match(a: str, b: str) -> bool:
    """Contract §13 rules (a)/(b): same path after the results folder marker when both have
    one, else the same file name."""
    suffix_a, suffix_b = media_suffix(a), media_suffix(b)
    if suffix_a is not None and suffix_b is not None:
        return suffix_a == suffix_b
    return media_key(a) == media_key(b)


#: A media value with where it came from: ``(value, recorded SHA-256, owner)``; ``owner`` names
#: the piece and its conversation (``piece <id> conversation <id>``) or the seed (``seed <id>``).
MediaValue = tuple[str, str | None, str]

#: The warning kind of a value whose file has other bytes than PyRIT recorded (machine-stable).
MEDIA_DIFFERS = "media differs from recorded sha256"


def piece_owner(piece_id: object, conversation_id: object) -> str:
    """How a warning names a piece: ``piece <id> conversation <id>``."""
    return f"piece {piece_id} conversation {conversation_id}"


def media_differs_message(*, owner: str, file: str, expected: list[str]) -> str:
    """The text of one :data:`MEDIA_DIFFERS` warning (machine-stable: ``<owner> file <path>
    expected sha256 <hex>[,<hex>]: not linked``)."""
    return f"{owner} file {file} expected sha256 {','.join(expected)}: not linked"


def payload_media_values(payload: dict[str, Any]) -> list[MediaValue]:
    """Every media value of a payload as :mod:`~pyrit_memory_reader.chunks` builds it:
    pieces' original and converted values (a piece without a converted value shows its
    original), seeds' values."""
    found: list[MediaValue] = []
    for piece in payload.get("message_pieces") or ():
        original_type = piece.get("original_value_data_type") or ""
        original = piece.get("original_value")
        converted = piece.get("converted_value")
        if converted is None:
            converted = original
        converted_type = piece.get("converted_value_data_type") or original_type
        owner = piece_owner(piece.get("id"), piece.get("conversation_id"))
        for value, data_type, sha in (
            (original, original_type, piece.get("original_value_sha256")),
            (converted, converted_type, piece.get("converted_value_sha256")),
        ):
            if isinstance(value, str) and value and is_media_value(data_type, value):
                found.append((value, sha if isinstance(sha, str) else None, owner))
    seeds = list(payload.get("seeds") or ())
    for group in payload.get("seed_groups") or ():
        seeds.extend(group.get("seeds") or ())
    for seed in seeds:
        value, sha = seed.get("value"), seed.get("value_sha256")
        if isinstance(value, str) and value and is_media_value(seed.get("data_type") or "", value):
            found.append((value, sha if isinstance(sha, str) else None, f"seed {seed.get('id')}"))
    return found


#: Extensions PyRIT writes or reads as media (contract §8.2, §13); outside PyRIT's own results
#: folders only these are listed.
MEDIA_EXTENSIONS = frozenset(
    {
        # images
        "png", "jpg", "jpeg", "gif", "bmp", "tiff", "tif", "webp",
        # audio
        "wav", "mp3", "mpeg", "mpga", "m4a", "ogg", "flac",
        # video
        "mp4", "avi", "mov", "mkv", "ogv", "flv", "wmv", "webm",
        # binaries and url files written by converters
        "bin", "pdf", "docx", "txt",
    }
)  # fmt: skip
_SQLITE_SIDECARS = ("-wal", "-shm", "-journal")
# Without an explicit media root only PyRIT's results folders count, and the walk does not
# wander further than this below the database's folder looking for them.
_DEFAULT_ROOT_DEPTH = 3


@dataclass(frozen=True)
class MediaFile:
    """One listed file: where it is and, once read, its SHA-256."""

    id: int
    path: Path
    sha256: str | None


class MediaFiles:
    """The media files under one root, listed into the scratch database ``db``."""

    def __init__(
        self, db: sqlite3.Connection, root: Path | None, *, explicit: bool, max_bytes: int
    ) -> None:
        self.db = db
        self.root = root
        self.max_bytes = max_bytes
        self.too_large: list[str] = []
        self._all_hashed = False
        db.execute(
            "CREATE TABLE media_files (id INTEGER PRIMARY KEY, path TEXT NOT NULL, "
            "suffix TEXT, name TEXT NOT NULL, sha TEXT, used INTEGER NOT NULL DEFAULT 0)"
        )
        if root is not None and root.is_dir():
            self._list(root.resolve(), explicit=explicit)
        db.execute("CREATE INDEX media_suffix ON media_files (suffix)")
        db.execute("CREATE INDEX media_name ON media_files (name)")
        db.execute("CREATE INDEX media_sha ON media_files (sha)")

    @property
    def count(self) -> int:
        """How many files were listed."""
        return self.db.execute("SELECT count(*) FROM media_files").fetchone()[0]

    def unused(self, *, limit: int) -> tuple[int, list[str]]:
        """How many listed files no piece or seed named, and the first ``limit`` of them
        (relative to the root)."""
        count = self.db.execute("SELECT count(*) FROM media_files WHERE used = 0").fetchone()[0]
        rows = self.db.execute(
            "SELECT path FROM media_files WHERE used = 0 ORDER BY id LIMIT ?", (limit,)
        )
        return count, [self._relative(row[0]) for row in rows]

    def _relative(self, path: str) -> str:
        if self.root is None:
            return path
        try:
            return Path(path).relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return path

    def _list(self, root: Path, *, explicit: bool) -> None:
        batch: list[tuple[str, str | None, str]] = []
        for directory, subdirs, files in os.walk(root, followlinks=False):
            relative = Path(directory).relative_to(root).as_posix()
            inside_marker = any(m.rstrip("/") in relative.split("/") for m in MARKERS)
            if not explicit and not inside_marker:
                depth = 0 if relative == "." else relative.count("/") + 1
                if depth >= _DEFAULT_ROOT_DEPTH:
                    subdirs[:] = []
            for name in files:
                full = Path(directory, name)
                if full.is_symlink() or name.endswith(_SQLITE_SIDECARS):
                    continue
                posix = full.as_posix()
                suffix = media_suffix(posix)
                extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
                if suffix is None and (not explicit or extension not in MEDIA_EXTENSIONS):
                    continue
                try:
                    size = full.stat().st_size
                except OSError:
                    continue
                if size > self.max_bytes:
                    self.too_large.append(self._relative(posix))
                    continue
                batch.append((posix, suffix, media_key(posix)))
                if len(batch) >= 5000:
                    self._insert(batch)
        self._insert(batch)

    def _insert(self, batch: list[tuple[str, str | None, str]]) -> None:
        self.db.executemany("INSERT INTO media_files (path, suffix, name) VALUES (?, ?, ?)", batch)
        batch.clear()

    # --- matching ---------------------------------------------------------------------------

    def _rows(self, where: str, value: str) -> list[MediaFile]:
        rows = self.db.execute(
            f"SELECT id, path, sha FROM media_files WHERE {where} = ? ORDER BY id", (value,)
        )
        return [MediaFile(row[0], Path(row[1]), row[2]) for row in rows]

    def sha_of(self, media: MediaFile) -> str:
        """The file's SHA-256, computed once and remembered."""
        if media.sha256 is not None:
            return media.sha256
        digest = _file_sha256(media.path)
        self.db.execute("UPDATE media_files SET sha = ? WHERE id = ?", (digest, media.id))
        return digest

    def find(self, location: str, sha256: str | None) -> tuple[MediaFile | None, str | None]:
        """The listed file for a media value, and the file refused for it, if one was.

        Rules of contract §13 in order: path after the results-folder marker, file name, stored
        SHA-256. With a stored SHA-256 a candidate must have those bytes; a candidate by path
        or name that has other bytes is returned second (relative to the root) when no file
        with the recorded bytes exists.
        """
        sha256 = sha256.lower() if sha256 else None
        suffix = media_suffix(location)
        candidates = self._rows("suffix", suffix) if suffix is not None else []
        if not candidates:
            candidates = self._rows("name", media_key(location))
        for candidate in candidates:
            if sha256 is None or self.sha_of(candidate) == sha256:
                return self._use(candidate), None
        if sha256:
            self._hash_all()
            by_sha = self._rows("sha", sha256)
            if by_sha:
                return self._use(by_sha[0]), None
        refused = self._relative(str(candidates[0].path)) if candidates else None
        return None, refused

    def _use(self, media: MediaFile) -> MediaFile:
        self.db.execute("UPDATE media_files SET used = 1 WHERE id = ?", (media.id,))
        return MediaFile(media.id, media.path, self.sha_of(media))

    def _hash_all(self) -> None:
        """Hash every listed file once: rule (c) needs every file's SHA-256."""
        if self._all_hashed:
            return
        self._all_hashed = True
        rows = self.db.execute("SELECT id, path FROM media_files WHERE sha IS NULL").fetchall()
        for media_id, path in rows:
            try:
                digest = _file_sha256(Path(path))
            except OSError:
                continue
            self.db.execute("UPDATE media_files SET sha = ? WHERE id = ?", (digest, media_id))


def match_media_values(
    files: MediaFiles,
    values: Iterable[MediaValue],
    *,
    warn: Callable[[str, str], None],
) -> tuple[dict[tuple[str, str | None], MediaFile | None], int, int]:
    """The listed file of each distinct ``(value, recorded SHA-256)`` of ``values``, and how
    many values matched and how many did not.

    A value whose file by path or name has other bytes than PyRIT recorded gets no file, and
    ``warn(MEDIA_DIFFERS, …)`` is called once per owner (a piece whose two sides name the file
    is one warning), naming the owner, the file and the expected SHA-256.
    """
    found: dict[tuple[str, str | None], MediaFile | None] = {}
    refused: dict[tuple[str, str | None], str | None] = {}
    differs: dict[str, tuple[str, list[str]]] = {}
    matched = missing = 0
    for value, sha, owner in values:
        key = (value, sha)
        if key not in found:
            found[key], refused[key] = files.find(value, sha)
        if found[key] is not None:
            matched += 1
            continue
        missing += 1
        if refused[key] is not None and sha:
            file, expected = differs.setdefault(owner, (refused[key], []))
            if sha.lower() not in expected:
                expected.append(sha.lower())
    for owner, (file, expected) in differs.items():
        warn(MEDIA_DIFFERS, media_differs_message(owner=owner, file=file, expected=expected))
    return found, matched, missing


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
