"""PyRIT's media-name collision, built from the real 1.1.0 fixture.

PyRIT names a media file by its timestamp; values written in the same tick share one name and
only the last file's bytes survive, while each piece keeps the SHA-256 of the bytes it wrote.
:func:`collided_copy` rebuilds that in a private copy of ``pyrit-1.1.0-small``: three image
pieces name one file, which holds the bytes of only one of them (:data:`SURVIVOR`); the other
two pieces' own files are gone.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from tests.conftest import FIXTURES_DIR

SOURCE = FIXTURES_DIR / "pyrit-1.1.0-small"
#: The one file all three pieces name (its bytes are the survivor's).
SHARED = "dbdata/prompt-memory-entries/images/1795264620303400.png"
#: The piece whose bytes the shared file holds, and its conversation.
SURVIVOR = ("56e76151-c583-436d-ac4c-e2ea027ca8c2", "bb5b9f6c-9e55-48fb-af69-0c76a533370f")
#: Pieces whose file was overwritten: (piece id, conversation id, their own file). The first
#: is the image of the attack "Make the assistant explain how to pick a lock".
OVERWRITTEN = (
    (
        "3e06e694-ca20-4457-8ebd-f40fa9034748",
        "c26c6675-2f1e-46ca-a8c2-1bc25db3b313",
        "dbdata/prompt-memory-entries/images/1795264621011084.png",
    ),
    (
        "0e69d067-858f-4d40-a976-9f063bdc6e8c",
        "eb24c064-2981-45bb-a067-03fa704435dc",
        "dbdata/prompt-memory-entries/images/1795264620232622.png",
    ),
)
#: The attack result whose image was overwritten.
PICK_A_LOCK_ATTACK = "2ad7fc38-3c36-41b2-b808-aff95ac4f12c"


def collided_copy(tmp_path: Path) -> Path:
    """A copy of the 1.1.0 database and media in which the :data:`OVERWRITTEN` pieces name
    :data:`SHARED` (keeping their recorded SHA-256) and their own files are gone."""
    folder = tmp_path / "collided"
    folder.mkdir()
    shutil.copy(SOURCE / "memory.db", folder / "memory.db")
    shutil.copytree(SOURCE / "dbdata", folder / "dbdata")
    with sqlite3.connect(folder / "memory.db") as db:
        for piece_id, _, own in OVERWRITTEN:
            changed = db.execute(
                "UPDATE PromptMemoryEntries SET original_value = ?, converted_value = ? "
                "WHERE id = ? AND converted_value = ?",
                (SHARED, SHARED, piece_id, own),
            ).rowcount
            assert changed == 1, piece_id
            (folder / own).unlink()
    db.close()
    return folder / "memory.db"


def recorded_sha(piece_id: str) -> str:
    """The converted value's SHA-256 PyRIT recorded for a piece of the fixture."""
    with sqlite3.connect(f"file:{SOURCE / 'memory.db'}?mode=ro", uri=True) as db:
        row = db.execute(
            "SELECT converted_value_sha256 FROM PromptMemoryEntries WHERE id = ?", (piece_id,)
        ).fetchone()
    return row[0]
