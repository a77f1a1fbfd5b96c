"""The upload pages: who may use them, what a bad file gets, what a good one starts."""

from __future__ import annotations

import pytest
from django.test import Client
from django_tasks_db.models import DBTaskResult

from memory.models import ImportJob, ImportStatus
from memory.transfer.importers.service import ImportSummary
from memory.transfer.uploads.services import import_job_create
from tests.queries import get_counted
from tests.uploads.conftest import FIXTURE_110, dbdata_zip, upload, zip_of

pytestmark = pytest.mark.django_db

LIST = "/imports/"
DB_BYTES = (FIXTURE_110 / "memory.db").read_bytes()


def _detail(job) -> str:
    return f"/imports/{job.pk}/"


def _status(job) -> str:
    return f"/imports/{job.pk}/status/"


@pytest.fixture
def job(ingester):
    """A queued job (its task is not enqueued: on_commit does not run in these tests)."""
    return import_job_create(upload=upload("pyrit.db", DB_BYTES), kind="sqlite", user=ingester)


# --- who may --------------------------------------------------------------------------------


def test_anonymous_is_sent_to_log_in():
    response = Client().get(LIST)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_viewer_gets_403_everywhere(viewer_client, job):
    assert viewer_client.get(LIST).status_code == 403
    assert viewer_client.post(LIST, {"file": upload("pyrit.db", DB_BYTES)}).status_code == 403
    assert viewer_client.get(_detail(job)).status_code == 403
    assert viewer_client.get(_status(job)).status_code == 403
    assert ImportJob.objects.count() == 1


def test_staff_status_alone_is_not_enough_but_a_superuser_may(staff_client, admin_client):
    # Every member of a shipped group is staff (to read memory in the admin); importing is
    # decided by the add-import-job permission.
    assert staff_client.get(LIST).status_code == 403
    assert admin_client.get(LIST).status_code == 200


def test_ingest_group_sees_the_form(ingest_client):
    response = ingest_client.get(LIST)
    page = response.content.decode()

    assert response.status_code == 200
    assert 'enctype="multipart/form-data"' in page
    assert 'accept=".db,.sqlite,.sqlite3,.zip"' in page
    assert "No imports yet" in page
    assert "hx-trigger" not in page  # nothing to poll


# --- bad files --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("pyrit.db", b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, "This is a PNG image, not a PyRIT"),
        ("export.json", b'{"conversations": []}', "This looks like JSON"),
        ("dbdata.tar.gz", b"\x1f\x8b\x08\x00" + b"\x00" * 40, "gzip archive"),
        ("dbdata.zip", zip_of({"../../evil.db": b"x"}), "climbs out of its folder"),
        ("dbdata.zip", zip_of({"dbdata/notes.txt": b"x"}), "holds no PyRIT database"),
        ("pyrit.db", b"", "The submitted file is empty"),
    ],
)
def test_a_wrong_file_gets_a_clear_message_and_no_job(ingest_client, settings, name, data, message):
    response = ingest_client.post(LIST, {"file": upload(name, data)})

    assert response.status_code == 400
    assert message in response.content.decode()
    assert not ImportJob.objects.exists()
    assert not (settings.MEDIA_ROOT / "imports").exists()


def test_an_upload_over_the_limit_is_refused(ingest_client, settings):
    settings.REDLINE_IMPORT_MAX_UPLOAD_BYTES = 1000
    response = ingest_client.post(LIST, {"file": upload("pyrit.db", DB_BYTES)})

    assert response.status_code == 400
    assert "uploads may be at most 1000" in response.content.decode()
    assert not ImportJob.objects.exists()


# --- a good file --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "data", "suffix"),
    [("pyrit.db", DB_BYTES, ".db"), ("my dbdata.zip", dbdata_zip(FIXTURE_110), ".zip")],
)
def test_an_upload_is_stored_and_enqueued_not_imported(
    ingest_client, ingester, django_capture_on_commit_callbacks, name, data, suffix
):
    with django_capture_on_commit_callbacks(execute=True):
        response = ingest_client.post(LIST, {"file": upload(name, data), "dry_run": "on"})

    job = ImportJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == _detail(job)
    assert job.status == ImportStatus.QUEUED
    assert (job.source_name, job.size, job.dry_run, job.created_by) == (
        name,
        len(data),
        True,
        ingester,
    )
    # Stored under the job id, never under the client's file name.
    assert job.upload.name == f"imports/{job.pk}{suffix}"
    assert job.upload.read() == data
    task = DBTaskResult.objects.get()
    assert str(task.id) == job.task_id
    assert task.task_path == "memory.transfer.uploads.tasks.run_import_job"
    assert task.args_kwargs == {"args": [str(job.pk)], "kwargs": {}}
    # Nothing was imported in the request.
    assert job.summary == {}


# --- watching a job -----------------------------------------------------------------------------


def test_a_queued_job_page_polls_its_status(ingest_client, job):
    page = ingest_client.get(_detail(job)).content.decode()

    assert f'hx-get="{_status(job)}"' in page
    assert 'hx-trigger="every 1s"' in page
    assert "Waiting for a worker" in page
    assert "manage.py db_worker" in page


def test_a_running_job_shows_phase_rows_rate_and_a_bar(ingest_client, job):
    ImportJob.objects.filter(pk=job.pk).update(
        status=ImportStatus.RUNNING,
        progress={"phase": "message_pieces", "done": 12_345, "total": 50_000, "rate": 4321.7},
    )
    response = ingest_client.get(_status(job), HTTP_HX_REQUEST="true")
    fragment = response.content.decode()

    assert "<html" not in fragment  # the partial only
    assert 'id="job-status"' in fragment and "hx-trigger" in fragment
    assert "Message_pieces" in fragment
    assert "12,345 of 50,000 rows" in fragment
    assert "4,322 rows/s" in fragment
    assert '<progress class="job-progress-bar" max="100" value="24"' in fragment


def _succeed(job, **summary):
    base = ImportSummary(
        schema="1.1.0 (alembic 8d1e3f5a7b9c)",
        rows_read={"PromptMemoryEntries": 162, "ScoreEntries": 56},
        created={"message_pieces": 162, "scores": 56},
        unchanged={"message_pieces": 0, "scores": 0},
        media_matched=9,
        media_missing=0,
        warnings=["identifier hash mismatch kept verbatim: <b>x</b>"],
        seconds=1.25,
    ).as_dict()
    ImportJob.objects.filter(pk=job.pk).update(
        status=ImportStatus.SUCCEEDED, summary={**base, **summary}, progress={"phase": "done"}
    )


def test_a_finished_job_stops_polling_and_shows_the_summary(ingest_client, job):
    _succeed(job)
    fragment = ingest_client.get(_status(job), HTTP_HX_REQUEST="true").content.decode()

    assert "hx-trigger" not in fragment
    assert "Imported in 1.3 s" in fragment
    assert '<code>PromptMemoryEntries</code></td><td class="num">162</td>' in fragment
    assert '<th>Total</th><th class="num">218</th>' in fragment
    assert '<td>scores</td><td class="num">56</td>' in fragment
    assert "174 rows/s" in fragment
    # Warnings come from the user's data: escaped.
    assert "&lt;b&gt;x&lt;/b&gt;" in fragment and "<b>x</b>" not in fragment


def test_the_missing_media_hint_offers_a_zip_only_after_a_bare_database(ingest_client, job):
    _succeed(job, media_missing=2, upload_kind="sqlite")
    page = ingest_client.get(_detail(job)).content.decode()
    assert "or import a zip of the whole dbdata folder" in page
    _succeed(job, media_missing=2, upload_kind="zip")
    page = ingest_client.get(_detail(job)).content.decode()
    assert "import a zip" not in page
    assert "this zip did not hold them where the database names them" in page


def test_refused_rows_are_called_out(ingest_client, job):
    _succeed(job, refused={"message_pieces": 3, "scores": 0})
    page = ingest_client.get(_detail(job)).content.decode()
    assert "3 row(s) could not be imported" in page


def test_a_failed_job_shows_its_error_escaped(ingest_client, job):
    ImportJob.objects.filter(pk=job.pk).update(
        status=ImportStatus.FAILED, error="not a PyRIT database: <img src=x onerror=alert(1)>"
    )
    page = ingest_client.get(_detail(job)).content.decode()

    assert "hx-trigger" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<img src=x" not in page


def test_the_job_list_escapes_names_and_polls_only_while_a_job_runs(ingest_client, ingester):
    job = import_job_create(
        upload=upload("<img src=x onerror=alert(1)>.db", DB_BYTES), kind="sqlite", user=ingester
    )
    page = ingest_client.get(LIST).content.decode()
    assert "&lt;img src=x onerror=alert(1)&gt;.db" in page
    assert 'hx-trigger="every 2s"' in page

    _succeed(job)
    fragment = ingest_client.get(LIST, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in fragment and "hx-trigger" not in fragment
    assert "1.3 s" in fragment


def test_unknown_job_is_404(ingest_client):
    assert ingest_client.get("/imports/00000000-0000-4000-8000-000000000000/").status_code == 404


def test_query_counts_do_not_grow_with_the_jobs(ingest_client, ingester):
    for index in range(3):
        import_job_create(upload=upload(f"{index}.db", DB_BYTES), kind="sqlite", user=ingester)
    few, _ = get_counted(ingest_client, LIST)
    for index in range(12):
        import_job_create(upload=upload(f"m{index}.db", DB_BYTES), kind="sqlite", user=ingester)
    many, _ = get_counted(ingest_client, LIST)

    # session, user, permission check (user + group perms), stalled running jobs (none),
    # count for the paginator, the page of jobs with their uploader joined
    assert few == many == 7
    job = ImportJob.objects.first()
    # session, user, permissions ×2, stalled running jobs, the job with its uploader
    assert get_counted(ingest_client, _status(job), HTTP_HX_REQUEST="true")[0] == 6
