"""The dashboard rollups stay exact after every kind of write.

After each write below, two things must hold: ``dashboard_rollups --check`` finds no
difference between the rollup tables and a recount of the raw tables, and every widget of
the unfiltered dashboard read from the rollups equals the same widget grouped from the raw
tables (``Scope(rollups=False)``), for both outcome sources.
"""

from __future__ import annotations

import dataclasses
import zoneinfo
from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.db.models import F
from django.utils import timezone

from memory.dashboards.widgets import WIDGETS
from memory.models import (
    AttackResult,
    ComponentIdentifier,
    Conversation,
    ConverterRollup,
    CountRollup,
    HarmCategory,
    Label,
    LabelCountRollup,
    LabelFactRollup,
    LabelPairRollup,
    LabelScoreRollup,
    MessagePiece,
    RelatedConversation,
    Score,
    rollup_sql,
)
from memory.storage import aggregates as ag
from memory.storage.rollups import rollups_check, rollups_rebuild
from memory.storage.services import human_verdict_record
from memory.transfer.importers.service import import_pyrit_db
from memory.transfer.ingest.service import ingest
from tests.dashboards.conftest import dash
from tests.importers.conftest import DB_110, copy_fixture
from tests.queries import captured_sql


def assert_exact() -> None:
    """No difference from a recount, and every widget of the unfiltered dashboard and of the
    dashboard filtered by each label (and by a label no attack carries) equal to its raw
    grouping."""
    assert rollups_check() == []
    scopes = [""] + [
        urlencode({"labels": f"{key}:{value}"})
        for key, value in Label.objects.values_list("key", "value")
    ]
    scopes.append(urlencode({"labels": "no-such:label"}))
    for query in scopes:
        for source in ("automated", "human"):
            request = dash(f"{query}&source={source}")
            # A memo of its own: the rollup build's cached facts must not serve the raw one.
            raw = dataclasses.replace(request.scope, rollups=False, memo={})
            assert request.scope.counted and not raw.counted
            raw_request = dataclasses.replace(request)
            raw_request.__dict__["scope"] = raw
            for widget in WIDGETS:
                assert widget.build(request) == widget.build(raw_request), (
                    query,
                    source,
                    widget.name,
                )


@pytest.fixture
def memory(pyrit_memory):
    assert AttackResult.objects.count() == 24
    # The fixture's attacks carry labels, so the label-scoped rollups count something.
    assert LabelFactRollup.objects.filter(n__gt=0).count() > 1
    assert LabelPairRollup.objects.filter(n__gt=0).count() > 1
    assert LabelScoreRollup.objects.filter(n__gt=0).count() > 1
    assert_exact()
    # The fixture's attacks used converters, and its conversations are counted.
    assert ConverterRollup.objects.filter(n__gt=0).exists()
    assert CountRollup.objects.get(name="conversations").n == Conversation.objects.count()
    return pyrit_memory


def _converted_attack() -> AttackResult:
    links = Conversation.converter_index.through.objects
    return AttackResult.objects.filter(
        conversation_id__in=links.values("conversation_id")
    ).order_by("pk")[0]


def test_ingest_and_resend(memory):
    again = ingest(payload=memory.export, partial=False)
    assert not again.errors
    assert_exact()


def test_outcome_update_and_human_verdicts(memory):
    attacks = list(AttackResult.objects.order_by("pk")[:4])
    attacks[0].outcome = "success" if attacks[0].outcome != "success" else "failure"
    attacks[0].save()
    reviewer = User.objects.create_user("rollup-reviewer")
    human_verdict_record(
        attack_result=attacks[1], outcome="success", reason="looked", reviewer=reviewer
    )
    human_verdict_record(
        attack_result=attacks[1], outcome="failure", reason="again", reviewer=reviewer
    )
    assert_exact()
    # One statement over many rows (PostgreSQL runs its row triggers at the statement's end).
    AttackResult.objects.filter(pk__in=[a.pk for a in attacks]).update(
        outcome="error", human_outcome="success"
    )
    assert_exact()


def test_deletes(memory):
    scored = AttackResult.objects.filter(last_score__isnull=False).order_by("pk")
    Score.objects.filter(pk=scored[0].last_score_id).delete()  # the attack's link set null
    assert_exact()
    AttackResult.objects.filter(pk=scored[1].pk).delete()  # its label and harm links cascade
    assert_exact()
    Score.objects.filter(pk__in=Score.objects.order_by("pk").values("pk")[:5]).delete()
    assert_exact()
    AttackResult.objects.all().delete()
    assert_exact()
    assert ag.headline(dash().scope).counts.attacks == 0


def test_conversation_target_and_links(memory):
    attack = AttackResult.objects.order_by("pk").first()
    other = (
        Conversation.objects.exclude(target_identifier=None)
        .exclude(target_identifier_id=attack.conversation.target_identifier_id)
        .first()
    )
    Conversation.objects.filter(pk=attack.conversation_id).update(
        target_identifier=other.target_identifier
    )
    assert_exact()
    # An identifier's class name (the framework breakdowns count per class).
    ComponentIdentifier.objects.filter(pk=attack.attack_identifier_id).update(
        class_name="RenamedAttack"
    )
    assert_exact()
    label = Label.objects.create(key="operation", value="op_rollup")
    harm = HarmCategory.objects.create(name="rollup-harm")
    attacks = list(AttackResult.objects.order_by("pk")[:6])
    for a in attacks:
        a.label_index.add(label)
    # Several harm links of one attack in one statement, including its first.
    bare = [a for a in AttackResult.objects.all() if not a.harm_category_index.exists()]
    extra = HarmCategory.objects.create(name="rollup-harm-2")
    if bare:
        bare[0].harm_category_index.add(harm, extra)
    for a in attacks:
        a.harm_category_index.add(harm)
    assert_exact()
    through = AttackResult.harm_category_index.through
    through.objects.filter(harmcategory=harm).delete()  # one statement, many rows
    AttackResult.label_index.through.objects.filter(label=label).delete()
    assert_exact()
    through.objects.all().delete()
    assert_exact()


def test_label_volume(memory):
    """A label's conversations, pieces and scores follow its attacks' main and related
    conversations, their scores and piece counts, and the labels coming and going."""
    label = Label.objects.create(key="operation", value="op_volume")
    attacks = list(AttackResult.objects.order_by("pk")[:5])
    # A value with U+FFFE, which a label's column stores escaped: looked up as stored.
    attacks[0].label_index.add(Label.objects.create(key="team", value="red\ufffeblue"))
    # A value as long as PyRIT writes them: found through its hash, by the rollups too.
    attacks[1].label_index.add(Label.objects.create(key="note", value="n" * 4_003 + "\x00"))
    AttackResult.label_index.through.objects.bulk_create(
        [AttackResult.label_index.through(attackresult=a, label=label) for a in attacks]
    )  # one statement, many links
    assert LabelCountRollup.objects.get(scope=label.pk, name="conversations").n >= 1
    assert_exact()
    outside = Conversation.objects.exclude(pk__in=[a.conversation_id for a in attacks]).order_by(
        "pk"
    )
    # A related conversation joins the scope, a second reason for a conversation already in it
    # does not count it twice, and leaving again.
    related = RelatedConversation.objects.create(
        attack_result=attacks[0], conversation=outside[0], conversation_type="pruned"
    )
    RelatedConversation.objects.create(
        attack_result=attacks[1],
        conversation_id=attacks[2].conversation_id,
        conversation_type="adversarial",
    )
    assert_exact()
    RelatedConversation.objects.filter(pk=related.pk).update(conversation=outside[1])
    assert_exact()
    # Scores moving between conversations, changing value; pieces counted in and out.
    score = Score.objects.filter(conversation__attack_results__in=attacks).order_by("pk")[0]
    Score.objects.filter(pk=score.pk).update(conversation=outside[2])
    assert_exact()
    Score.objects.filter(pk=score.pk).update(conversation_id=attacks[3].conversation_id)
    assert_exact()
    Score.objects.filter(pk=score.pk).update(numeric_value=0.55, score_type="float_scale")
    assert_exact()
    Conversation.objects.filter(pk=attacks[1].conversation_id).update(
        piece_count=F("piece_count") + 7
    )
    assert_exact()
    # An attack moving to another conversation, a link going, a related row going.
    AttackResult.objects.filter(pk=attacks[4].pk).update(conversation=outside[3])
    assert_exact()
    # Raw updates of a link and of a related row (no writer of Redline makes them).
    through = AttackResult.label_index.through
    other = Label.objects.create(key="operation", value="op_volume_2")
    through.objects.filter(attackresult=attacks[2], label=label).update(label=other)
    assert_exact()
    through.objects.filter(attackresult=attacks[2], label=other).update(attackresult=attacks[3])
    assert_exact()
    RelatedConversation.objects.filter(attack_result=attacks[1]).update(attack_result=attacks[4])
    assert_exact()
    attacks[0].label_index.remove(label)
    assert_exact()
    RelatedConversation.objects.filter(attack_result__in=attacks).delete()
    assert_exact()
    AttackResult.objects.filter(pk__in=[a.pk for a in attacks[:2]]).delete()
    assert_exact()


def test_converter_links_and_counts(memory):
    """Converter sets change with the links of a conversation (one or many per statement),
    with an attack's conversation, outcome and human verdict; conversations and pieces are
    counted as they come and go."""
    through = Conversation.converter_index.through
    attack = _converted_attack()
    bare = (
        AttackResult.objects.exclude(conversation_id__in=through.objects.values("conversation_id"))
        .order_by("pk")
        .first()
    )
    converters = list(
        ComponentIdentifier.objects.filter(pk__in=through.objects.values("componentidentifier_id"))
    )
    others = list(ComponentIdentifier.objects.exclude(pk__in=[c.pk for c in converters])[:3])
    # A new link on a converted conversation, two at once on a bare one (its first).
    attack.conversation.converter_index.add(others[0])
    if bare is not None:
        bare.conversation.converter_index.add(others[1], others[2])
    assert_exact()
    # Another attack on a converted conversation, then the attack moving conversations.
    AttackResult.objects.filter(pk=attack.pk).update(outcome="undetermined")
    assert_exact()
    if bare is not None:
        AttackResult.objects.filter(pk=bare.pk).update(conversation_id=attack.conversation_id)
        assert_exact()
    # A link moved to another conversation (an update of the link table).
    link = through.objects.filter(conversation_id=attack.conversation_id).order_by("pk")[0]
    target = Conversation.objects.exclude(pk=attack.conversation_id).order_by("pk")[0]
    through.objects.filter(pk=link.pk).update(conversation_id=target.pk)
    assert_exact()
    # One statement removing one link of a conversation, then every link.
    through.objects.filter(pk=through.objects.order_by("pk")[0].pk).delete()
    assert_exact()
    through.objects.all().delete()
    assert not ConverterRollup.objects.filter(n__gt=0).exists()
    assert_exact()
    # Pieces and conversations, added and deleted (the pieces cascade).
    piece = MessagePiece.objects.order_by("pk")[0]
    MessagePiece.objects.filter(pk=piece.pk).delete()
    assert_exact()
    extra = Conversation.objects.create(conversation_id="rollup-extra")
    assert_exact()
    Conversation.objects.filter(pk=extra.pk).delete()
    assert_exact()
    volume = ag.volume(dash().scope)
    assert volume.conversations == Conversation.objects.count()
    assert volume.pieces == MessagePiece.objects.count()
    assert volume.scores == Score.objects.count()


def test_migration_helpers(memory):
    """A migration makes the triggers of the rollups its state has: 0022's state has the first
    seven, 0025's two more; going back over 0025 drops those two's triggers only."""
    from django.apps import apps as live
    from django.db.migrations.loader import MigrationLoader

    loader = MigrationLoader(connection)
    state = loader.project_state(("memory", "0022_dashboard_rollups"))
    assert rollup_sql.rollups_at(state.apps) == rollup_sql.FIRST
    state = loader.project_state(("memory", "0025_count_and_converter_rollups"))
    assert rollup_sql.rollups_at(state.apps) == (
        *rollup_sql.FIRST,
        rollup_sql.COUNT,
        rollup_sql.CONVERTER,
    )
    assert rollup_sql.rollups_at(live) == rollup_sql.ROLLUPS
    forwards, backwards = rollup_sql.triggers_add(rollup_sql.COUNT, rollup_sql.CONVERTER)

    class Editor:
        pass

    editor = Editor()
    editor.connection = connection
    backwards(live, editor)
    missing = {p.split()[1] for p in rollups_check() if p.startswith("trigger ")}
    assert missing == set(
        rollup_sql.triggers(connection.vendor, (rollup_sql.COUNT, rollup_sql.CONVERTER))
    )
    forwards(live, editor)
    assert_exact()


def test_import_both_write_paths(db, tmp_path):
    path = copy_fixture(DB_110, tmp_path)
    import_pyrit_db(path=path, write_path="direct")
    assert AttackResult.objects.exists()
    assert_exact()
    import_pyrit_db(path=path, write_path="direct")  # re-import
    assert_exact()
    AttackResult.objects.all().delete()
    import_pyrit_db(path=path, write_path="service")
    assert_exact()


def test_rebuild_and_check_command(memory, capsys):
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memory_rollup_fact SET n = n + 1")
        cursor.execute("DELETE FROM memory_rollup_harm")
        cursor.execute("UPDATE memory_rollup_count SET n = n + 1")
        cursor.execute("DELETE FROM memory_rollup_converter")
    problems = rollups_check()
    for table in ("fact", "harm", "count", "converter"):
        assert any(f"memory_rollup_{table} " in p for p in problems), table
    with pytest.raises(Exception, match="difference"):
        call_command("dashboard_rollups", "--check")
    call_command("dashboard_rollups", "--rebuild")
    call_command("dashboard_rollups")
    assert "rollups exact" in capsys.readouterr().out
    assert_exact()
    with connection.cursor() as cursor:
        for statement in rollup_sql.drop_sql(connection.vendor):
            cursor.execute(statement)
    assert any("trigger" in p for p in rollups_check())
    rollups_rebuild()
    assert rollups_check() == []


@pytest.mark.parametrize("zone", ["America/New_York", "Asia/Kolkata"])
def test_trend_in_a_time_zone(memory, zone):
    """Whole-hour offsets read the hour rollup; a half-hour offset groups the raw rows."""
    with timezone.override(zoneinfo.ZoneInfo(zone)):
        for period in ("auto", "hour", "day", "week"):
            scope = dash().scope
            raw = dataclasses.replace(scope, rollups=False, memo={})
            queries, built = captured_sql(ag.trend, scope, period=period)
            assert built == ag.trend(raw, period=period)
            assert built.points
            assert any("memory_rollup_hour" in q for q in queries)
            raw_read = any("memory_attackresult" in q for q in queries)
            assert raw_read == (zone == "Asia/Kolkata")


def test_one_label_reads_its_rollups_other_filters_the_raw_tables(memory):
    label = Label.objects.get(key="operation", value="op_blue_heron")
    request = dash("labels=operation:op_blue_heron")
    assert not request.scope.from_rollups
    assert request.scope.counted and request.scope.rollup_label == ("operation", "op_blue_heron")
    queries, facts = captured_sql(ag.attack_facts, request.scope)
    assert any("memory_rollup_label_fact" in q for q in queries)
    assert not any("memory_attackresult" in q for q in queries)
    assert sum(f.count for f in facts) == AttackResult.objects.filter(label_index=label).count()
    for query in (
        "labels=operation:op_blue_heron&labels=operator:alice",
        "labels=operation:op_blue_heron&has_human_verdict=false",
        "target_model=gpt-4o",
    ):
        request = dash(query)
        assert not request.scope.counted, query
        queries, _ = captured_sql(ag.attack_facts, request.scope)
        assert not any("memory_rollup" in q for q in queries), query
