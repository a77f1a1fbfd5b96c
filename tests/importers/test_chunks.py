"""Chunking: each chunk is atomic, memory-bounded reading gives the same result, progress."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from memory.models import AttackResult, Conversation, MessagePiece, ScenarioResult, Score
from memory.storage import write
from memory.transfer.importers import direct
from memory.transfer.importers.runner import WRITE_PATHS, Importer
from memory.transfer.importers.service import import_pyrit_db
from tests.importers.conftest import DB_012, DB_110, fail_a_chunk_of_pieces


class Boom(RuntimeError):
    """Raised by the test in the middle of writing a chunk."""


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("write_path", WRITE_PATHS)
def test_a_failure_mid_chunk_leaves_earlier_chunks_and_nothing_of_the_failing_one(
    monkeypatch, write_path
):
    """Chunks of 40 rows: the third chunk of pieces fails after its pieces were inserted
    (while its converter links are written); the first two chunks stay, the third is gone.
    On the direct path a chunk is written by it or by the service: either may fail."""
    real, real_direct = write.insert_rows, direct.insert_columns
    fail_a_chunk_of_pieces(monkeypatch, Boom("disk full"), number=3)
    with pytest.raises(Boom):
        import_pyrit_db(path=DB_110, chunk_rows=40, write_path=write_path)
    # exactly the first two chunks of pieces, in PyRIT's order; no score or attack yet
    assert MessagePiece.objects.count() == 80
    assert not Score.objects.exists() and not AttackResult.objects.exists()
    stored_conversations = set(
        MessagePiece.objects.values_list("message__conversation__conversation_id", flat=True)
    )
    assert set(Conversation.objects.values_list("conversation_id", flat=True)) == (
        stored_conversations
    )
    # the import can simply be run again, and completes what is missing
    monkeypatch.setattr(write, "insert_rows", real)
    monkeypatch.setattr(direct, "insert_columns", real_direct)
    summary = import_pyrit_db(path=DB_110, chunk_rows=40, write_path=write_path)
    assert summary.ok
    assert summary.unchanged["message_pieces"] == 80
    assert MessagePiece.objects.count() == 162


@pytest.mark.django_db
@pytest.mark.parametrize("chunk_rows", [1, 7, 5000])
def test_any_chunk_size_gives_the_same_memory(chunk_rows):
    summary = import_pyrit_db(path=DB_110, chunk_rows=chunk_rows)
    assert summary.ok, summary.warnings
    assert MessagePiece.objects.count() == 162
    assert Conversation.objects.count() == 38
    assert summary.created["seed_groups"] == 15
    # pieces of one message keep their order even when a chunk boundary splits the message
    for message_id in MessagePiece.objects.values_list("message_id", flat=True).distinct():
        positions = list(
            MessagePiece.objects.filter(message_id=message_id)
            .order_by("position")
            .values_list("position", flat=True)
        )
        assert positions == list(range(len(positions)))


@pytest.mark.django_db
def test_progress_callback_reports_rows_and_rate():
    seen = []
    summary = import_pyrit_db(path=DB_012, progress=seen.append, chunk_rows=10)
    assert seen[0]["phase"] == "prepared" and seen[0]["done"] == 0
    assert seen[-1]["phase"] == "done"
    assert seen[-1]["done"] == seen[-1]["total"] == summary.rows_total == 86
    for state in seen:
        assert set(state) == {"phase", "done", "total", "rate"}
        assert state["rate"] >= 0
    assert [s["done"] for s in seen] == sorted(s["done"] for s in seen)


@pytest.mark.django_db
def test_command_prints_plain_progress_lines_and_the_summary_table_off_a_terminal():
    out = io.StringIO()
    call_command("import_pyrit", str(DB_012), stdout=out)
    text = out.getvalue()
    assert "prepared: 0/86 rows (0 %)" in text
    assert "done: 86/86 rows (100 %)" in text
    assert "\x1b[" not in text  # no terminal control codes in a log
    assert "Schema: PyRIT 0.10 – 0.13 (pre-alembic)" in text
    lines = text.splitlines()
    assert any(line.split() == ["PromptMemoryEntries", "53"] for line in lines)
    assert any(line.split() == ["message_pieces", "53", "0", "0", "0"] for line in lines)
    assert "Media: 2 matched, 0 missing" in text


@pytest.mark.django_db
def test_command_draws_a_progress_bar_on_a_terminal(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    out = Terminal()
    call_command("import_pyrit", str(DB_012), stdout=out)
    text = out.getvalue()
    assert "rows/s" in text
    assert "86/86" in text  # rich's rows done / total column
    assert "message_pieces" in text


@pytest.mark.django_db
def test_dry_run_flag_of_the_command():
    out = io.StringIO()
    call_command("import_pyrit", str(DB_012), "--dry-run", stdout=out)
    assert "dry run: nothing written" in out.getvalue()
    assert not MessagePiece.objects.exists()


@pytest.mark.django_db
def test_progress_never_goes_backwards_on_a_1x_file():
    seen = []
    summary = import_pyrit_db(path=DB_110, progress=seen.append, chunk_rows=25)
    done = [s["done"] for s in seen]
    assert done == sorted(done)
    assert done[-1] == summary.rows_total == seen[-1]["total"]
    assert summary.rows_read["Conversations"] == 38


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("write_path", WRITE_PATHS)
def test_progress_counts_only_committed_rows(monkeypatch, write_path):
    """The reader runs up to two chunks ahead of the writer; progress must not: when the third
    chunk of pieces fails, the last report names exactly the two committed chunks."""
    reports: list[dict] = []

    def progress(report):
        # the one scenario result comes first, then pieces
        stored = ScenarioResult.objects.count() + MessagePiece.objects.count()
        reports.append({**report, "stored": stored})

    fail_a_chunk_of_pieces(monkeypatch, Boom("worker killed"), number=3)
    monkeypatch.setattr(Importer, "REPORT_INTERVAL", 0)
    with pytest.raises(Boom):
        import_pyrit_db(path=DB_110, chunk_rows=40, progress=progress, write_path=write_path)
    assert MessagePiece.objects.count() == 80
    assert reports[-1]["done"] == reports[-1]["stored"] == 81
    assert all(r["done"] <= r["stored"] for r in reports)


def test_help_and_docs_state_the_real_default_chunk_size():
    """`import_pyrit --help` and docs/import.md name the chunk size the importer uses."""
    import re
    from pathlib import Path

    from django.core.management import get_commands, load_command_class

    from memory.transfer.importers.runner import DEFAULT_CHUNK_ROWS

    command = load_command_class(get_commands()["import_pyrit"], "import_pyrit")
    help_text = " ".join(command.create_parser("manage.py", "import_pyrit").format_help().split())
    assert f"Source rows per transaction (default {DEFAULT_CHUNK_ROWS})." in help_text
    docs = (Path(__file__).resolve().parents[2] / "docs" / "import.md").read_text()
    stated = {int(n.replace(",", "")) for n in re.findall(r"default ([\d,]+)", docs)}
    assert stated == {DEFAULT_CHUNK_ROWS}
    assert "`--chunk-rows N`" in docs
