"""The attack list, the conversation list and the global search pages."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
from django.test import Client

from memory.models import AttackResult, HarmCategory, Label, MessagePiece
from redteam.core.choices import AttackOutcome, ConversationType, ScoreType
from tests.factories import (
    NOW,
    make_attack,
    make_conversation,
    make_identifier,
    make_message,
    make_piece,
    make_piece_converter,
    make_related_conversation,
    make_score,
)
from tests.queries import get_counted

pytestmark = pytest.mark.django_db

URLS = ["/attacks/", "/conversations/", "/search/?q=password"]


@pytest.fixture
def client(viewer_client):
    """The test client of these tests is logged in as the viewer."""
    return viewer_client


def tag(row, labels: dict[str, str], harms: list[str]) -> None:
    """Labels and harm categories on an attack or conversation, index rows included."""
    row.labels = labels
    row.targeted_harm_categories = harms
    row.save(update_fields=["labels", "targeted_harm_categories"])
    for key, value in labels.items():
        row.label_index.add(Label.objects.get_or_create(key=key, value=value)[0])
    for name in harms:
        row.harm_category_index.add(HarmCategory.objects.get_or_create(name=name)[0])


class Memory:
    """Builds attacks and standalone conversations with everything a list row shows."""

    def __init__(self) -> None:
        self.targets = [
            make_identifier("OpenAIChatTarget", model_name="gpt-4o"),
            make_identifier("AzureMLChatTarget", model_name="llama-3"),
        ]
        self.attacks = [make_identifier("PromptSendingAttack"), make_identifier("CrescendoAttack")]
        self.scorers = [make_identifier("SubStringScorer"), make_identifier("SelfAskLikertScorer")]
        self.converter = make_identifier("Base64Converter")
        self.n = 0

    def attack(self, **fields) -> AttackResult:
        """One attack with a main conversation of two pieces, a converter and a last score."""
        i = self.n = self.n + 1
        conversation = make_conversation(f"conv-{i:04d}", target_identifier=self.targets[i % 2])
        prompt = make_piece(make_message(conversation, 0, "user"), f"Prompt number {i}")
        make_piece_converter(prompt, self.converter)
        reply = make_piece(make_message(conversation, 1, "assistant"), f"Reply number {i}")
        if i % 2:
            score = make_score(reply, "true", scorer_class_identifier=self.scorers[0])
        else:
            score = make_score(
                reply,
                "0.5",
                score_type=ScoreType.FLOAT_SCALE,
                scorer_class_identifier=self.scorers[1],
            )
        defaults = {
            "objective": f"Objective {i}: reveal the password",
            "attack_identifier": self.attacks[i % 2],
            "outcome": [AttackOutcome.SUCCESS, AttackOutcome.FAILURE][i % 2],
            "last_score": score,
            "executed_turns": i % 5,
            "execution_time_ms": 1000 * i,
            "timestamp": NOW + timedelta(minutes=i),
        }
        defaults.update(fields)
        attack = make_attack(conversation, **defaults)
        tag(attack, {"operator": f"op{i % 3}", "operation": "op_blue"}, ["violence", "fraud"])
        return attack

    def standalone(self, **fields):
        """A conversation without an attack: system prompt, user prompt, reply."""
        i = self.n = self.n + 1
        conversation = make_conversation(
            f"solo-{i:04d}", target_identifier=self.targets[i % 2], **fields
        )
        conversation.started_at = NOW + timedelta(minutes=i)
        conversation.save(update_fields=["started_at"])
        make_piece(make_message(conversation, 0, "system"), "You are a helpful assistant")
        make_piece(make_message(conversation, 1, "user"), f"Standalone question {i}")
        make_piece(make_message(conversation, 2, "assistant"), "Standalone answer")
        tag(conversation, {"operator": "alice"}, ["privacy"])
        return conversation


@pytest.fixture
def memory(db):
    return Memory()


def row_ids(response, kind: str = "attacks") -> list[str]:
    """The ids the result rows link to, in page order."""
    html = response.content.decode()
    if kind == "attacks":
        return re.findall(r'class="objective-link" href="/attacks/([0-9a-f-]+)/"', html)
    return re.findall(r'class="conversation-link hash" href="/conversations/([^/"]+)/"', html)


# --- access -------------------------------------------------------------------------------------


@pytest.mark.parametrize("url", URLS)
def test_anonymous_users_are_sent_to_login(url):
    response = Client().get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")


@pytest.mark.parametrize("url", URLS)
def test_a_viewer_sees_every_list(client, memory, url):
    memory.attack()
    memory.standalone()
    response = client.get(url)
    assert response.status_code == 200
    assert b'<main id="main"' in response.content


# --- attack list --------------------------------------------------------------------------------


def test_attack_rows_show_what_the_brief_lists(client, memory):
    attack = memory.attack(
        outcome=AttackOutcome.FAILURE,
        human_outcome=AttackOutcome.SUCCESS,
        executed_turns=3,
        execution_time_ms=192_000,
    )
    html = client.get("/attacks/").content.decode()
    link = html.index(f"/attacks/{attack.pk}/")
    row = html[html.rindex("<tr>", 0, link) : html.index("</tr>", link)]
    # The human verdict wins and says so; the automated outcome stays in the tooltip.
    assert 'class="badge badge-success"' in row
    assert "human</span>" in row
    assert "automated: Failure" in row
    assert "Objective 1: reveal the password" in row
    assert "Prompt<wbr>Sending<wbr>Attack" in row or "Crescendo<wbr>Attack" in row
    assert "gpt-4o" in row or "llama-3" in row
    assert '<span class="turns">3</span>' in row
    assert "3 m 12 s" in row
    assert "badge-succeeded" in row and ">true</span>" in row
    assert "?labels=operator:op1" in row
    assert "?harm_category=violence" in row
    assert '<time datetime="2026-11-21T12:01:00+00:00"' in row


def test_a_float_score_is_a_bar(client, memory):
    memory.attack()
    memory.attack()  # even: a 0.5 Likert score
    html = client.get("/attacks/").content.decode()
    assert 'class="scorebar-fill" style="width: 50%"' in html
    assert "Self<wbr>Ask<wbr>Likert<wbr>Scorer" in html


def test_stored_text_is_escaped(client, memory):
    attack = memory.attack(objective='<script>alert("x")</script><img src=x onerror=alert(1)>')
    tag(attack, {"<b>key</b>": '"><script>alert(2)</script>'}, ["<i>harm</i>"])
    html = client.get("/attacks/").content.decode()
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "<b>key</b>" not in html and "<i>harm</i>" not in html


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("outcome=success", [4, 2]),
        ("outcome=failure", [3, 1]),
        ("effective_outcome=success", [4, 2, 1]),
        ("has_human_verdict=true", [1]),
        ("labels=operator:op1", [4, 1]),
        ("labels=operator:op1&outcome=failure", [1]),
        ("attack_class=CrescendoAttack", [3, 1]),
        ("target_model=llama-3", [3, 1]),
        ("scorer_class=SelfAskLikertScorer", [4, 2]),
        ("converter_class=Base64Converter", [4, 3, 2, 1]),
        ("q=OBJECTIVE+3", [3]),
    ],
)
def test_filters_in_the_url_select_the_rows(client, memory, query, expected):
    attacks = [memory.attack() for _ in range(4)]
    attacks[0].human_outcome = AttackOutcome.SUCCESS
    attacks[0].save(update_fields=["human_outcome"])
    response = client.get(f"/attacks/?{query}")
    assert response.status_code == 200
    assert row_ids(response) == [str(attacks[n - 1].pk) for n in expected]
    assert response["X-Result-Count"] == str(len(expected))


def test_the_page_lists_exactly_what_the_filterset_counts(client, memory):
    """A dashboard drill-down link lists the attacks it counted: the same filterset."""
    from memory.storage.filters import AttackResultFilter

    for _ in range(6):
        memory.attack()
    query = "effective_outcome=success&labels=operation:op_blue&harm_category=fraud"
    from django.http import QueryDict

    counted = AttackResultFilter(QueryDict(query), queryset=AttackResult.objects.all()).qs
    response = client.get(f"/attacks/?{query}")
    assert sorted(row_ids(response)) == sorted(
        str(pk) for pk in counted.values_list("pk", flat=True)
    )
    assert len(row_ids(response)) == 3


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("outcome=won", "Automated outcome (outcome): Select a valid choice. won is not one of"),
        ("labels=nocolon", "Label (labels): &#x27;nocolon&#x27; is not a label filter"),
        ("timestamp_after=yesterday", "From (timestamp_after): Enter a valid date/time."),
        ("target_hash=abc", "Target (target_hash): &#x27;abc&#x27; is not a hash"),
        ("has_human_verdict=maybe", "Human verdict (has_human_verdict): &#x27;maybe&#x27; is not"),
    ],
)
def test_bad_filter_values_are_a_clear_message_not_a_500(client, memory, query, message):
    memory.attack()
    response = client.get(f"/attacks/?{query}")
    assert response.status_code == 400
    html = response.content.decode()
    assert "Some filters could not be applied" in html
    assert message in html
    assert 'class="objective-link"' not in html  # no rows under a filter that failed
    assert 'id="filters"' in html  # the panel is there to fix it


def test_bad_filter_values_in_an_htmx_request_render_the_message_in_the_partial(client, memory):
    response = client.get("/attacks/?labels=nocolon", headers={"HX-Request": "true"})
    assert response.status_code == 400
    assert response.content.decode().lstrip().startswith('<section id="results"')
    assert b"is not a label filter" in response.content


def test_htmx_requests_get_the_results_partial_and_the_url_to_push(client, memory):
    memory.attack()
    response = client.get(
        "/attacks/?q=&outcome=success&labels=&page=1&sort=-turns", headers={"HX-Request": "true"}
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="results"')
    assert "<html" not in html and 'id="filters"' not in html
    assert response["HX-Push-Url"] == "/attacks/?outcome=success&sort=-turns"
    assert '<input type="hidden" name="sort" value="-turns" form="filters">' in html
    assert "HX-Request" in response["Vary"]


def test_a_history_restore_gets_the_whole_page(client, memory):
    response = client.get(
        "/attacks/",
        headers={"HX-Request": "true", "HX-History-Restore-Request": "true"},
    )
    assert b"<html" in response.content


def test_an_empty_form_submission_redirects_to_the_short_shareable_url(client, memory):
    response = client.get("/attacks/?q=&effective_outcome=success&labels=&attack_class=")
    assert response.status_code == 302
    assert response["Location"] == "/attacks/?effective_outcome=success"
    response = client.get("/attacks/?q=&labels=")
    assert response["Location"] == "/attacks/"


def test_the_filter_panel_keeps_the_state_and_offers_stored_values(client, memory):
    memory.attack()
    memory.attack()
    html = client.get(
        "/attacks/?effective_outcome=failure&labels=operator:op1&attack_class=Gone"
        "&timestamp_after=2026-11-21T12:00:30Z&identifier=" + "A" * 64
    ).content.decode()
    assert '<input type="checkbox" name="effective_outcome" value="failure" checked>' in html
    assert '<input type="checkbox" name="labels" value="operator:op1" checked>' in html
    # Stored values are offered; a value from the URL that is not stored stays selectable.
    assert "<option>CrescendoAttack</option>" in html
    assert "<option>PromptSendingAttack</option>" in html
    assert "<option selected>Gone</option>" in html
    assert '<option value="operator:op2">' in html
    assert "<option>gpt-4o</option>" in html and "<option>Base64Converter</option>" in html
    # Date-time inputs get the value the browser expects, in UTC.
    assert 'name="timestamp_after" value="2026-11-21T12:00:30"' in html
    # The advanced section opens when one of its filters is set, and chips show hashes short.
    assert '<details class="advanced" open>' in html
    assert "AAAAAAAA…" in html


def test_active_filters_are_chips_that_remove_themselves(client, memory):
    memory.attack()
    html = client.get("/attacks/?labels=operator:op1&labels=operation:op_blue&sort=turns")
    html = html.content.decode()
    assert 'href="?labels=operation%3Aop_blue&amp;sort=turns"' in html
    assert 'href="?labels=operator%3Aop1&amp;sort=turns"' in html


def _sort_key(attack: AttackResult, key: str):
    """What a sort key orders by, read from the row (ties are broken by primary key)."""
    return {
        "time": attack.timestamp,
        "turns": attack.executed_turns,
        "duration": attack.execution_time_ms,
        "objective": attack.objective,
        "attack": attack.attack_identifier.class_name,
        "score": attack.last_score.numeric_value,
        "outcome": attack.human_outcome or attack.outcome,
    }[key]


@pytest.mark.parametrize(
    "sort", ["-time", "time", "turns", "-duration", "objective", "attack", "-score", "outcome"]
)
def test_every_column_sorts(client, memory, sort):
    attacks = {str(a.pk): a for a in (memory.attack() for _ in range(6))}
    AttackResult.objects.filter(pk=next(iter(attacks))).update(human_outcome="undetermined")
    attacks = {
        str(a.pk): a for a in AttackResult.objects.select_related("last_score", "attack_identifier")
    }
    ids = row_ids(client.get(f"/attacks/?sort={sort}"))
    key, descending = sort.lstrip("-"), sort.startswith("-")
    values = [_sort_key(attacks[pk], key) for pk in ids]
    assert len(ids) == 6
    assert values == sorted(values, reverse=descending)
    assert len(set(values)) > 1  # the order is not trivially satisfied


def test_an_unknown_sort_is_the_default_newest_first(client, memory):
    attacks = [memory.attack() for _ in range(3)]
    expected = [str(a.pk) for a in reversed(attacks)]
    assert row_ids(client.get("/attacks/?sort=nonsense")) == expected
    assert row_ids(client.get("/attacks/")) == expected


def test_sort_headers_link_to_the_reverse_of_the_current_sort(client, memory):
    memory.attack()
    memory.attack()  # a success
    html = client.get("/attacks/?outcome=success&sort=-turns&page=1").content.decode()
    assert 'id="sort-turns" href="?outcome=success&amp;sort=turns"' in html
    assert 'class="num col-turns" aria-sort="descending"' in html
    assert 'id="sort-time" href="?outcome=success&amp;sort=-time"' in html
    assert 'id="sort-objective" href="?outcome=success&amp;sort=objective"' in html


def test_pages_of_fifty_walk_every_row_once(client, memory):
    attacks = [memory.attack() for _ in range(55)]
    first = client.get("/attacks/")
    second = client.get("/attacks/?page=2")
    assert len(row_ids(first)) == 50 and len(row_ids(second)) == 5
    assert set(row_ids(first)) | set(row_ids(second)) == {str(a.pk) for a in attacks}
    assert b'href="?page=2"' in first.content and b'rel="next"' in first.content
    assert b"showing 51\xe2\x80\x9355" in second.content
    # Past the end is the last page; garbage is the first.
    assert row_ids(client.get("/attacks/?page=99")) == row_ids(second)
    assert row_ids(client.get("/attacks/?page=abc")) == row_ids(first)


def test_past_the_count_cap_the_list_says_more_than_and_can_count_all(client, memory, monkeypatch):
    from memory.review import lists

    monkeypatch.setattr(lists, "COUNT_CAP", 4)
    monkeypatch.setattr(lists, "PER_PAGE", 2)
    attacks = [memory.attack() for _ in range(7)]
    newest = [str(a.pk) for a in reversed(attacks)]
    response = client.get("/attacks/")
    html = response.content.decode()
    assert response["X-Result-Count"] == "4+"
    assert "<strong>4+</strong> attacks" in html
    assert 'href="?count=all"' in html and "count them all" in html
    assert row_ids(response) == newest[:2]
    # Pages past the cap still work, and the last one has no "next".
    page4 = client.get("/attacks/?page=4")
    assert row_ids(page4) == newest[6:]
    assert b'rel="next"' not in page4.content
    assert row_ids(client.get("/attacks/?page=3")) == newest[4:6]
    # Past the end of an uncounted list: an empty page that links back.
    html = client.get("/attacks/?page=9").content.decode()
    assert "No attacks on this page." in html
    # ... however far past: a page number beyond 64 bits never reaches the database.
    for huge in ("9223372036854775807", "8931009913969559207936"):
        response = client.get(f"/attacks/?page={huge}")
        assert response.status_code == 200
        assert "No attacks on this page." in response.content.decode()
    # count=all counts exactly (and the last page is known).
    response = client.get("/attacks/?count=all")
    assert response["X-Result-Count"] == "7"
    assert b'href="?count=all&amp;page=4"' in response.content
    assert b"count them all" not in response.content


def test_an_empty_result_says_so(client, memory):
    memory.attack()
    html = client.get("/attacks/?q=nothing+like+this").content.decode()
    assert "No attacks match these filters." in html
    assert "Clear all" in html


def _attacks(memory, n):
    for i in range(n):
        memory.attack(human_outcome=AttackOutcome.FAILURE if i % 4 == 0 else None)


def _conversations(memory, n):
    for i in range(n):
        conversation = memory.standalone()
        if i % 3 == 0:
            make_related_conversation(
                memory.attack(), conversation, conversation_type=ConversationType.ADVERSARIAL
            )


@pytest.mark.parametrize(
    ("url", "build", "headers", "expected"),
    [
        # Every page: session, user, the user's and their groups' permissions (the view
        # permission check). Then: capped count, the page's keys, its rows (joined), 5
        # filter-panel option queries (identifiers used as attack / target / converter in
        # one; the scorers of the attacks' last scores; labels; harm categories; datasets)
        # and the user's saved views
        ("/attacks/", _attacks, {}, 13),
        # + the label filter's look-up of the label's id
        ("/attacks/?labels=operator:op1&effective_outcome=failure", _attacks, {}, 14),
        # + the target filter's look-up of the model's identifier ids
        ("/attacks/?target_model=llama-3", _attacks, {}, 14),
        # + the scorer filter's look-up of the scorer's identifier ids (the page then reads
        # the attacks' own last scorer)
        ("/attacks/?scorer_class=SelfAskLikertScorer", _attacks, {}, 14),
        ("/attacks/?count=all&sort=-score", _attacks, {}, 13),
        # htmx: no filter panel
        ("/attacks/?outcome=success", _attacks, {"HX-Request": "true"}, 7),
        # + capped count, keys, rows, message counts, first messages, attack
        # links, 3 option queries (targets, labels, harm categories)
        ("/conversations/", _conversations, {}, 13),
        ("/conversations/", _conversations, {"HX-Request": "true"}, 10),
        # + conversation id, objective probe, objective rows, objective count (capped),
        # piece-scan bound, piece text
        ("/search/?q=password", _attacks, {}, 10),
        # an id prefix: + attacks, pieces and conversations by prefix
        ("/search/?q=3f2b8c1e", _attacks, {}, 7),
        # an id: + attack, piece and conversation by id
        ("/search/?q=3f2b8c1e-0000-4000-8000-000000000000", _attacks, {}, 7),
    ],
)
def test_query_counts_do_not_depend_on_the_number_of_rows(
    client, memory, url, build, headers, expected
):
    build(memory, 10)
    few, response = get_counted(client, url, headers=headers)
    shown_few = response["X-Result-Count"]
    build(memory, 40)
    many, response = get_counted(client, url, headers=headers)
    if "q=3f2b" not in url:  # an id matches nothing here: the same two empty answers
        assert int(response["X-Result-Count"].rstrip("+")) > int(shown_few.rstrip("+")) > 0
    assert (few, many) == (expected, expected)


# --- conversation list --------------------------------------------------------------------------


def test_conversations_of_attacks_are_not_listed(client, memory):
    attack = memory.attack()
    solo = memory.standalone()
    related = memory.standalone()
    make_related_conversation(attack, related, conversation_type=ConversationType.PRUNED)
    response = client.get("/conversations/")
    assert row_ids(response, "conversations") == [related.conversation_id, solo.conversation_id]
    html = response.content.decode()
    assert attack.conversation.conversation_id not in html
    # A related conversation says whose it is; the first non-system message is previewed.
    assert "Pruned</span> of <a href=" in html
    assert f'href="/attacks/{attack.pk}/"' in html
    assert "Standalone question" in html and "You are a helpful assistant" not in html
    assert '<td class="num col-messages" data-label="Messages">3</td>' in html


def test_conversation_filters_and_errors(client, memory):
    memory.attack()
    solo = memory.standalone()
    related = memory.standalone()
    make_related_conversation(memory.attack(), related)
    response = client.get("/conversations/?related_type=adversarial")
    assert row_ids(response, "conversations") == [related.conversation_id]
    response = client.get("/conversations/?q=question+2&labels=operator:alice")
    assert row_ids(response, "conversations") == [solo.conversation_id]
    response = client.get("/conversations/?related_type=friend")
    assert response.status_code == 400
    assert b"Related as (related_type): Select a valid choice." in response.content


def test_conversation_list_sorts_by_id_and_start(client, memory):
    first, second = memory.standalone(), memory.standalone()
    assert row_ids(client.get("/conversations/"), "conversations") == [
        second.conversation_id,
        first.conversation_id,
    ]
    assert row_ids(client.get("/conversations/?sort=id"), "conversations") == [
        first.conversation_id,
        second.conversation_id,
    ]


# --- search -------------------------------------------------------------------------------------


def test_search_finds_an_attack_by_id_in_any_spelling(client, memory):
    attack = memory.attack()
    for spelling in (str(attack.pk), str(attack.pk).upper(), attack.pk.hex, f"{{{attack.pk}}}"):
        html = client.get("/search/", {"q": spelling}).content.decode()
        exact = html[html.index("Exact id match") :]
        assert f'href="/attacks/{attack.pk}/"' in exact


def test_search_finds_conversations_and_pieces_by_id(client, memory):
    attack = memory.attack()
    solo = memory.standalone()
    piece = attack.conversation.messages.get(sequence=1).pieces.get()
    html = client.get("/search/", {"q": solo.conversation_id}).content.decode()
    assert f'href="/conversations/{solo.conversation_id}/"' in html
    html = client.get("/search/", {"q": str(piece.pk)}).content.decode()
    assert f'href="/conversations/{attack.conversation.conversation_id}/#piece-{piece.pk}"' in html
    # A conversation id that is a UUID is found from its other spellings too.
    uuid_conversation = make_conversation(str(uuid.uuid4()))
    html = client.get("/search/", {"q": uuid.UUID(uuid_conversation.conversation_id).hex})
    assert f"/conversations/{uuid_conversation.conversation_id}/" in html.content.decode()


def test_search_groups_objectives_and_piece_text(client, memory):
    attacks = [memory.attack() for _ in range(3)]
    memory.standalone()
    response = client.get("/search/", {"q": "NUMBER 2"})
    html = response.content.decode()
    objectives = html[html.index('id="g-objectives"') : html.index('id="g-pieces"')]
    pieces = html[html.index('id="g-pieces"') :]
    assert "reveal the password" not in objectives  # "number 2" is in piece text only
    assert pieces.count('class="hit"') == 2  # "Prompt number 2", "Reply number 2"
    response = client.get("/search/", {"q": "objective 3"})
    objectives = response.content.decode()
    assert f'href="/attacks/{attacks[2].pk}/"' in objectives
    assert response["X-Result-Count"] == "1"


def test_search_caps_each_group_and_links_to_the_full_list(client, memory):
    for _ in range(25):
        memory.attack()
    html = client.get("/search/", {"q": "password"}).content.decode()
    objectives = html[html.index('id="g-objectives"') : html.index('id="g-pieces"')]
    assert objectives.count('class="hit"') == 20
    assert '<span class="count-pill">20 of 25</span>' in objectives
    assert "25 objectives" in html
    assert 'href="/attacks/?q=password"' in objectives


def test_short_text_is_not_scanned(client, memory):
    memory.attack()
    response = client.get("/search/", {"q": "ab"})
    assert b"Text is searched from 3 characters on." in response.content
    assert b'id="g-objectives"' not in response.content


def test_search_escapes_the_query_and_the_hits(client, memory):
    memory.attack(objective="<script>alert(1)</script> payload")
    html = client.get("/search/", {"q": "<script>"}).content.decode()
    assert "<script>alert(1)" not in html
    assert "<mark>&lt;script&gt;</mark>alert(1)&lt;/script&gt; payload" in html


def test_search_finds_ids_by_their_first_digits(client, memory):
    attack = memory.attack()
    piece = attack.conversation.messages.get(sequence=1).pieces.get()
    solo = make_conversation(f"{uuid.uuid4()}")
    for query, wanted in (
        (str(attack.pk)[:8], f'href="/attacks/{attack.pk}/"'),
        (str(attack.pk)[:13].upper(), f'href="/attacks/{attack.pk}/"'),
        (str(piece.pk)[:10].replace("-", ""), f"#piece-{piece.pk}"),
        (solo.conversation_id[:9], f'href="/conversations/{solo.conversation_id}/"'),
    ):
        html = client.get("/search/", {"q": query}).content.decode()
        assert "Ids starting with" in html, query
        assert wanted in html, query


def test_an_id_prefix_matches_only_ids_that_start_with_it(client, memory):
    attacks = [memory.attack() for _ in range(5)]
    target = attacks[2]
    html = client.get("/search/", {"q": target.pk.hex[:12]}).content.decode()
    found = set(re.findall(r'href="/attacks/([0-9a-f-]{36})/"', html))
    assert found == {str(a.pk) for a in attacks if a.pk.hex.startswith(target.pk.hex[:12])}


def test_a_match_deep_in_a_long_text_is_shown_marked(client, memory):
    memory.attack(objective="filler " * 100 + "the needle is here " + "tail " * 50)
    html = client.get("/search/", {"q": "NEEDLE"}).content.decode()
    objectives = html[html.index('id="g-objectives"') : html.index('id="g-pieces"')]
    assert "…" in objectives
    assert "the <mark>needle</mark> is here" in objectives


def test_scorer_choices_follow_every_write(client, memory):
    """The scorer choices (one query, read from the attacks' own last scorer) follow every
    write that changes them: a new attack, a last score changed, a last score removed by
    deleting its score, an attack deleted."""
    from memory.storage.selectors import attack_filter_options

    first = memory.attack()  # SubStringScorer
    queries, response = get_counted(client, "/attacks/")
    assert queries == 13
    assert b"<option>SubStringScorer</option>" in response.content
    assert attack_filter_options()["scorer_classes"] == ["SubStringScorer"]
    second = memory.attack()  # SelfAskLikertScorer
    assert attack_filter_options()["scorer_classes"] == ["SelfAskLikertScorer", "SubStringScorer"]
    # A new last score by another scorer, saved like the writer saves (updated_at set).
    reply = MessagePiece.objects.filter(message__conversation=second.conversation).last()
    refusal = make_identifier("SelfAskRefusalScorer")
    rescored = make_score(reply, "true", scorer_class_identifier=refusal)
    second.last_score, second.last_scorer = rescored, refusal
    second.save()
    assert attack_filter_options()["scorer_classes"] == ["SelfAskRefusalScorer", "SubStringScorer"]
    rescored.delete()  # SET NULL on the attack: no save, no updated_at
    assert attack_filter_options()["scorer_classes"] == ["SubStringScorer"]
    first.delete()
    assert attack_filter_options()["scorer_classes"] == []
