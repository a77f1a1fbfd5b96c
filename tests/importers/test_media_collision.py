"""PyRIT's colliding media names: a piece links only to the bytes PyRIT recorded for it."""

from __future__ import annotations

import pytest

from memory.models import MediaBlob, MessagePiece
from memory.transfer.importers.service import import_pyrit_db
from tests.collision import (
    OVERWRITTEN,
    SHARED,
    SOURCE,
    SURVIVOR,
    collided_copy,
    recorded_sha,
)

pytestmark = pytest.mark.django_db

DIFFERS = "media differs from recorded sha256: "


def _differs_warnings(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith(DIFFERS)]


def test_only_the_piece_whose_bytes_survived_links_to_the_shared_file(tmp_path):
    db = collided_copy(tmp_path)
    summary = import_pyrit_db(path=db)
    assert summary.ok
    survivor = MessagePiece.objects.get(id=SURVIVOR[0])
    assert survivor.converted_media.sha256 == recorded_sha(SURVIVOR[0])
    assert survivor.original_media == survivor.converted_media
    for piece_id, _, _ in OVERWRITTEN:
        piece = MessagePiece.objects.get(id=piece_id)
        assert piece.original_media is None and piece.converted_media is None
        # still stored and listed, with the hash PyRIT recorded
        assert piece.converted_value == SHARED
        assert piece.converted_value_sha256 == recorded_sha(piece_id)
    assert not MediaBlob.objects.filter(
        sha256__in=[recorded_sha(piece_id) for piece_id, _, _ in OVERWRITTEN]
    ).exists()


def test_one_warning_per_overwritten_piece_naming_piece_conversation_and_file(tmp_path):
    summary = import_pyrit_db(path=collided_copy(tmp_path))
    warnings = _differs_warnings(summary.warnings)
    assert sorted(warnings) == sorted(
        f"{DIFFERS}piece {piece_id} conversation {conversation_id} file {SHARED} "
        f"expected sha256 {recorded_sha(piece_id)}: not linked"
        for piece_id, conversation_id, _ in OVERWRITTEN
    )


def test_the_right_bytes_sent_later_still_link(tmp_path):
    db = collided_copy(tmp_path)
    import_pyrit_db(path=db)
    piece_id, _, own = OVERWRITTEN[0]
    # the piece's own bytes turn up later, under another name: found by their SHA-256
    later = tmp_path / "later"
    later.mkdir()
    (later / "recovered.png").write_bytes((SOURCE / own).read_bytes())
    again = import_pyrit_db(path=db, media_root=later)
    assert again.ok
    piece = MessagePiece.objects.get(id=piece_id)
    assert piece.converted_media is not None
    assert piece.converted_media.sha256 == recorded_sha(piece_id)
