"""Saving a form in a real browser changes only what the user changed.

Chromium submits every textarea with CRLF line endings, shows date-times to the second and
renders a null text as an empty box; none of that may reach the database when the user did not
touch the field (``redteam.core.forms``).
"""

from __future__ import annotations

import datetime as dt
import hashlib

import pytest
import yaml

from memory.models import AttackResult, HumanVerdict, MessagePiece, Score
from seeds.models import Seed, SeedDataset, SeedGroup
from tests.conftest import FIXTURES_DIR
from tests.factories import make_dataset, make_group, make_seed

pytestmark = pytest.mark.django_db(transaction=True)

#: A real multi-line PyRIT template (1,076 characters, 12 line breaks).
DURIAN = yaml.safe_load(
    (FIXTURES_DIR / "seed-yaml" / "violent_durian_seed_prompt.yaml").read_text()
)
#: Microseconds the admin's date-time widget cannot show.
WHEN = dt.datetime(2025, 3, 4, 5, 6, 7, 123456, tzinfo=dt.UTC)


def _changed_fields(history) -> list[str]:
    """The fields the newest history row changed against the one before it."""
    newest = history.order_by("-history_id").first()
    return sorted(change.field for change in newest.diff_against(newest.prev_record).changes)


def _history_row(page, live_server, admin_url: str) -> list[str]:
    """The cells of the newest row of an object's history page, as the admin shows them."""
    page.goto(f"{live_server.url}{admin_url}history/")
    return page.locator("#change-history tbody tr").first.locator("td, th").all_inner_texts()


@pytest.fixture
def staff_curator(curator):
    curator.is_staff = True
    curator.save()
    return curator


def test_editing_a_seeds_description_changes_nothing_else(
    login_page, live_server, staff_curator, shot
):
    value = DURIAN["value"]
    assert "\n" in value and "\r" not in value
    seed = make_seed(
        value,
        value_sha256=hashlib.sha256(value.encode()).hexdigest(),
        name=DURIAN["name"],
        dataset=make_dataset("durian"),
        dataset_name="durian",
        description="A multi-line template.",
        source="\n".join(["line one", "line two"]),
        parameters=DURIAN["parameters"],
        date_added=WHEN,
    )
    assert seed.adversarial_chat_system_prompt_path is None
    before = Seed.objects.values().get(pk=seed.pk)

    page = login_page(staff_curator)
    page.goto(f"{live_server.url}/admin/seeds/seed/{seed.pk}/change/")
    page.fill("#id_description", "A multi-line template, reviewed.")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist .success")

    after = Seed.objects.values().get(pk=seed.pk)
    changed = {k for k in after if after[k] != before[k]}
    assert changed == {"description", "updated_at"}
    assert after["value"] == value and after["value_sha256"] == before["value_sha256"]
    assert after["date_added"] == WHEN
    assert after["adversarial_chat_system_prompt_path"] is None
    assert after["simulated_target_system_prompt_path"] is None
    assert after["next_message_system_prompt_path"] is None
    assert _changed_fields(Seed.history.filter(id=seed.pk)) == ["description"]
    # Object, changed fields, date, action, changed by, …
    row = _history_row(page, live_server, f"/admin/seeds/seed/{seed.pk}/")
    assert row[1] == "Description" and row[4] == staff_curator.username
    shot(page, "stored-values-seed-history")

    # A real edit of the value keeps the stored LF line endings.
    page.goto(f"{live_server.url}/admin/seeds/seed/{seed.pk}/change/")
    box = page.locator("#id_value")
    box.fill(box.input_value() + "\nOne more line.")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist .success")
    seed.refresh_from_db()
    assert seed.value == value + "\nOne more line."
    assert seed.value_sha256 == hashlib.sha256(seed.value.encode()).hexdigest()


def test_editing_a_datasets_name_changes_nothing_else(login_page, live_server, staff_curator):
    dataset = make_dataset(
        "durian",
        description="First line.\nSecond line.\n",
        source="https://example.org/a\nhttps://example.org/b",
        harm_categories=["violence"],
        date_added=WHEN,
    )
    before = SeedDataset.objects.values().get(pk=dataset.pk)

    page = login_page(staff_curator)
    page.goto(f"{live_server.url}/admin/seeds/seeddataset/{dataset.pk}/change/")
    page.fill("#id_name", "durian-reviewed")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist .success")

    after = SeedDataset.objects.values().get(pk=dataset.pk)
    assert {k for k in after if after[k] != before[k]} == {"name", "updated_at"}
    assert after["date_added"] == WHEN
    assert after["default_seed_name"] is None and after["added_by"] is None
    assert _changed_fields(SeedDataset.history.filter(id=dataset.pk)) == ["name"]


def test_editing_a_groups_alias_leaves_its_seeds_as_stored(login_page, live_server, staff_curator):
    group = make_group(alias="durian")
    dataset = make_dataset("durian")
    members = [
        make_seed(
            "Line one.\nLine two.\n",
            group=group,
            dataset=dataset,
            dataset_name="durian",
            sequence=0,
            position=0,
            role="user",
            date_added=WHEN,
        ),
        make_seed(
            "Reply one.\r\nReply two.",
            group=group,
            dataset=dataset,
            dataset_name="durian",
            sequence=1,
            position=1,
            role="assistant",
            date_added=WHEN,
        ),
    ]
    before = {s["id"]: s for s in Seed.objects.filter(group=group).values()}

    page = login_page(staff_curator)
    page.goto(f"{live_server.url}/admin/seeds/seedgroup/{group.pk}/change/")
    page.fill("#id_alias", "durian-reviewed")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist .success")

    group.refresh_from_db()
    assert group.alias == "durian-reviewed"
    after = {s["id"]: s for s in Seed.objects.filter(group=group).values()}
    for seed in members:
        changed = {k for k in after[seed.pk] if after[seed.pk][k] != before[seed.pk][k]}
        assert changed <= {"updated_at"}, (seed.value, changed)
    # The CRLF seed keeps its CRLF, the LF seed its LF.
    assert after[members[1].pk]["value"] == "Reply one.\r\nReply two."
    assert after[members[0].pk]["value"] == "Line one.\nLine two.\n"
    assert _changed_fields(SeedGroup.history.filter(id=group.pk)) == ["alias"]


@pytest.fixture
def no_js_page(browser, live_server):
    """Factory of logged-in pages with JavaScript off: forms are plain browser posts."""
    from tests.browser.conftest import _session_cookie

    contexts = []

    def make(user):
        context = browser.new_context(java_script_enabled=False)
        context.add_cookies([_session_cookie(live_server, user)])
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


@pytest.mark.parametrize("javascript", [True, False], ids=["htmx", "plain-post"])
def test_verdict_reasons_and_human_scores_are_stored_with_lf(
    login_page, no_js_page, live_server, reviewer, javascript
):
    from memory.demo import demo_load

    demo_load()
    attack = AttackResult.objects.order_by("timestamp").first()
    page = login_page(reviewer) if javascript else no_js_page(reviewer)
    page.goto(f"{live_server.url}/attacks/{attack.pk}/")

    form = page.locator("form.verdict-form")
    form.locator("label.choice-success").click()
    form.locator("textarea[name=reason]").fill("Checked the answer.\nIt gives real steps.")
    form.locator("button[type=submit]").click()
    page.wait_for_function(
        "() => document.querySelector('#verdicts').innerText.includes('real steps')"
    )
    verdict = HumanVerdict.objects.get(attack_result=attack)
    assert verdict.reason == "Checked the answer.\nIt gives real steps."

    piece = MessagePiece.objects.filter(
        message__conversation=attack.conversation, message__role="assistant"
    ).first()
    if javascript:
        box = page.locator(f"#piece-{piece.pk}")
        box.locator("a.add-score").click()
        score_form = box.locator("form.human-score-form")
    else:
        page.goto(f"{live_server.url}/pieces/{piece.pk}/human-score/")
        score_form = page.locator("form.human-score-form")
    score_form.locator("input[name=score_type][value=true_false]").check()
    score_form.locator("input[name=bool_value][value=true]").check()
    score_form.locator("textarea[name=rationale]").fill("Actionable.\nStep by step.")
    if javascript:
        score_form.locator("button[type=submit]").click()
        box.locator(".score-human").wait_for()
    else:
        with page.expect_navigation():
            score_form.locator("button[type=submit]").click()
    score = Score.objects.get(reviewer=reviewer)
    assert score.score_rationale == "Actionable.\nStep by step."
