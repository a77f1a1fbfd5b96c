"""Nothing is cut off or covered: every element fits its container at the two desktop widths
reviewers use, the Rendered/Raw switch leaves the text alone, a blurred small image keeps its
Show button, and the filter panels' labels are whole."""

from __future__ import annotations

import uuid

import pytest

from memory.demo import demo_load, demo_png
from memory.models import AttackResult, MessagePiece
from memory.storage.services import attack_result_save, message_add
from memory.storage.specs import AttackResultSpec, PieceSpec
from redteam.core.choices import ConversationType, PromptDataType

pytestmark = pytest.mark.django_db(transaction=True)

#: Every visible element of <main> that sticks out of its parent, as "tag.class in
#: tag.class: left-right vs left-right". A scrolling parent counts too: at these widths a
#: table that needs sideways scrolling was the bug (its scroll bar sat below 50 rows).
OVERFLOWING = """() => {
  const out = [];
  const describe = (e) => `${e.tagName.toLowerCase()}.${[...e.classList].join(".")}`;
  for (const el of document.querySelectorAll("main *")) {
    const parent = el.parentElement;
    const style = getComputedStyle(el);
    if (style.position === "absolute" || style.position === "fixed") continue;
    if (el.closest(".visually-hidden") || !el.checkVisibility({visibilityProperty: true})) continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    const outer = parent.getBoundingClientRect();
    if (box.right > outer.right + 1 || box.left < outer.left - 1) {
      out.push(`${describe(el)} in ${describe(parent)}: ${Math.round(box.left)}-` +
        `${Math.round(box.right)} vs ${Math.round(outer.left)}-${Math.round(outer.right)}`);
    }
  }
  return out;
}"""

#: Labels of the filter panels whose text is cut (clipped or ellipsed).
CUT_LABELS = """() => [...document.querySelectorAll(".sidebar label, .sidebar legend")]
  .filter((e) => !e.closest(".visually-hidden") && e.checkVisibility())
  .filter((e) => e.scrollWidth > e.clientWidth + 1)
  .map((e) => e.textContent.trim())"""


@pytest.fixture
def demo():
    demo_load()


def _pages(demo_attack: AttackResult) -> dict[str, str]:
    return {
        "attack list": "/attacks/",
        "conversation list": "/conversations/",
        "attack page": f"/attacks/{demo_attack.pk}/",
        "dashboards": "/dashboards/",
    }


@pytest.mark.parametrize("width", [1000, 1400])
def test_nothing_is_wider_than_its_container(login_page, live_server, viewer, demo, shot, width):
    from playwright.sync_api import expect

    attack = (
        AttackResult.objects.filter(
            related_conversations__conversation_type=ConversationType.ADVERSARIAL
        )
        .order_by("timestamp")
        .first()
    )
    page = login_page(viewer, width=width, height=900)
    for name, url in _pages(attack).items():
        page.goto(f"{live_server.url}{url}")
        expect(page.locator(".late-part")).to_have_count(0)
        assert page.evaluate(OVERFLOWING) == [], f"{name} at {width} px"
        assert page.evaluate(CUT_LABELS) == [], f"{name} at {width} px"
        # Opened: every table behind a "Table" fold, the identifier trees, the filters.
        page.evaluate("document.querySelectorAll('main details').forEach(d => d.open = true)")
        assert page.evaluate(OVERFLOWING) == [], f"{name} at {width} px, folds open"
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
        shot(page, f"fit-{name.replace(' ', '-')}-{width}")


def _markdown_answer_attack() -> tuple[AttackResult, MessagePiece]:
    conversation_id = str(uuid.uuid4())
    answer = PieceSpec(
        original_value="**Sure.** Here is a long answer that fills the first line of the card "
        "right to its edge, where the switch used to sit on top of the words.\n\n- one\n- two"
    )
    message_add(
        conversation_id=conversation_id,
        role="user",
        pieces=[PieceSpec(original_value="Tell me.")],
    )
    message_add(conversation_id=conversation_id, role="assistant", pieces=[answer])
    attack, _ = attack_result_save(
        spec=AttackResultSpec(
            conversation_id=conversation_id, objective="Tell me", outcome="success"
        )
    )
    return attack, MessagePiece.objects.get(pk=answer.id)


def _tops(box, upper: str, lower: str) -> tuple[float, float]:
    """The bottom of ``upper`` and the top of ``lower`` inside ``box``, read at one moment."""
    return box.evaluate(
        "(el, [a, b]) => [el.querySelector(a).getBoundingClientRect().bottom,"
        " el.querySelector(b).getBoundingClientRect().top]",
        [upper, lower],
    )


@pytest.mark.parametrize("width", [1280, 1000, 390])
def test_the_rendered_raw_switch_covers_no_text(login_page, live_server, viewer, shot, width):
    attack, piece = _markdown_answer_attack()
    page = login_page(viewer, width=width)
    page.goto(f"{live_server.url}/attacks/{attack.pk}/")
    box = page.locator(f"#piece-{piece.pk} .fmt")
    for body in (box.locator(".md"), box.locator("label.tab-w")):
        assert body.count()
    # Both boxes in one call: the page may scroll between two bounding_box() calls, and
    # their coordinates are the viewport's.
    tabs_bottom, text_top = _tops(box, ".fmt-tabs", ".md")
    assert tabs_bottom <= text_top + 0.5  # above the text, not on it
    box.locator("label.tab-w").click()
    tabs_bottom, raw_top = _tops(box, ".fmt-tabs", "pre.raw")
    assert tabs_bottom <= raw_top + 0.5
    shot(page, f"review-rendered-raw-{width}")


def test_a_small_blurred_image_keeps_its_show_button(login_page, live_server, viewer, shot):
    conversation_id = str(uuid.uuid4())
    image = PieceSpec(
        original_value=f"/tmp/images/{uuid.uuid4()}.png",
        original_value_data_type=PromptDataType.IMAGE_PATH,
        original_media=demo_png("", size=(40, 24)),
        targeted_harm_categories=["violence"],
    )
    message_add(conversation_id=conversation_id, role="user", pieces=[image])
    attack, _ = attack_result_save(
        spec=AttackResultSpec(conversation_id=conversation_id, objective="A tiny image")
    )
    page = login_page(viewer)
    page.goto(f"{live_server.url}/attacks/{attack.pk}/")
    figure = page.locator(f"#piece-{image.id} figure.media-image")
    button = figure.locator(".blur-cover .button")
    assert button.is_visible()
    frame, show = figure.bounding_box(), button.bounding_box()
    assert frame["x"] <= show["x"] and show["x"] + show["width"] <= frame["x"] + frame["width"]
    assert frame["y"] <= show["y"] and show["y"] + show["height"] <= frame["y"] + frame["height"]
    # Nothing lies on top of it: a click there reaches the cover.
    centre = page.evaluate(
        "([x, y]) => document.elementFromPoint(x, y).closest('.blur-cover') !== null",
        [show["x"] + show["width"] / 2, show["y"] + show["height"] / 2],
    )
    assert centre
    shot(page, "review-small-image-blurred")
    button.click()
    assert figure.locator("img").evaluate("img => getComputedStyle(img).filter") == "none"
