"""PyRIT's colliding media names (real PyRIT 1.1.0: ``pyrit-1.1.0-truth``, three QR codes in
one file): a piece links only to the bytes PyRIT recorded for it."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3

import pytest

from memory.models import MediaBlob, MessagePiece
from memory.transfer.importers.service import import_pyrit_db
from tests.collision import OVERWRITTEN, SHARED, SURVIVOR, collided_copy, recorded_sha
from tests.conftest import FIXTURES_DIR

pytestmark = pytest.mark.django_db

# The fixture holds the other cases of issue 34 too (a 4,000-character label the importer may
# refuse): these tests look at the media only, not at whether the whole import was clean.

DIFFERS = "media differs from recorded sha256: "


def _differs_warnings(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith(DIFFERS)]


def test_only_the_piece_whose_bytes_survived_links_to_the_shared_file(tmp_path):
    db = collided_copy(tmp_path)
    import_pyrit_db(path=db)
    survivor = MessagePiece.objects.get(id=SURVIVOR[0])
    assert survivor.converted_media.sha256 == recorded_sha(SURVIVOR[0])
    for piece_id, _ in OVERWRITTEN:
        piece = MessagePiece.objects.get(id=piece_id)
        assert piece.original_media is None and piece.converted_media is None
        # still stored and listed, with the hash PyRIT recorded
        assert piece.converted_value == SHARED
        assert piece.converted_value_sha256 == recorded_sha(piece_id)
    assert not MediaBlob.objects.filter(
        sha256__in=[recorded_sha(piece_id) for piece_id, _ in OVERWRITTEN]
    ).exists()


def test_one_warning_per_overwritten_piece_naming_piece_conversation_and_file(tmp_path):
    summary = import_pyrit_db(path=collided_copy(tmp_path))
    warnings = _differs_warnings(summary.warnings)
    assert sorted(warnings) == sorted(
        f"{DIFFERS}piece {piece_id} conversation {conversation_id} file {SHARED} "
        f"expected sha256 {recorded_sha(piece_id)}: not linked"
        for piece_id, conversation_id in OVERWRITTEN
    )


def test_the_right_bytes_found_later_still_link(tmp_path):
    db = collided_copy(tmp_path)
    piece_id, _ = OVERWRITTEN[0]
    # PyRIT's overwritten bytes are gone: stand in bytes the piece records as its own
    recovered = next((FIXTURES_DIR / "pyrit-1.1.0-small" / "dbdata").rglob("*.png"))
    digest = hashlib.sha256(recovered.read_bytes()).hexdigest()
    with sqlite3.connect(db) as source:
        source.execute(
            "UPDATE PromptMemoryEntries SET converted_value_sha256 = ? WHERE id = ?",
            (digest, piece_id),
        )
    source.close()
    import_pyrit_db(path=db)
    assert MessagePiece.objects.get(id=piece_id).converted_media is None
    # they turn up later, under another name: found by their SHA-256
    later = tmp_path / "later"
    later.mkdir()
    shutil.copy(recovered, later / "recovered.png")
    import_pyrit_db(path=db, media_root=later)
    assert MessagePiece.objects.get(id=piece_id).converted_media.sha256 == digest
