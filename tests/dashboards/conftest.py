"""Fixtures for the dashboard tests: PyRIT's own fixture memory, helpers to query it."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from django.http import QueryDict

from memory.dashboards.widgets import DashboardRequest
from memory.models import AttackResult
from memory.storage.filters import AttackResultFilter
from memory.transfer.ingest.service import ingest
from tests.conftest import FIXTURES_DIR

EXPORT_110 = FIXTURES_DIR / "pyrit-1.1.0-small" / "export.json"


def dash(query: str = "") -> DashboardRequest:
    """A validated dashboard request for a query string."""
    request = DashboardRequest.from_query(QueryDict(query))
    assert request.valid, request.errors
    return request


def filtered_ids(query: str) -> set[str]:
    """Ids of the attacks the shared attack filter returns for ``query`` (a drill-down)."""
    filterset = AttackResultFilter(QueryDict(query), queryset=AttackResult.objects.all())
    assert filterset.is_valid(), filterset.errors
    return {str(pk) for pk in filterset.qs.values_list("pk", flat=True)}


@pytest.fixture
def pyrit_memory(db):
    """PyRIT 1.1.0's fixture export ingested through the one ingestion service."""
    export = json.loads(EXPORT_110.read_text())
    report = ingest(payload=export, partial=False)
    assert not report.errors
    return SimpleNamespace(export=export, report=report)
