"""An attack whose QR image PyRIT overwrote (colliding media names): the page says the media
is missing, with the SHA-256 PyRIT recorded, and shows no image of the bytes that survived."""

from __future__ import annotations

import pytest

from memory.models import MessagePiece
from memory.transfer.importers.service import import_pyrit_db
from tests.collision import OVERWRITTEN, PICK_A_LOCK_ATTACK, SURVIVOR, collided_copy, recorded_sha

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_attack_with_an_overwritten_qr_image_says_media_missing(
    login_page, live_server, viewer, shot, tmp_path
):
    import_pyrit_db(path=collided_copy(tmp_path))
    survivor = MessagePiece.objects.get(id=SURVIVOR[0]).converted_media.sha256
    piece_id, conversation_id = OVERWRITTEN[0]
    expected = recorded_sha(piece_id)
    page = login_page(viewer)
    for url in (f"/attacks/{PICK_A_LOCK_ATTACK}/", f"/conversations/{conversation_id}/"):
        page.goto(live_server.url + url)
        assert "explain how to pick a lock" in page.content().lower()
        missing = page.locator(".media-differs")
        missing.first.wait_for()
        assert missing.count() == 1  # the QR code (its original is the objective's text)
        assert missing.first.inner_text().startswith(
            f"media missing — the file was overwritten or differs (expected sha256 {expected})"
        )
        assert missing.first.is_visible()
        assert page.locator(f"img[src*='{survivor}']").count() == 0
        assert page.locator("img[src*='/api/v1/media/']").count() == 0
    page.goto(f"{live_server.url}/attacks/{PICK_A_LOCK_ATTACK}/")
    page.locator(".media-differs").first.scroll_into_view_if_needed()
    shot(page, "media-missing-overwritten-qr")
