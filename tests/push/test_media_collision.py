"""redline-push and PyRIT's colliding media names: only the piece that recorded the surviving
file's bytes links to it; the others are reported once each and stay without media."""

from __future__ import annotations

import pytest

from memory.models import MessagePiece
from tests.collision import OVERWRITTEN, SHARED, SURVIVOR, collided_copy, recorded_sha

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_push_links_only_the_piece_whose_bytes_survived(push, tmp_path):
    db = collided_copy(tmp_path)
    status, out, err = push(db, "--batch-rows", "50")
    # 1: Redline refused some rows of the fixture's other issue-34 cases (its 4,000-character
    # label); the media are what this test is about
    assert status in (0, 1), out + err
    survivor = MessagePiece.objects.get(id=SURVIVOR[0])
    assert survivor.converted_media.sha256 == recorded_sha(SURVIVOR[0])
    for piece_id, _ in OVERWRITTEN:
        piece = MessagePiece.objects.get(id=piece_id)
        assert piece.original_media is None and piece.converted_media is None
        assert piece.converted_value == SHARED
    # one warning per overwritten piece, naming piece, conversation and file, never twice
    expected = [
        f"  - media differs from recorded sha256: piece {piece_id} conversation "
        f"{conversation_id} file {SHARED} expected sha256 {recorded_sha(piece_id)}: not linked"
        for piece_id, conversation_id in OVERWRITTEN
    ]
    printed = [line for line in (out + err).splitlines() if "media differs" in line]
    assert sorted(printed) == sorted(expected)
