"""Issue 34 in a real browser, on real PyRIT 1.1.0 data: a RedTeamingAttack whose requests went
through ROT13Converter and whose target answered in plain English. The answers get no decoded
box (PyRIT recorded no converter on them); the requests' own decoding is there, closed."""

from __future__ import annotations

import codecs
from io import StringIO

import pytest
from django.core.management import call_command

from memory.models import AttackResult
from memory.storage.services import message_add
from memory.storage.specs import PieceSpec
from tests.conftest import FIXTURES_DIR
from tests.review.test_detail import build_attack

pytestmark = pytest.mark.django_db(transaction=True)

TRUTH = FIXTURES_DIR / "pyrit-1.1.0-truth"
#: The ROT13 RedTeamingAttack of the fixture (tests/fixtures/README.md, case 2).
ROT13_ATTACK = "b927b8bd-d240-4a76-b90e-6cd64417596b"
ANSWERS = (
    "I'm sorry, but I can't help with that.",
    "I can't assist with that request.",
    "Sorry, I won't provide that information.",
)


@pytest.fixture
def truth():
    # The whole file imports (its 4,000-character label included); the test reads the ROT13 attack.
    call_command("import_pyrit", str(TRUTH / "memory.db"), verbosity=0, stdout=StringIO())
    assert AttackResult.objects.filter(pk=ROT13_ATTACK).exists()


def test_plain_answers_to_rot13_requests_are_not_decoded(
    login_page, live_server, viewer, truth, shot
):
    page = login_page(viewer)
    page.goto(f"{live_server.url}/attacks/{ROT13_ATTACK}/")

    answers = page.locator(".thread-col:not(.side-col) li.msg-assistant")
    assert answers.count() == 3
    for answer in ANSWERS:
        assert answers.get_by_text(answer, exact=True).count() == 1
    # No decoded box on any answer, and no ROT13 of an answer anywhere on the page.
    assert answers.locator(".decoded").count() == 0
    body = page.inner_text("body")
    for answer in ANSWERS:
        assert codecs.encode(answer, "rot13") not in body

    # Each request's own ROT13Converter is undone, in a closed box that opens on demand.
    requests = page.locator(".thread-col:not(.side-col) li.msg-user")
    assert requests.count() == 3
    boxes = requests.locator("details.decoded")
    assert boxes.count() == 3
    for i in range(3):
        box = boxes.nth(i)
        assert box.get_attribute("open") is None
        assert "ROT13Converter" in box.locator("summary").inner_text()
        assert not box.locator(".decoded-text").is_visible()
    first = boxes.first
    first.locator("summary").click()
    decoded = first.locator(".decoded-text")
    assert decoded.is_visible()
    sent = requests.first.locator(".vs-panel-c").inner_text().strip()
    assert decoded.inner_text().strip() == codecs.encode(sent, "rot13").strip()
    assert "lock" in decoded.inner_text()

    shot(page, "decoding-rot13-red-teaming")


#: English enough for the readability check, sent as ROT13 with no converter on record.
PLAIN = "Sure, here is how you pick the lock on the front door of the house without a key."


def test_rot13_looking_text_without_converters_offers_a_closed_try_decoding_box(
    login_page, live_server, viewer, shot
):
    attack, _ = build_attack()
    message_add(
        conversation_id=attack.conversation.conversation_id,
        role="assistant",
        pieces=[PieceSpec(original_value=codecs.encode(PLAIN, "rot13"))],
    )
    page = login_page(viewer)
    page.goto(f"{live_server.url}/attacks/{attack.pk}/")

    box = page.locator("details.decoded-try")
    assert box.count() == 1
    assert box.get_attribute("open") is None
    assert "ROT13" in box.locator("summary").inner_text()
    assert not box.locator(".decoded-text").first.is_visible()
    box.locator("summary").click()
    decoded = box.locator(".decoded-text").first
    assert decoded.is_visible()
    assert decoded.inner_text().strip() == PLAIN

    shot(page, "decoding-try-rot13")
