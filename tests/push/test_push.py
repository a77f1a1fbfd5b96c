"""``redline-push`` against a live Redline: the first push equals the source, a second sends
nothing, appended and updated rows are the only ones sent next, a killed push restarted ends
exact, ``--watch`` follows a database PyRIT writes, and what stops a push says why."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from memory.models import (
    AttackResult,
    Conversation,
    MessagePiece,
    PushSource,
    PyritRecord,
    ScenarioResult,
    ScorableContent,
    Score,
)
from seeds.models import Seed, SeedGroup
from tests.push.conftest import copy_database, count

pytestmark = pytest.mark.django_db(transaction=True)


def assert_equals_source(db: Path) -> None:
    """Every table Redline reads holds as many objects as the source has rows."""
    c = lambda sql: count(db, sql)  # noqa: E731
    assert MessagePiece.objects.count() == c("SELECT count(*) FROM PromptMemoryEntries")
    assert Score.objects.count() == c("SELECT count(*) FROM ScoreEntries")
    assert AttackResult.objects.count() == c("SELECT count(*) FROM AttackResultEntries")
    assert Seed.objects.count() == c("SELECT count(*) FROM SeedPromptEntries")
    assert SeedGroup.objects.count() == c(
        "SELECT count(DISTINCT prompt_group_id) FROM SeedPromptEntries"
    )
    assert ScenarioResult.objects.count() == c("SELECT count(*) FROM ScenarioResultEntries")
    conversations = c("SELECT count(DISTINCT conversation_id) FROM PromptMemoryEntries")
    tables = {r[0] for r in sqlite3.connect(db).execute("SELECT name FROM sqlite_master")}
    if "Conversations" in tables:
        conversations = c(
            "SELECT count(*) FROM (SELECT conversation_id FROM PromptMemoryEntries "
            "UNION SELECT conversation_id FROM Conversations)"
        )
    if "ScorableContentEntries" in tables:
        assert ScorableContent.objects.count() == c("SELECT count(*) FROM ScorableContentEntries")
    if "FindingEntries" in tables:
        assert PyritRecord.objects.filter(table="FindingEntries").count() == c(
            "SELECT count(*) FROM FindingEntries"
        )
    assert Conversation.objects.count() == conversations


def eventually(check, seconds: float) -> float:
    """Run ``check`` until it passes or ``seconds`` ran out (then raise its error); returns how
    long it took."""
    started = time.monotonic()
    while True:
        try:
            check()
            return time.monotonic() - started
        except AssertionError:
            if time.monotonic() - started > seconds:
                raise
            time.sleep(0.1)


def rows_read(out: str) -> dict[str, int]:
    """The summary's "rows read" table."""
    found = {}
    lines = out.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("source table")))
    for line in lines[start + 1 :]:
        if not line.strip() or line.startswith("total"):
            break
        table, number = line.split()
        found[table] = int(number.replace(",", ""))
    return found


@pytest.mark.parametrize("version", ["1.1.0", "0.12.1", "1.2"])
def test_first_push_equals_the_source_and_a_second_sends_nothing(push, tmp_path, version):
    db = copy_database(version, tmp_path)
    status, out, err = push(db, "--batch-rows", "50")
    assert status == 0, out + err
    assert_equals_source(db)
    assert rows_read(out)["PromptMemoryEntries"] == count(
        db, "SELECT count(*) FROM PromptMemoryEntries"
    )
    # media went along, content-addressed: every piece naming a file found it
    assert not MessagePiece.objects.filter(
        original_value_data_type="image_path", original_media__isnull=True
    ).exists()
    # where it came from
    source = PushSource.objects.get()
    assert source.database == str(db.resolve())
    assert not Conversation.objects.filter(push_source__isnull=True).exists()
    assert not AttackResult.objects.filter(push_source__isnull=True).exists()

    status, out, err = push(db)
    assert status == 0, out + err
    assert rows_read(out) == {}
    assert "0 batches" in out
    assert_equals_source(db)


def test_a_push_equals_an_import_of_the_same_file(push, tmp_path):
    """Pushed and imported, the same file gives the same objects (the reader is shared)."""
    from memory.transfer.importers.service import import_pyrit_db

    db = copy_database("1.2", tmp_path)
    assert push(db)[0] == 0
    pieces = MessagePiece.objects.count()
    attacks = dict(AttackResult.objects.values_list("id", "outcome"))
    summary = import_pyrit_db(path=db)
    # what the import would write is exactly what the push wrote: nothing new, nothing changed,
    # no piece in conflict (pieces are immutable: any difference would be refused)
    assert sum(summary.created.values()) == 0, summary.created
    assert sum(summary.updated.values()) == 0, summary.updated
    assert summary.ok, summary.warnings
    assert dict(AttackResult.objects.values_list("id", "outcome")) == attacks
    assert MessagePiece.objects.count() == pieces


def _append_rows(db: Path) -> tuple[int, str]:
    """Rows PyRIT would append, written with the file's own schema: a copy of a conversation's
    pieces under a new conversation id, a score of one of them, and an attack result updated
    in place. Returns (pieces added, the updated attack result's id)."""
    connection = sqlite3.connect(db)
    with connection:
        columns = [r[1] for r in connection.execute("PRAGMA table_info(PromptMemoryEntries)")]
        conversation = connection.execute(
            "SELECT conversation_id FROM PromptMemoryEntries ORDER BY rowid LIMIT 1"
        ).fetchone()[0]
        rows = connection.execute(
            f"SELECT {', '.join(columns)} FROM PromptMemoryEntries WHERE conversation_id = ? "
            "ORDER BY rowid",
            (conversation,),
        ).fetchall()
        new_conversation = str(uuid.uuid4())
        ids = {}
        for row in rows:
            data = dict(zip(columns, row, strict=True))
            ids[data["id"]] = str(uuid.uuid4())
        for row in rows:
            data = dict(zip(columns, row, strict=True))
            data["id"] = ids[data["id"]]
            data["original_prompt_id"] = ids.get(data["original_prompt_id"], data["id"])
            data["conversation_id"] = new_conversation
            connection.execute(
                f"INSERT INTO PromptMemoryEntries ({', '.join(columns)}) "
                f"VALUES ({', '.join('?' * len(columns))})",
                [data[c] for c in columns],
            )
        score_columns = [r[1] for r in connection.execute("PRAGMA table_info(ScoreEntries)")]
        score = dict(
            zip(
                score_columns,
                connection.execute("SELECT * FROM ScoreEntries ORDER BY rowid LIMIT 1").fetchone(),
                strict=True,
            )
        )
        score["id"] = str(uuid.uuid4())
        score["prompt_request_response_id"] = next(iter(ids.values()))
        connection.execute(
            f"INSERT INTO ScoreEntries ({', '.join(score_columns)}) "
            f"VALUES ({', '.join('?' * len(score_columns))})",
            [score[c] for c in score_columns],
        )
        attack_id = connection.execute(
            "SELECT id FROM AttackResultEntries WHERE outcome != 'failure' ORDER BY rowid LIMIT 1"
        ).fetchone()[0]
        connection.execute(
            "UPDATE AttackResultEntries SET outcome = 'failure', outcome_reason = 'rescored' "
            "WHERE id = ?",
            (attack_id,),
        )
    connection.close()
    return len(rows), attack_id


@pytest.mark.parametrize("version", ["1.1.0", "0.12.1"])
def test_appended_and_updated_rows_are_the_only_ones_sent_next(push, tmp_path, version):
    db = copy_database(version, tmp_path)
    assert push(db)[0] == 0
    added, attack_id = _append_rows(db)

    status, out, err = push(db)
    assert status == 0, out + err
    assert rows_read(out) == {
        "PromptMemoryEntries": added,
        "ScoreEntries": 1,
        "AttackResultEntries": 1,
    }
    assert_equals_source(db)
    assert AttackResult.objects.get(id=attack_id).outcome == "failure"
    assert push(db)[1].count("0 batches") == 1


def _push_process(url: str, token: str, db: Path, state: Path, *args: str, **env: str):
    return subprocess.Popen(
        [sys.executable, "-m", "redline_push", "--url", url, "--state", str(state), *args, str(db)],
        env={**os.environ, "REDLINE_TOKEN": token, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_push_killed_after_redline_answered_restarts_and_ends_exact(live_server, token, tmp_path):
    """SIGKILL at the worst moment — Redline wrote the batch, the client has not recorded
    it — then a second run: nothing lost, nothing twice."""
    db = copy_database("1.1.0", tmp_path)
    state = tmp_path / "state.sqlite3"
    killed = _push_process(
        live_server.url,
        token,
        db,
        state,
        "--batch-rows",
        "20",
        REDLINE_PUSH_KILL_AFTER_BATCHES="4",
    )
    killed.communicate(timeout=120)
    assert killed.returncode == -signal.SIGKILL
    assert 0 < MessagePiece.objects.count() < count(db, "SELECT count(*) FROM PromptMemoryEntries")

    again = _push_process(live_server.url, token, db, state, "--batch-rows", "20")
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, out + err
    assert_equals_source(db)
    assert "refused" in out and ", 0 batches" not in out


def test_a_push_killed_at_any_moment_restarts_and_ends_exact(live_server, token, tmp_path):
    """SIGKILL from outside, mid-way through the first push, then a second run."""
    db = copy_database("1.2", tmp_path)
    state = tmp_path / "state.sqlite3"
    first = _push_process(live_server.url, token, db, state, "--batch-rows", "5")
    deadline = time.monotonic() + 60
    while MessagePiece.objects.count() < 30 and time.monotonic() < deadline:
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=60)
    assert first.returncode == -signal.SIGKILL

    again = _push_process(live_server.url, token, db, state)
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, out + err
    assert_equals_source(db)


def test_watch_follows_a_database_pyrit_writes_and_stops_on_ctrl_c(live_server, token, tmp_path):
    db = copy_database("1.1.0", tmp_path)
    sqlite3.connect(db).execute("PRAGMA journal_mode = WAL").fetchone()  # as a live PyRIT
    watch = _push_process(
        live_server.url, token, db, tmp_path / "state.sqlite3", "--watch", "--interval", "0.2"
    )
    try:
        eventually(lambda: assert_equals_source(db), 60)
        _, attack_id = _append_rows(db)

        def caught_up():
            assert AttackResult.objects.get(id=attack_id).outcome == "failure"
            assert_equals_source(db)

        # "within a few seconds" (a poll every 0.2 s, then one batch)
        assert eventually(caught_up, 10) < 10
    finally:
        watch.send_signal(signal.SIGINT)
        out, err = watch.communicate(timeout=60)
    assert watch.returncode == 0, out + err
    assert "stopping after the current batch" in err
    assert rows_read(out)["PromptMemoryEntries"] == count(
        db, "SELECT count(*) FROM PromptMemoryEntries"
    )


def test_what_stops_a_push_is_one_line_and_exit_status_2(push, live_server, tmp_path, token):
    from redline_push.cli import main

    db = copy_database("1.1.0", tmp_path)
    state = str(tmp_path / "s.sqlite3")
    status = main(["--url", live_server.url, "--token", "rl_wrong", "--state", state, str(db)])
    assert status == 2
    # a server without the limits endpoint is too old (here: a URL that is not Redline's root)
    status = main(
        ["--url", live_server.url + "/nowhere", "--token", token, "--state", state, str(db)]
    )
    assert status == 2
    not_pyrit = tmp_path / "other.db"
    sqlite3.connect(not_pyrit).execute("CREATE TABLE t (x)").close()
    assert push(not_pyrit)[0] == 2
    assert MessagePiece.objects.count() == 0


def test_messages_for_a_bad_token_an_old_server_and_a_file_not_pyrit(
    push, live_server, tmp_path, capsys
):
    from redline_push.cli import main

    db = copy_database("1.1.0", tmp_path)
    state = str(tmp_path / "s.sqlite3")
    main(["--url", live_server.url, "--token", "rl_wrong", "--state", state, str(db)])
    assert "refused the token (HTTP 401)" in capsys.readouterr().err
    not_pyrit = tmp_path / "other.db"
    sqlite3.connect(not_pyrit).execute("CREATE TABLE t (x)").close()
    _, _, err = push(not_pyrit)
    assert "not PyRIT memory" in err and err.count("\n") == 1


def test_a_read_token_cannot_push(live_server, bot, tmp_path, capsys):
    from redline_push.cli import main
    from redteam.tokens import api_token_create

    read = api_token_create(user=bot, scope="read")[1]
    db = copy_database("1.1.0", tmp_path)
    status = main(
        ["--url", live_server.url, "--token", read, "--state", str(tmp_path / "s.sqlite3"), str(db)]
    )
    assert status == 2
    assert "ingest scope" in capsys.readouterr().err
