"""Running an import job (the task): preparation, progress, outcome, clean-up."""

from __future__ import annotations

import stat
import tempfile
from pathlib import Path

import pytest
from django.db import transaction

from memory.models import ImportJob, ImportStatus
from memory.transfer.importers.service import ImportFailed, ImportSummary
from memory.transfer.uploads import jobs, services
from memory.transfer.uploads.jobs import import_job_run
from memory.transfer.uploads.services import import_job_create
from memory.transfer.uploads.tasks import run_import_job
from seeds.models import Seed, SeedDataset, SeedGroup
from tests.uploads.conftest import FIXTURE_110, dbdata_zip, upload, zip_of

pytestmark = pytest.mark.django_db

DB_BYTES = (FIXTURE_110 / "memory.db").read_bytes()


class FakeImporter:
    """Stands in for ``import_pyrit_db``; records what it was given and what it saw."""

    def __init__(self, *, fail: Exception | None = None, reports: int = 3) -> None:
        self.fail = fail
        self.reports = reports
        self.calls: list[dict] = []
        self.seen_progress: list[dict] = []

    def __call__(self, *, path, media_root, dry_run, progress, actor=None):
        path, media_root = Path(path), Path(media_root)
        self.calls.append(
            {
                "path": path,
                "media_root": media_root,
                "dry_run": dry_run,
                "database": path.read_bytes(),
                "media": sorted(
                    str(p.relative_to(media_root)) for p in media_root.rglob("*") if p.is_file()
                ),
                "media_root_mode": stat.S_IMODE(media_root.stat().st_mode),
            }
        )
        for step in range(1, self.reports + 1):
            progress({"phase": "message_pieces", "done": step * 10, "total": 30, "rate": 99.5})
            self.seen_progress.append(ImportJob.objects.values_list("progress", flat=True).get())
        if self.fail is not None:
            raise self.fail
        return ImportSummary(
            schema="1.1.0",
            rows_read={"PromptMemoryEntries": 30},
            created={"message_pieces": 30},
            unchanged={"message_pieces": 0},
            media_matched=len(self.calls[-1]["media"]),
            seconds=0.5,
            dry_run=dry_run,
        )


@pytest.fixture
def fake(monkeypatch):
    importer = FakeImporter()
    monkeypatch.setattr(jobs.importer, "import_pyrit_db", importer)
    monkeypatch.setattr(jobs, "PROGRESS_INTERVAL", 0)
    return importer


@pytest.fixture
def workdirs(monkeypatch):
    """The temporary folders jobs create, to check they are gone afterwards."""
    made: list[Path] = []
    real = tempfile.mkdtemp

    def tracking(*args, **kwargs):
        made.append(Path(real(*args, **kwargs)))
        return str(made[-1])

    monkeypatch.setattr(jobs.tempfile, "mkdtemp", tracking)
    return made


def _job(user, name="pyrit.db", data=DB_BYTES, kind="sqlite", dry_run=False):
    return import_job_create(upload=upload(name, data), kind=kind, user=user, dry_run=dry_run)


def test_a_database_upload_is_imported_with_no_media_root_beside_it(ingester, fake, workdirs):
    job = _job(ingester, dry_run=True)
    stored = Path(job.upload.path)

    import_job_run(job_id=job.pk)

    job.refresh_from_db()
    (call,) = fake.calls
    assert call["database"] == DB_BYTES
    assert call["dry_run"] is True
    # The folder beside the stored upload holds other people's uploads: never a media root.
    assert call["media_root"] != stored.parent and call["media"] == []
    assert call["media_root_mode"] == 0o700
    assert job.status == ImportStatus.SUCCEEDED
    assert job.summary["created"] == {"message_pieces": 30}
    assert job.progress["phase"] == "done"
    assert job.started_at is not None and job.finished_at >= job.started_at
    assert not stored.exists() and not job.upload
    assert workdirs and not any(w.exists() for w in workdirs)


def test_a_zip_is_unpacked_privately_and_its_media_offered(ingester, fake, workdirs):
    job = _job(ingester, "dbdata.zip", dbdata_zip(FIXTURE_110), "zip")

    import_job_run(job_id=job.pk)

    job.refresh_from_db()
    (call,) = fake.calls
    assert job.status == ImportStatus.SUCCEEDED, job.error
    assert call["database"] == DB_BYTES
    assert call["path"].name == "pyrit.db"
    assert "dbdata/prompt-memory-entries/images/1795264620232622.png" in call["media"]
    assert "dbdata/seed-prompt-entries/videos/1795264621722968.mp4" in call["media"]
    assert job.summary["media_matched"] == len(call["media"]) == 10  # 9 media + the database
    assert not any(w.exists() for w in workdirs)


def test_progress_reaches_the_job_while_it_runs(ingester, fake):
    job = _job(ingester)

    import_job_run(job_id=job.pk)

    assert fake.seen_progress == [
        {"phase": "message_pieces", "done": n, "total": 30, "rate": 99.5} for n in (10, 20, 30)
    ]


def test_progress_inside_the_importers_transaction_waits(ingester, monkeypatch):
    """Written inside the importer's transaction it would be invisible until its commit."""
    seen = []

    def importer(*, path, media_root, dry_run, progress, actor=None):
        with transaction.atomic():
            progress({"phase": "scores", "done": 5, "total": 10, "rate": 1.0})
            seen.append(ImportJob.objects.values_list("progress", flat=True).get())
        progress({"phase": "scores", "done": 10, "total": 10, "rate": 1.0})
        seen.append(ImportJob.objects.values_list("progress", flat=True).get())
        raise ImportFailed("stop here")

    monkeypatch.setattr(jobs.importer, "import_pyrit_db", importer)
    monkeypatch.setattr(jobs, "PROGRESS_INTERVAL", 0)
    import_job_run(job_id=_job(ingester).pk)

    assert seen[0]["phase"] == "importing"
    assert seen[1] == {"phase": "scores", "done": 10, "total": 10, "rate": 1.0}


def test_bad_input_fails_the_job_with_the_importers_line(ingester, fake, workdirs):
    fake.fail = ImportFailed("not a PyRIT memory database: no PromptMemoryEntries table")
    job = _job(ingester)

    import_job_run(job_id=job.pk)

    job.refresh_from_db()
    assert job.status == ImportStatus.FAILED
    assert job.error == "not a PyRIT memory database: no PromptMemoryEntries table"
    assert job.progress["phase"] == "failed" and job.summary == {}
    assert not job.upload
    assert not any(w.exists() for w in workdirs)


def test_an_unsafe_zip_fails_the_job_and_writes_nothing_outside(ingester, fake, workdirs, tmp_path):
    # The form refuses this at upload; the worker checks again, whatever reached it.
    data = zip_of({"dbdata/pyrit.db": DB_BYTES, "dbdata/../../../escaped.txt": b"pwned"})
    job = _job(ingester, "dbdata.zip", data, "zip")

    import_job_run(job_id=job.pk)

    job.refresh_from_db()
    assert job.status == ImportStatus.FAILED
    assert "climbs out of its folder" in job.error
    assert fake.calls == []
    assert not list(Path(tempfile.gettempdir()).glob("**/escaped.txt"))
    assert not any(w.exists() for w in workdirs)


def test_an_unexpected_error_fails_the_job_and_is_raised_for_the_task_record(ingester, fake):
    fake.fail = KeyError("boom")
    job = _job(ingester)

    with pytest.raises(KeyError):
        import_job_run(job_id=job.pk)

    job.refresh_from_db()
    assert job.status == ImportStatus.FAILED
    assert "unexpected error (KeyError)" in job.error
    assert not job.upload


def test_a_job_runs_once(ingester, fake):
    job = _job(ingester)
    assert import_job_run(job_id=job.pk) is not None

    assert import_job_run(job_id=job.pk) is None
    assert len(fake.calls) == 1


def test_the_task_runs_the_job(ingester, fake):
    job = _job(ingester)

    result = run_import_job.call(str(job.pk))

    assert result == {"job": str(job.pk), "status": "succeeded"}
    assert ImportJob.objects.get().status == ImportStatus.SUCCEEDED


def test_with_the_immediate_backend_an_upload_is_imported_on_commit(
    ingester, fake, settings, django_capture_on_commit_callbacks
):
    settings.TASKS = {"default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend"}}

    with django_capture_on_commit_callbacks(execute=True):
        job = _job(ingester)
        assert ImportJob.objects.get().status == ImportStatus.QUEUED

    job.refresh_from_db()
    assert job.status == ImportStatus.SUCCEEDED
    assert job.task_id


def test_the_real_importer_imports_a_dbdata_zip(ingester, workdirs):
    """The whole path with PyRIT 1.1.0's own database and media (no stand-in)."""
    job = _job(ingester, "dbdata.zip", dbdata_zip(FIXTURE_110), "zip")

    import_job_run(job_id=job.pk)

    job.refresh_from_db()
    assert job.status == ImportStatus.SUCCEEDED, job.error
    summary = job.summary
    assert summary["rows_read"]["PromptMemoryEntries"] == 162
    assert summary["created"]["message_pieces"] == 162
    assert summary["created"]["attack_results"] == 24
    assert summary["media_missing"] == 0 and summary["media_matched"] > 0
    assert summary["upload_kind"] == "zip"
    assert not any(w.exists() for w in workdirs)

    again = _job(ingester, "dbdata.zip", dbdata_zip(FIXTURE_110), "zip")
    import_job_run(job_id=again.pk)
    again.refresh_from_db()
    assert again.status == ImportStatus.SUCCEEDED
    assert sum(again.summary["created"].values()) == 0


def test_progress_beats_the_jobs_heartbeat(ingester, monkeypatch):
    job = _job(ingester)
    beats = []

    def importer(*, path, media_root, dry_run, progress, actor=None):
        for done in (10, 20):
            progress({"phase": "message_pieces", "done": done, "total": 20})
            beats.append(ImportJob.objects.values_list("heartbeat_at", flat=True).get())
        raise ImportFailed("stop here")

    monkeypatch.setattr(jobs.importer, "import_pyrit_db", importer)
    monkeypatch.setattr(jobs, "PROGRESS_INTERVAL", 0)
    import_job_run(job_id=job.pk)
    assert beats[0] is not None and beats[1] >= beats[0]


def _running(user, *, beat_minutes_ago: float | None, started_minutes_ago: float = 60):
    from datetime import timedelta

    from django.utils import timezone

    job = _job(user)
    now = timezone.now()
    ImportJob.objects.filter(pk=job.pk).update(
        status=ImportStatus.RUNNING,
        started_at=now - timedelta(minutes=started_minutes_ago),
        heartbeat_at=None
        if beat_minutes_ago is None
        else now - timedelta(minutes=beat_minutes_ago),
        progress={"phase": "message_pieces", "done": 5000, "total": 9000},
    )
    job.refresh_from_db()
    return job


def test_a_running_job_whose_worker_stopped_beating_fails_as_stalled(ingester, settings):
    settings.REDLINE_IMPORT_STALLED_AFTER_SECONDS = 15 * 60
    stalled = _running(ingester, beat_minutes_ago=16)
    never_beat = _running(ingester, beat_minutes_ago=None, started_minutes_ago=20)
    alive = _running(ingester, beat_minutes_ago=14)
    stored = Path(stalled.upload.path)

    assert services.import_jobs_fail_stalled() == 2

    stalled.refresh_from_db()
    assert stalled.status == ImportStatus.FAILED
    assert stalled.error == services.STALLED_ERROR
    assert stalled.progress == {"phase": "failed", "done": 5000, "total": 9000}
    assert stalled.finished_at is not None
    assert not stored.exists() and not stalled.upload
    never_beat.refresh_from_db()
    assert never_beat.status == ImportStatus.FAILED
    alive.refresh_from_db()
    assert alive.status == ImportStatus.RUNNING and alive.error == ""
    # done already: nothing more to fail
    assert services.import_jobs_fail_stalled() == 0


def test_queued_and_finished_jobs_are_never_stalled(ingester, fake, settings):
    settings.REDLINE_IMPORT_STALLED_AFTER_SECONDS = 0
    done = _job(ingester)
    import_job_run(job_id=done.pk)
    queued = _job(ingester)

    assert services.import_jobs_fail_stalled() == 0
    assert ImportJob.objects.get(pk=queued.pk).status == ImportStatus.QUEUED
    assert ImportJob.objects.get(pk=done.pk).status == ImportStatus.SUCCEEDED


def test_the_job_page_shows_a_stalled_job_as_failed(ingester, ingest_client, settings):
    settings.REDLINE_IMPORT_STALLED_AFTER_SECONDS = 15 * 60
    job = _running(ingester, beat_minutes_ago=30)

    page = ingest_client.get(f"/imports/{job.pk}/")

    assert page.status_code == 200
    text = page.content.decode()
    assert "The worker stopped reporting progress" in text
    assert 'hx-trigger="every 1s"' not in text  # no longer polled


def test_seeds_and_datasets_of_an_upload_name_the_uploader_in_their_history(ingester, workdirs):
    """The background worker has no request: the job's user is passed down as the actor."""
    job = _job(ingester, "dbdata.zip", dbdata_zip(FIXTURE_110), "zip")

    import_job_run(job_id=job.pk)

    job.refresh_from_db()
    assert job.status == ImportStatus.SUCCEEDED, job.error
    histories = [Seed.history.all(), SeedDataset.history.all(), SeedGroup.history.all()]
    for history in histories:
        assert history.exists()
        assert set(history.values_list("history_user", flat=True)) == {ingester.pk}


def test_a_newer_pyrit_upload_succeeds_and_its_page_shows_the_warnings(
    ingester, ingest_client, workdirs, tmp_path
):
    """A database from a PyRIT newer than Redline knows (an unknown revision, a new column, a
    new table) is imported through the browser upload; the job page lists what was kept how."""
    import sqlite3

    from django.urls import reverse

    from memory.models import PyritRecord

    source = tmp_path / "future"
    source.mkdir()
    (source / "memory.db").write_bytes(DB_BYTES)
    (source / "dbdata").mkdir()
    with sqlite3.connect(source / "memory.db") as connection:
        connection.execute("UPDATE pyrit_memory_alembic_version SET version_num = 'ffee00112233'")
        connection.execute("ALTER TABLE ScoreEntries ADD COLUMN judge_latency_ms INTEGER")
        connection.execute("CREATE TABLE CampaignEntries (id CHAR(36) PRIMARY KEY, name VARCHAR)")
        connection.execute("INSERT INTO CampaignEntries VALUES ('c1', '<b>spring</b>')")
    job = _job(ingester, "dbdata.zip", dbdata_zip(source), "zip")

    import_job_run(job_id=job.pk)

    job.refresh_from_db()
    assert job.status == ImportStatus.SUCCEEDED, job.error
    assert job.summary["created"]["attack_results"] == 24
    assert PyritRecord.objects.get(table="CampaignEntries").row == {
        "id": "c1",
        "name": "<b>spring</b>",
    }
    page = ingest_client.get(reverse("import-detail", kwargs={"job_id": job.pk})).content.decode()
    assert "PyRIT newer than this Redline knows" in page
    assert "unknown PyRIT schema revision &#x27;ffee00112233&#x27;" in page
    assert "ScoreEntries has columns this Redline does not know (judge_latency_ms)" in page
    assert "kept verbatim (PyritRecord): CampaignEntries" in page
    assert "<b>spring</b>" not in page


def test_an_upload_with_an_overwritten_media_file_links_only_the_right_piece(
    ingester, ingest_client, workdirs, tmp_path
):
    """PyRIT's colliding media names through the browser upload: the job log names each
    piece left without media once, and only the piece whose bytes survived links."""
    from django.urls import reverse

    from memory.models import MessagePiece
    from tests.collision import OVERWRITTEN, SHARED, SURVIVOR, collided_copy, recorded_sha

    job = _job(ingester, "dbdata.zip", dbdata_zip(collided_copy(tmp_path).parent), "zip")

    import_job_run(job_id=job.pk)

    job.refresh_from_db()
    assert job.status == ImportStatus.SUCCEEDED, job.error
    expected = sorted(
        f"media differs from recorded sha256: piece {piece_id} conversation {conversation_id} "
        f"file {SHARED} expected sha256 {recorded_sha(piece_id)}: not linked"
        for piece_id, conversation_id in OVERWRITTEN
    )
    assert sorted(w for w in job.summary["warnings"] if "media differs" in w) == expected
    assert MessagePiece.objects.get(id=SURVIVOR[0]).converted_media is not None
    assert not MessagePiece.objects.filter(
        id__in=[piece_id for piece_id, _ in OVERWRITTEN], converted_media__isnull=False
    ).exists()
    page = ingest_client.get(reverse("import-detail", kwargs={"job_id": job.pk})).content.decode()
    for line in expected:
        assert line in page
