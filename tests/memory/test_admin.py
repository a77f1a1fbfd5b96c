"""The memory admin: view-only, constant query counts, key-first search, bounded counts."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from memory.models import (
    AttackLabel,
    AttackResult,
    ComponentIdentifier,
    ComponentIdentifierChild,
    Conversation,
    HarmCategory,
    HumanVerdict,
    ImportJob,
    Label,
    MediaBlob,
    MediaLocation,
    Message,
    MessagePiece,
    PieceConverter,
    PushSource,
    PyritRecord,
    QueueResolution,
    RelatedConversation,
    ReviewQueue,
    ScenarioResult,
    ScorableContent,
    Score,
)
from redteam.core.pagination import EstimatedCountPaginator
from tests.factories import (
    make_attack,
    make_conversation,
    make_harm_category,
    make_identifier,
    make_identifier_child,
    make_label,
    make_media_blob,
    make_message,
    make_piece,
    make_piece_converter,
    make_related_conversation,
    make_scenario,
    make_scorable_content,
    make_score,
)
from tests.queries import captured_sql, count_queries


def admin_url(model: type, view: str, *args: object) -> str:
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=args)


def new_piece(text: str = "hello", **fields) -> MessagePiece:
    """A piece in a fresh one-message conversation."""
    return make_piece(make_message(make_conversation(), 0), text, **fields)


# One builder per registered model: each call stores one more row of that model (plus what it
# needs), with every foreign key the list shows filled in, so a per-row query would show.
BUILDERS: dict[type, Callable[[], object]] = {
    Conversation: lambda: make_conversation(target_identifier=make_identifier()),
    Message: lambda: make_message(make_conversation(), 0),
    MessagePiece: lambda: new_piece(),
    PieceConverter: lambda: make_piece_converter(new_piece()),
    Score: lambda: make_score(new_piece()),
    ScorableContent: lambda: make_scorable_content(),
    AttackResult: lambda: make_attack(attack_identifier=make_identifier("PromptSendingAttack")),
    RelatedConversation: lambda: make_related_conversation(make_attack()),
    AttackLabel: lambda: AttackLabel.objects.create(attackresult=make_attack(), label=make_label()),
    ScenarioResult: lambda: make_scenario(),
    ComponentIdentifier: lambda: make_identifier(),
    ComponentIdentifierChild: lambda: make_identifier_child(make_identifier("SelfAskScorer")),
    Label: lambda: make_label(),
    HarmCategory: lambda: make_harm_category(),
    MediaBlob: lambda: make_media_blob(),
    MediaLocation: lambda: MediaLocation.objects.create(
        blob=make_media_blob(), location="/d/prompt-memory-entries/images/1.png", key="1.png"
    ),
    HumanVerdict: lambda: HumanVerdict.objects.create(
        attack_result=make_attack(), outcome="success", reason="it complied", reviewer_name="rita"
    ),
    ImportJob: lambda: ImportJob.objects.create(source_name="memory.db", size=1024),
    PushSource: lambda: PushSource.objects.create(
        host="laptop",
        database=f"/home/a/{uuid.uuid4()}.db",
        key=uuid.uuid4().hex,
        last_push_at=timezone.now(),
    ),
    PyritRecord: lambda: PyritRecord.objects.create(
        table="FindingEntries", pk_text=str(uuid.uuid4()), row={"title": "t"}
    ),
    QueueResolution: lambda: new_resolution(),
}


def new_resolution() -> QueueResolution:
    """A resolution row (its queue and verdict written directly: the admin only reads it)."""
    attack = make_attack()
    queue = ReviewQueue.objects.create(name=f"queue {uuid.uuid4()}")
    verdict = HumanVerdict.objects.create(
        attack_result=attack, outcome="failure", reason="settled", reviewer_name="lena"
    )
    return QueueResolution.objects.create(queue=queue, attack_result=attack, verdict=verdict)


#: Models the admin edits (review work, not memory): tested on their own.
EDITABLE = {ReviewQueue}

# Every memory changelist costs the same four queries, whatever the number of rows:
#   1. session, 2. user,
#   3. bounded count: SELECT COUNT(*) FROM (SELECT … LIMIT 10001),
#   4. the page's rows, with list_select_related joins.
# No list filter queries the database (choices, booleans and dates only) and no column queries
# per row. Identical on SQLite and PostgreSQL.
CHANGELIST_QUERIES = 4


def test_every_memory_model_is_registered():
    from django.apps import apps
    from django.contrib import admin

    # The history tables are read through each model's "History" page, not an admin of their own.
    models = {
        model
        for model in apps.get_app_config("memory").get_models()
        if not model.__name__.startswith("Historical")
    }
    # Operations, findings, reports and the framework crosswalk have their own admin
    # (memory/findings/admin.py), and so have webhooks (memory/findings/webhooks/admin.py,
    # tests/findings/test_webhook_admin.py).
    own_admin = ("memory.models.findings", "memory.models.crosswalk", "memory.models.webhooks")
    findings = {m for m in models if m.__module__ in own_admin}
    # The dashboards' rollups are counts the database triggers keep, not memory: no admin
    # (``manage.py dashboard_rollups`` checks and rebuilds them).
    rollups = {m for m in models if m.__module__ == "memory.models.rollups"}
    assert len(rollups) == 19  # nine for the whole memory, ten per label
    assert models - findings - rollups == set(BUILDERS) | EDITABLE
    assert all(admin.site.is_registered(model) for model in models - rollups)
    assert not any(admin.site.is_registered(model) for model in rollups)


@pytest.mark.django_db
def test_admin_index_lists_memory_models(admin_client):
    response = admin_client.get(reverse("admin:index"))
    assert response.status_code == 200
    assert admin_url(MessagePiece, "changelist") in response.content.decode()
    # View-only: the index offers no "Add" link for evidence.
    assert admin_url(MessagePiece, "add") not in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("model", BUILDERS, ids=lambda model: model._meta.model_name)
def test_changelist_query_count_does_not_grow_with_rows(
    admin_client, django_assert_num_queries, model
):
    url = admin_url(model, "changelist")
    BUILDERS[model]()
    with django_assert_num_queries(CHANGELIST_QUERIES):
        response = admin_client.get(url)
    assert response.status_code == 200
    assert response.context["cl"].result_count == model._default_manager.count()

    for _ in range(4):
        BUILDERS[model]()
    with django_assert_num_queries(CHANGELIST_QUERIES):
        response = admin_client.get(url)
    assert response.status_code == 200
    rows = model._default_manager.count()
    assert rows >= 5
    assert response.context["cl"].result_count == rows
    assert len(response.context["cl"].result_list) == rows


@pytest.mark.django_db
@pytest.mark.parametrize("model", BUILDERS, ids=lambda model: model._meta.model_name)
def test_change_page_shows_an_object(admin_client, model):
    obj = BUILDERS[model]()
    response = admin_client.get(admin_url(model, "change", obj.pk))
    assert response.status_code == 200
    if model is MessagePiece:
        # A superuser may correct a piece's values, with a reason (piece_correct).
        assert b'name="correction_reason"' in response.content
        return
    # View-only: no save button.
    assert b'name="_save"' not in response.content


@pytest.mark.django_db
def test_piece_page_shows_converters_scores_and_links(admin_client):
    piece = new_piece("secret <b>prompt</b>", labels={"op": "<script>x</script>"})
    converter = make_piece_converter(piece, make_identifier("ROT13Converter"))
    score = make_score(piece, value="true", scorer_class_identifier=make_identifier("LikertScorer"))
    response = admin_client.get(admin_url(MessagePiece, "change", piece.pk))
    html = response.content.decode()
    assert "ROT13Converter" in html
    assert admin_url(ComponentIdentifier, "change", converter.identifier_id) in html
    assert admin_url(Score, "change", score.pk) in html
    assert "LikertScorer" in html
    assert admin_url(Conversation, "change", piece.message.conversation_id) in html
    assert admin_url(Message, "change", piece.message_id) in html
    # Untrusted JSON is escaped, never rendered as markup.
    assert "<script>x</script>" not in html
    assert "&lt;script&gt;x&lt;/script&gt;" in html


@pytest.mark.django_db
def test_scores_of_a_duplicated_piece_show_on_the_copy(admin_client):
    original = new_piece("original")
    copy = new_piece("copy", original_prompt_id=original.original_prompt_id)
    score = make_score(original)
    response = admin_client.get(admin_url(MessagePiece, "change", copy.pk))
    assert admin_url(Score, "change", score.pk) in response.content.decode()


@pytest.mark.django_db
def test_attack_page_shows_related_conversations(admin_client):
    attack = make_attack()
    related = make_related_conversation(attack, make_conversation("adversarial-chat-1"))
    response = admin_client.get(admin_url(AttackResult, "change", attack.pk))
    html = response.content.decode()
    assert "adversarial-chat-1" in html
    assert admin_url(Conversation, "change", related.conversation_id) in html


@pytest.mark.django_db
def test_identifier_page_pretty_prints_escaped_json_and_children(admin_client):
    parent = make_identifier("PromptSendingAttack", system_prompt="<img src=x onerror=alert(1)>")
    parent.children = {"objective_target": "ab" * 32}
    parent.save()
    edge = make_identifier_child(parent, make_identifier("OpenAIChatTarget"), "objective_target")
    response = admin_client.get(admin_url(ComponentIdentifier, "change", parent.pk))
    html = response.content.decode()
    assert "<pre" in html
    assert "&quot;system_prompt&quot;: &quot;&lt;img src=x onerror=alert(1)&gt;&quot;" in html
    assert "<img src=x" not in html
    assert "objective_target" in html
    assert admin_url(ComponentIdentifier, "change", edge.child_id) in html


@pytest.mark.django_db
@pytest.mark.parametrize("model", BUILDERS, ids=lambda model: model._meta.model_name)
def test_memory_is_read_only(admin_client, model):
    # Even a superuser cannot add or change evidence.
    assert admin_client.get(admin_url(model, "add")).status_code == 403
    assert admin_client.post(admin_url(model, "add"), {}).status_code == 403
    obj = BUILDERS[model]()
    if model is MessagePiece:
        # Corrections need a reason: an empty post changes nothing (the form shows errors).
        response = admin_client.post(admin_url(model, "change", obj.pk), {})
        assert response.status_code == 200
        assert model.objects.get(pk=obj.pk).converted_value == obj.converted_value
        return
    assert admin_client.post(admin_url(model, "change", obj.pk), {}).status_code == 403


@pytest.mark.django_db
def test_memory_add_post_changes_nothing(admin_client):
    response = admin_client.post(
        admin_url(Conversation, "add"), {"conversation_id": "forged", "pyrit_version": "1"}
    )
    assert response.status_code == 403
    assert not Conversation.objects.exists()


@pytest.mark.django_db
def test_superuser_may_delete_evidence(admin_client):
    piece = new_piece()
    make_piece_converter(piece)
    response = admin_client.post(
        admin_url(MessagePiece, "delete", piece.pk), {"post": "yes", "reason": "a test piece"}
    )
    assert response.status_code == 302
    assert not MessagePiece.objects.filter(pk=piece.pk).exists()
    assert not PieceConverter.objects.exists()


@pytest.mark.django_db
def test_lookup_tables_and_media_are_never_deleted(admin_client):
    label = make_label()
    assert admin_client.get(admin_url(Label, "delete", label.pk)).status_code == 403
    assert Label.objects.filter(pk=label.pk).exists()


@pytest.mark.django_db
def test_staff_without_superuser_cannot_delete(client, member):
    from django.contrib.auth.models import Permission

    staff = member(username="staff", is_staff=True)
    staff.user_permissions.set(
        Permission.objects.filter(codename__in=["view_messagepiece", "delete_messagepiece"])
    )
    client.force_login(staff)
    piece = new_piece()
    assert client.get(admin_url(MessagePiece, "changelist")).status_code == 200
    assert client.get(admin_url(MessagePiece, "change", piece.pk)).status_code == 200
    assert client.post(admin_url(MessagePiece, "delete", piece.pk), {"post": "yes"}).status_code
    assert MessagePiece.objects.filter(pk=piece.pk).exists()


@pytest.mark.django_db
def test_non_staff_user_is_sent_to_login(client, reader):
    client.force_login(reader)
    url = admin_url(MessagePiece, "changelist")
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


@pytest.mark.django_db
def test_anonymous_user_is_sent_to_login(client):
    response = client.get(admin_url(AttackResult, "changelist"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


# --- Search -------------------------------------------------------------------------------------


def changelist_rows(client, model: type, **params) -> list:
    response = client.get(admin_url(model, "changelist"), params)
    assert response.status_code == 200
    return list(response.context["cl"].result_list)


@pytest.mark.django_db
def test_piece_search_by_exact_uuid(admin_client):
    wanted = new_piece("needle")
    new_piece("haystack")
    assert changelist_rows(admin_client, MessagePiece, q=str(wanted.pk)) == [wanted]


@pytest.mark.django_db
def test_piece_search_by_original_prompt_id_finds_duplicates(admin_client):
    original = new_piece("original")
    copy = new_piece("copy", original_prompt_id=original.pk)
    new_piece("other")
    rows = changelist_rows(admin_client, MessagePiece, q=str(original.pk).upper())
    assert set(rows) == {original, copy}


@pytest.mark.django_db
def test_piece_uuid_search_uses_key_columns_only(admin_client):
    piece = new_piece()
    queries, _ = captured_sql(changelist_rows, admin_client, MessagePiece, q=str(piece.pk))
    sql = " ".join(queries).lower()
    # No LIKE scan of the value columns next to the indexed id lookups.
    assert "like" not in sql


@pytest.mark.django_db
def test_piece_search_by_text(admin_client):
    wanted = new_piece("the Needle in the stack")
    new_piece("haystack")
    assert changelist_rows(admin_client, MessagePiece, q="needle") == [wanted]


@pytest.mark.django_db
def test_identifier_search_by_hash_prefix(admin_client):
    wanted = make_identifier("OpenAIChatTarget")
    make_identifier("OpenAIChatTarget")
    rows = changelist_rows(admin_client, ComponentIdentifier, q=wanted.hash[:10].upper())
    assert rows == [wanted]


@pytest.mark.django_db
def test_identifier_search_by_class_name(admin_client):
    wanted = make_identifier("Base64Converter")
    make_identifier("OpenAIChatTarget")
    assert changelist_rows(admin_client, ComponentIdentifier, q="base64") == [wanted]


@pytest.mark.django_db
def test_attack_search_by_id_conversation_id_and_objective(admin_client):
    conversation = make_conversation(str(uuid.uuid4()))
    wanted = make_attack(conversation, objective="Steal the cookie recipe")
    make_attack(objective="Something else")
    assert changelist_rows(admin_client, AttackResult, q=str(wanted.pk)) == [wanted]
    assert changelist_rows(admin_client, AttackResult, q=conversation.conversation_id) == [wanted]
    assert changelist_rows(admin_client, AttackResult, q="cookie") == [wanted]


@pytest.mark.django_db
def test_conversation_and_message_search_by_conversation_id(admin_client):
    conversation = make_conversation("conv-42")
    message = make_message(conversation, 0)
    make_message(make_conversation("conv-43"), 0)
    assert changelist_rows(admin_client, Conversation, q="conv-42") == [conversation]
    assert changelist_rows(admin_client, Message, q="conv-42") == [message]


@pytest.mark.django_db
def test_score_search_by_id_and_piece_id(admin_client):
    piece = new_piece()
    wanted = make_score(piece)
    make_score(new_piece())
    assert changelist_rows(admin_client, Score, q=str(wanted.pk)) == [wanted]
    assert changelist_rows(admin_client, Score, q=str(piece.original_prompt_id)) == [wanted]


@pytest.mark.django_db
def test_conversation_page_links_filter_the_piece_list(admin_client):
    conversation = make_conversation()
    wanted = make_piece(make_message(conversation, 0))
    new_piece()
    rows = changelist_rows(
        admin_client, MessagePiece, message__conversation__id__exact=conversation.pk
    )
    assert rows == [wanted]


# --- Bounded counts -----------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("params", [{}, {"response_error__exact": "none"}, {"q": "hello"}])
def test_piece_changelist_never_counts_the_whole_table(admin_client, params):
    new_piece()
    queries, response = captured_sql(
        admin_client.get, admin_url(MessagePiece, "changelist"), params
    )
    assert response.status_code == 200
    counts = [sql for sql in queries if "count(" in sql.lower()]
    assert len(counts) == 1
    # The only count is over a LIMITed subquery: the database stops after 10001 rows.
    assert "limit 10001" in counts[0].lower()


class TinyPaginator(EstimatedCountPaginator):
    count_limit = 3


@pytest.mark.django_db
def test_paginator_is_exact_below_the_limit():
    for _ in range(3):
        new_piece()
    paginator = TinyPaginator(MessagePiece.objects.order_by("pk"), 2)
    assert paginator.count == 3
    assert not paginator.count_is_estimate
    assert paginator.num_pages == 2


@pytest.mark.django_db
def test_paginator_above_the_limit_is_a_lower_bound_and_keeps_every_page_reachable():
    for _ in range(7):
        new_piece()
    queryset = MessagePiece.objects.filter(response_error="none").order_by("pk")
    paginator = TinyPaginator(queryset, 2)
    queries, count = count_queries(lambda: paginator.count)
    assert count == 4  # counted up to count_limit + 1, then stopped
    assert queries == 1
    assert paginator.count_is_estimate
    # Pages past the lower bound still show rows; past the real end they are empty.
    assert len(paginator.page(4).object_list) == 1
    assert list(paginator.page(9).object_list) == []


@pytest.mark.django_db
def test_paginator_uses_the_table_estimate_when_unfiltered():
    for _ in range(5):
        new_piece()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE memory_messagepiece")
    else:
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    paginator = TinyPaginator(MessagePiece.objects.order_by("pk"), 2)
    assert paginator.count_is_estimate
    assert paginator.count == 5  # the planner's figure, exact right after ANALYZE


@pytest.mark.django_db
def test_pyrit_records_are_found_by_table_name_and_never_changed(admin_client):
    finding = PyritRecord.objects.create(
        table="FindingEntries", pk_text="f1", row={"title": "bypass", "note": "a\x00b"}
    )
    PyritRecord.objects.create(table="OperationEntries", pk_text="o1", row={"name": "op"})

    response = admin_client.get(admin_url(PyritRecord, "changelist"), {"q": "findingentries"})

    assert [r.pk for r in response.context["cl"].result_list] == [finding.pk]
    detail = admin_client.get(admin_url(PyritRecord, "change", finding.pk))
    assert detail.status_code == 200
    assert "bypass" in detail.content.decode()
    assert admin_url(PyritRecord, "add") not in detail.content.decode()
    assert PyritRecord.objects.get(pk=finding.pk).row["note"] == "a\x00b"


# --- review queues (editable) ---------------------------------------------------------------


@pytest.mark.django_db
def test_a_lead_creates_and_changes_a_queue_in_the_admin_through_the_service(member):
    from django.test import Client

    lead = member("lead", username="lena")
    ann = member("reviewer", username="ann")
    viewer = member("viewer", username="vera")
    client = Client()
    client.force_login(lead)
    url = admin_url(ReviewQueue, "add")
    assert client.get(url).status_code == 200
    refused = client.post(
        url,
        {
            "name": "Admin queue",
            "filter_query": "effective_outcome=success",
            "required_reviews": "2",
            "assignees": [ann.pk],
        },
    )
    assert refused.status_code == 200  # the form again, with the service's problems
    html = refused.content.decode()
    assert "a queue cannot filter on human verdicts" in html
    assert "2 reviews per attack need at least as many assignees, not 1" in html
    # A viewer is not offered: she cannot record verdicts.
    not_offered = client.post(url, {"name": "x", "required_reviews": "1", "assignees": [viewer.pk]})
    assert "Select a valid choice" in not_offered.content.decode()
    response = client.post(
        url,
        {
            "name": "Admin queue",
            "filter_query": "?outcome=success",
            "required_reviews": "1",
            "assignees": [ann.pk],
        },
    )
    assert response.status_code == 302
    queue = ReviewQueue.objects.get()
    assert (queue.filter_query, queue.created_by, list(queue.assignees.all())) == (
        "outcome=success",
        lead,
        [ann],
    )
    # A reviewer sees queues in the admin but may not add one.
    reviewer = Client()
    reviewer.force_login(ann)
    assert reviewer.get(admin_url(ReviewQueue, "changelist")).status_code == 200
    assert reviewer.get(url).status_code == 403


@pytest.mark.django_db
def test_the_queue_changelist_costs_the_same_queries_whatever_the_number_of_queues(
    admin_client, django_assert_max_num_queries
):
    from django.test.utils import CaptureQueriesContext

    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert admin_client.get(admin_url(ReviewQueue, "changelist")).status_code == 200
        return len(queries)

    ReviewQueue.objects.create(name="one")
    few = count()
    for index in range(10):
        ReviewQueue.objects.create(name=f"queue {index}")
    assert count() == few
