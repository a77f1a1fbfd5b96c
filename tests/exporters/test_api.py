"""GET /api/v1/export/: auth, permissions, formats, streaming, errors, schema, query count."""

from __future__ import annotations

import io
import json
import re
import uuid
import zipfile

import pytest
from django.http import StreamingHttpResponse
from django.test import Client

from redteam.tokens import api_token_create
from tests.conftest import logged_in
from tests.exporters.conftest import EXPORT_110, export_bytes, ingest_ok
from tests.queries import count_queries

pytestmark = pytest.mark.django_db

URL = "/api/v1/export/"


@pytest.fixture
def memory_110():
    ingest_ok(json.loads(EXPORT_110.read_text()))


def _body(response) -> bytes:
    assert isinstance(response, StreamingHttpResponse)
    return b"".join(response.streaming_content)


def test_anonymous_gets_401():
    response = Client().get(URL)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_user_without_view_permissions_gets_403(member):
    assert logged_in(member(username="nobody")).get(URL).status_code == 403


def test_viewer_session_streams_the_same_document_as_the_command(viewer_client, memory_110):
    response = viewer_client.get(URL)

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert re.fullmatch(
        r'attachment; filename="redline-export-\d{8}T\d{6}Z\.json"',
        response["Content-Disposition"],
    )
    body = _body(response)
    assert json.loads(body)["export_format"] == "redline-export/1"
    assert body == export_bytes()


def test_read_scope_token_may_export(member, memory_110):
    _, raw = api_token_create(user=member("viewer", username="bot"), scope="read")
    response = Client(HTTP_AUTHORIZATION=f"Bearer {raw}").get(URL, {"format": "jsonl"})

    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-ndjson"
    lines = _body(response).decode().splitlines()
    assert json.loads(lines[0]) == {"export_format": "redline-export/1"}
    # header + 38 conversations, 2 loose scores (on converted pieces, not originals),
    # 1 scenario, 24 attacks, 4 seed datasets, 2 seeds, 15 groups
    assert len(lines) == 1 + 38 + 2 + 1 + 24 + 4 + 2 + 15


def test_filters_are_the_commands(viewer_client, memory_110):
    params = {"attack_class": "RedTeamingAttack", "since": "2026-01-01", "labels": "op:x"}
    response = viewer_client.get(URL, {**params, "labels": ["operation:op_blue_heron"]})

    assert response.status_code == 200
    assert _body(response) == export_bytes(
        attack_class="RedTeamingAttack", since="2026-01-01", labels=["operation:op_blue_heron"]
    )


def test_profile_gives_the_commands_profile_document(viewer_client, memory_110):
    response = viewer_client.get(URL, {"profile": "pyrit-1.1", "format": "jsonl"})

    assert response.status_code == 200
    body = _body(response)
    assert body == export_bytes(fmt="jsonl", profile="pyrit-1.1")
    assert body.startswith(b'{"export_format":"redline-export/1+pyrit-1.1"}\n')


def test_profile_pyrit_0_12_is_the_commands_document_with_its_note(viewer_client, memory_110):
    response = viewer_client.get(URL, {"profile": "pyrit-0.12"})

    assert response.status_code == 200
    body = _body(response)
    assert body == export_bytes(profile="pyrit-0.12")
    document = json.loads(body)
    assert document["note"].startswith("PyRIT 0.12.1 profile.")
    assert document["message_pieces"][0]["timestamp"].endswith("+00:00")
    assert "error" not in {a["outcome"] for a in document["attack_results"]}


def test_with_media_is_a_zip(viewer_client, memory_110):
    response = viewer_client.get(URL, {"with_media": "true", "format": "jsonl"})

    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"].endswith('.zip"')
    with zipfile.ZipFile(io.BytesIO(_body(response))) as archive:
        assert {"export.jsonl", "manifest.json"} <= set(archive.namelist())


@pytest.mark.parametrize(
    ("params", "key", "text"),
    [
        ({"since": "soon"}, "detail", "since: 'soon' is not a date"),
        ({"labels": "operator"}, "detail", "not a label filter"),
        ({"with_media": "maybe"}, "with_media", "not a boolean"),
        ({"format": "xml"}, "format", "use json or jsonl"),
        ({"profile": "pyrit-2.0"}, "profile", "'pyrit-2.0' is not a profile; use one of redline"),
        ({"conversation_id": "x\x00"}, "detail", "null characters"),
    ],
)
def test_bad_parameters_are_400_with_a_message(viewer_client, params, key, text):
    response = viewer_client.get(URL, params)

    assert response.status_code == 400
    assert text in json.dumps(response.json()[key])


def test_openapi_documents_the_endpoint(viewer_client):
    schema = viewer_client.get("/api/schema/", {"format": "json"}).json()
    operation = schema["paths"]["/api/v1/export/"]["get"]

    names = {p["name"] for p in operation["parameters"]}
    assert {"format", "conversation_id", "labels", "attack_class", "since", "with_media"} <= names
    (profile,) = [p for p in operation["parameters"] if p["name"] == "profile"]
    assert set(profile["schema"]["enum"]) == {"redline", "pyrit-1.1", "pyrit-0.12"}
    assert profile["schema"]["default"] == "redline"
    assert {"application/json", "application/x-ndjson", "application/zip"} <= set(
        operation["responses"]["200"]["content"]
    )


def _renamed(text: str) -> str:
    """The same memory under new ids: every UUID (pieces, conversations, scores, attacks,
    scenario, seeds, groups) mapped to a fresh one, consistently."""
    mapping: dict[str, str] = {}

    def fresh(match: re.Match) -> str:
        return mapping.setdefault(match.group(0), str(uuid.uuid4()))

    return re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", fresh, text)


def _exported(client) -> bytes:
    response = client.get(URL)
    assert response.status_code == 200
    return _body(response)


def _export_queries(client) -> int:
    """The queries of a whole export: its body streams inside the count."""
    return count_queries(_exported, client)[0]


def test_query_count_does_not_grow_with_the_memory(viewer_client, memory_110):
    once = _export_queries(viewer_client)
    ingest_ok(json.loads(_renamed(EXPORT_110.read_text())))

    twice = _export_queries(viewer_client)

    # 4 auth (session, user, user and group permissions); conversations 6 (rows, pieces,
    # converter links, scores, identifiers by tree level ×2); scorable contents 1 (rows;
    # none here); loose scores 2 (rows, identifiers); scenarios 3 (rows, identifiers ×2);
    # their attack results 9 and the attack results 9 (rows, related conversations, last
    # responses, their converter links, their scores, last scores, identifiers ×3); seed
    # datasets 1; seeds 1; seed groups 2 (rows, seeds); verbatim PyRIT rows 1.
    # Both memories fit in one chunk (200 rows): twice the rows, the same queries.
    assert twice == once
    assert once == 4 + 6 + 1 + 2 + 3 + 9 + 9 + 1 + 1 + 2 + 1
