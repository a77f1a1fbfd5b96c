"""The dashboard rollups stay exact when two transactions each write one half of a pair the
rollups join, at the same time, on PostgreSQL (SQLite has one writer at a time).

Each race runs two writers on two real connections (threads, committed transactions): the
first writes its half and stays open; the second then writes the other half, and the first
commits only once the second has finished or is waiting for a lock. That is the interleaving
in which each trigger used to read the other half as not there yet: the tests show that
without the writers' lock in the trigger functions ``rollups_check()`` finds the pair missed,
and that with it the second writer waits for the writers' lock and the counts are exact.
"""

from __future__ import annotations

import copy
import json
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models import F

from memory.models import (
    AttackResult,
    ComponentIdentifier,
    Conversation,
    Label,
    MessagePiece,
    RelatedConversation,
    Score,
    rollup_sql,
)
from memory.storage.rollups import rollups_check
from memory.storage.services import human_score_add, human_verdict_record, memory_delete
from memory.storage.write import serialise_writers
from memory.transfer.importers.service import import_pyrit_db
from memory.transfer.ingest.service import ingest
from tests.dashboards.conftest import EXPORT_110
from tests.importers.conftest import DB_110, copy_fixture

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="SQLite allows one writer at a time: its triggers always read every commit",
    ),
]

#: Seconds a writer waits for the other side before the race counts as broken.
TIMEOUT = 60


@dataclass
class Race:
    """What one race saw: the wait event of the second writer when the first let go."""

    second_waited_on: tuple[str | None, str | None] | None = None


def _backend_wait(pid: int) -> tuple[str | None, str | None]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT wait_event_type, wait_event FROM pg_stat_activity WHERE pid = %s", [pid]
        )
        row = cursor.fetchone()
    return (row[0], row[1]) if row else (None, None)


def race(first: Callable[[], object], second: Callable[[], object]) -> Race:
    """Run ``first`` in a transaction that stays open until ``second`` (in another) has
    committed or waits for a lock; then commit ``first`` and wait for both."""
    written, release, second_done = threading.Event(), threading.Event(), threading.Event()
    pids: list[int] = []
    errors: list[BaseException] = []

    def run_first() -> None:
        try:
            with transaction.atomic():
                first()
                written.set()
                assert release.wait(TIMEOUT), "the second writer never finished nor waited"
        except BaseException as exc:  # reported by the test's thread
            errors.append(exc)
        finally:
            written.set()
            connection.close()

    def run_second() -> None:
        try:
            assert written.wait(TIMEOUT)
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                pids.append(cursor.fetchone()[0])
            with transaction.atomic():
                second()
        except BaseException as exc:
            errors.append(exc)
        finally:
            pids.append(-1)  # never leave the test's thread waiting for a pid
            second_done.set()
            connection.close()

    threads = [threading.Thread(target=run_first), threading.Thread(target=run_second)]
    for thread in threads:
        thread.start()
    seen = Race()
    try:
        assert written.wait(TIMEOUT)
        # Not a sleep: poll until the second writer is done, or blocked on a lock (it cannot
        # go on before the first commits, so it is where the lost update used to happen).
        while not second_done.wait(0.01):
            if pids and pids[0] > 0:
                waiting = _backend_wait(pids[0])
                if waiting[0] == "Lock":
                    seen.second_waited_on = waiting
                    break
    finally:
        release.set()
        for thread in threads:
            thread.join(TIMEOUT)
    assert not errors, errors
    return seen


# --- the memory and the writers ---------------------------------------------------------------


@pytest.fixture
def memory(transactional_db):
    """PyRIT 1.1.0's fixture export, ingested and committed; rollups exact."""
    export = json.loads(EXPORT_110.read_text())
    assert not ingest(payload=export, partial=False).errors
    assert rollups_check() == []
    return export


def _scored_attack(n: int = 0) -> AttackResult:
    """The ``n``-th attack whose main conversation has scores."""
    return (
        AttackResult.objects.filter(conversation__home_scores__isnull=False)
        .distinct()
        .order_by("pk")[n]
    )


def _new_label() -> Label:
    return Label.objects.create(key="operation", value=f"op_race_{uuid.uuid4().hex[:8]}")


def _link(attack: AttackResult, label: Label) -> Callable[[], object]:
    """A label link added with the ORM (no lock of its own: the trigger must take it)."""
    return lambda: AttackResult.label_index.through.objects.create(
        attackresult_id=attack.pk, label_id=label.pk
    )


def _unlink(attack: AttackResult) -> Callable[[], object]:
    """The attack leaving a label (the only attack of it, so its conversation leaves the
    label's scope) with the ORM."""
    label = _new_label()
    attack.label_index.add(label)
    through = AttackResult.label_index.through.objects
    return lambda: through.filter(attackresult_id=attack.pk, label_id=label.pk).delete()


def _ingest_score(export: dict, conversation: Conversation) -> Callable[[], object]:
    """An ingestion batch with one new automated score of a piece of ``conversation``."""
    piece_ids = {
        str(pk)
        for pk in MessagePiece.objects.filter(message__conversation=conversation).values_list(
            "original_prompt_id", flat=True
        )
    }
    template = next(s for s in export["scores"] if s["message_piece_id"] in piece_ids)
    score = copy.deepcopy(template)
    score["id"] = str(uuid.uuid4())

    def write() -> None:
        report = ingest(payload={"scores": [score]}, partial=False)
        assert not report.errors, report.errors

    return write


def _verdict(attack: AttackResult, reviewer: User) -> Callable[[], object]:
    outcome = "failure" if attack.outcome == "success" else "success"
    return lambda: human_verdict_record(
        attack_result=attack, outcome=outcome, reason="race", reviewer=reviewer
    )


def _human_score(attack: AttackResult, reviewer: User) -> Callable[[], object]:
    # A piece that is its own original: the score is then the conversation's.
    piece = MessagePiece.objects.filter(
        message__conversation=attack.conversation, id=F("original_prompt_id")
    ).order_by("pk")[0]
    return lambda: human_score_add(
        piece=piece, score_type="float_scale", value=0.9, rationale="race", reviewer=reviewer
    )


def _delete_score(attack: AttackResult, admin: User) -> Callable[[], object]:
    """The memory admin's delete (``memory_delete``) of one of the conversation's scores."""
    score = Score.objects.filter(conversation=attack.conversation).order_by("pk")[0]
    return lambda: memory_delete(
        queryset=Score.objects.filter(pk=score.pk), actor=admin, reason="race", force=True
    )


def _related(attack: AttackResult, conversation: Conversation) -> Callable[[], object]:
    """``conversation`` added to the attack as a related one (a pruned branch) with the ORM."""
    return lambda: RelatedConversation.objects.create(
        attack_result=attack, conversation=conversation, conversation_type="pruned"
    )


def _outcome_edit(attack: AttackResult) -> Callable[[], object]:
    """An admin-style edit of the attack's outcome (a model save), made as every writer of
    Redline makes its writes: the writers' lock first, before the update locks the row. (A
    writer that locks the row first and then waits in its trigger for a writer that needs the
    row is cancelled as a deadlock: rolled back, so it never counts wrong.)"""

    def write() -> None:
        serialise_writers()
        row = AttackResult.objects.get(pk=attack.pk)
        row.outcome = "error" if row.outcome != "error" else "failure"
        row.save()

    return write


def _races(export: dict) -> dict[str, tuple[Callable[[], object], Callable[[], object]]]:
    """Each race by name: two writes, of the two halves of a pair the rollups join, on
    attacks no other race touches. The first of each is a writer of Redline (it takes the
    writers' lock first thing) or an admin-style model save; the second a plain ORM write,
    which only the triggers can make wait."""
    reviewer = User.objects.create_user(f"race-reviewer-{uuid.uuid4().hex[:6]}")
    admin = User.objects.create_superuser(f"race-admin-{uuid.uuid4().hex[:6]}")
    scored = [_scored_attack(n) for n in range(6)]
    # A scored conversation outside the last attack's scopes, to become its related one.
    outside = (
        Conversation.objects.filter(home_scores__isnull=False)
        .exclude(pk__in=[a.conversation_id for a in scored])
        .exclude(pk__in=RelatedConversation.objects.values("conversation_id"))
        .distinct()
        .order_by("pk")[0]
    )
    return {
        # a new score of the conversation; the attack joins a label
        "ingest batch / label link": (
            _ingest_score(export, scored[0].conversation),
            _link(scored[0], _new_label()),
        ),
        # the human outcome moves; the attack joins a label
        "verdict / label link": (_verdict(scored[1], reviewer), _link(scored[1], _new_label())),
        # a human score of the conversation; the attack leaves one of its labels
        "human score / label unlink": (_human_score(scored[2], reviewer), _unlink(scored[2])),
        # the admin deletes a score of the conversation; the attack joins a label
        "admin delete / label link": (
            _delete_score(scored[3], admin),
            _link(scored[3], _new_label()),
        ),
        # an admin-style save of the outcome; the attack joins a label
        "admin edit / label link": (_outcome_edit(scored[4]), _link(scored[4], _new_label())),
        # a new score of a conversation; it becomes the attack's related conversation
        "ingest batch / related conversation": (
            _ingest_score(export, outside),
            _related(scored[5], outside),
        ),
    }


def trigger_functions(*, locked: bool) -> None:
    """(Re-)create the trigger functions with the writers' lock, or as they were before it."""
    with connection.cursor() as cursor:
        for statement in rollup_sql.create_sql("postgresql"):
            if statement.startswith("CREATE OR REPLACE FUNCTION"):
                assert rollup_sql.LOCK_STATEMENT in statement
                if not locked:
                    statement = statement.replace(f"  {rollup_sql.LOCK_STATEMENT};\n", "")
                cursor.execute(statement)


@contextmanager
def triggers_without_lock() -> Iterator[None]:
    """The trigger functions as they were before the writers' lock; put back afterwards."""
    trigger_functions(locked=False)
    try:
        yield
    finally:
        trigger_functions(locked=True)


# --- the tests ----------------------------------------------------------------------------------


@pytest.mark.parametrize("reverse", [False, True], ids=["redline-first", "raw-first"])
def test_concurrent_halves_are_both_counted(memory, reverse):
    """Either writer first: the second waits for the writers' lock, and every pair is
    counted once."""
    for name, (ours, raw) in _races(memory).items():
        first, second = (raw, ours) if reverse else (ours, raw)
        seen = race(first, second)
        assert seen.second_waited_on == ("Lock", "advisory"), name
        assert rollups_check() == [], name


def test_without_the_lock_each_writer_counts_only_its_half(memory):
    """The same races with the lock taken out of the trigger functions: the raw write does
    not wait, and the check finds each pair missed (what the lock prevents)."""
    with triggers_without_lock():
        assert any("writers' lock" in p for p in rollups_check())
        for name, (ours, raw) in _races(memory).items():
            seen = race(ours, raw)
            # (A link's foreign key check may wait for the first writer's row lock at commit,
            # after its trigger has counted.)
            assert seen.second_waited_on != ("Lock", "advisory"), name
            missed = [p for p in rollups_check() if p.startswith("memory_rollup")]
            assert missed, name
            with transaction.atomic():  # recount for the next race
                rollup_sql.rebuild(connection)  # (which re-creates some of the functions)
            trigger_functions(locked=False)
            assert rollups_check() == [p for p in rollups_check() if "writers' lock" in p]
    assert rollups_check() == []


@pytest.mark.parametrize(
    ("locked", "reverse"),
    [(True, False), (True, True), (False, False)],
    ids=["import-first", "rename-first", "without-lock"],
)
def test_import_and_identifier_rename(transactional_db, tmp_path, locked, reverse):
    """An import (direct path) writing attacks of an identifier while an admin-style edit
    renames the identifier's class (the framework breakdowns count per class): exact either
    way round, and the pair missed without the lock in the triggers."""
    path = copy_fixture(DB_110, tmp_path)
    import_pyrit_db(path=path, write_path="direct")
    identifier = AttackResult.objects.order_by("pk")[0].attack_identifier_id
    # The import writes its pieces, conversations and scores directly only into a memory
    # that holds none of them: the identifiers stay.
    AttackResult.objects.all().delete()
    Conversation.objects.all().delete()
    assert rollups_check() == []

    def rename() -> None:
        ComponentIdentifier.objects.filter(pk=identifier).update(class_name="RenamedAttack")

    def load() -> None:
        import_pyrit_db(path=path, write_path="direct")
        assert AttackResult.objects.filter(attack_identifier_id=identifier).exists()

    first, second = (rename, load) if reverse else (load, rename)
    if locked:
        seen = race(first, second)
        assert seen.second_waited_on == ("Lock", "advisory")
        assert rollups_check() == []
        return
    with triggers_without_lock():
        seen = race(first, second)
        assert seen.second_waited_on is None
        assert any(p.startswith("memory_rollup_harmlist") for p in rollups_check())


def test_migration_0030_gives_old_functions_the_lock(memory):
    """Functions made before the lock are reported by the check, and the migration's step
    re-creates them with it, leaving the counts as they were."""
    from django.apps import apps

    class Editor:
        pass

    editor = Editor()
    editor.connection = connection
    with triggers_without_lock():
        unlocked = [p for p in rollups_check() if "writers' lock" in p]
        assert len(unlocked) == len(
            [s for s in rollup_sql.create_sql("postgresql") if s.startswith("CREATE OR REPLACE")]
        )
        assert all(p.startswith("trigger function redline_rollup_") for p in unlocked)
        rollup_sql.functions_replace(apps, editor)
        assert rollups_check() == []
