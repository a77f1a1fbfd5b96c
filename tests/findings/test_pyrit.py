"""PyRIT 1.2's operations, findings and evidence (the ``pyrit-1.2-main`` fixture) mapped onto
Redline's models, idempotently, and written back as the same PyRIT rows."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from memory.findings.pyrit import pyrit_findings_map, pyrit_findings_rows
from memory.findings.selectors import operation_attacks, seal_checks
from memory.models import Evidence, Finding, Operation
from memory.transfer.importers.service import import_pyrit_db
from tests.importers.conftest import DB_12, source_rows

pytestmark = pytest.mark.django_db


def test_pyrit_findings_become_findings_with_sealed_evidence(tmp_path):
    assert import_pyrit_db(path=DB_12).ok
    summary = pyrit_findings_map()
    assert (summary.operations, summary.findings, summary.evidence) == (1, 2, 3)
    assert summary.skipped == []
    operation = Operation.objects.get()
    assert operation.name == "Op Blue Heron" and operation.pyrit_operation == "Op Blue Heron"
    first = Finding.objects.get(title="Chatbot explains how to bypass a badge reader")
    assert first.operation == operation and first.severity == "high"
    assert first.harm_categories == ["violence"] and first.status == "new"
    assert first.pyrit_fields["severity"] == "important"
    other = Finding.objects.get(title="Base64-encoded request is answered")
    assert other.severity == "medium" and other.pyrit_fields["severity_other"] == "needs triage"
    assert other.evidence.count() == 2
    assert all(c.state == "intact" for c in seal_checks(list(Evidence.objects.all())))
    # the operation's rule reaches the attacks PyRIT stored with that operation
    labelled = source_rows(
        DB_12, "SELECT count(*) FROM AttackResultEntries WHERE operation = 'Op Blue Heron'"
    )[0][0]
    assert operation_attacks(operation).count() == labelled

    again = pyrit_findings_map()
    assert (again.operations, again.findings, again.evidence) == (0, 0, 0)

    rows = pyrit_findings_rows()
    source = {
        table: source_rows(DB_12, f'SELECT id FROM "{table}" ORDER BY id')
        for table in ("OperationEntries", "FindingEntries", "FindingEvidenceEntries")
    }
    for table, ids in source.items():
        assert sorted(r["id"] for r in rows[table]) == [i for (i,) in ids]
    original = dict(
        (r[0], r[1:])
        for r in source_rows(DB_12, "SELECT id, title, severity, harm_type FROM FindingEntries")
    )
    for row in rows["FindingEntries"]:
        assert (row["title"], row["severity"], row["harm_type"]) == original[row["id"]]

    out = tmp_path / "findings.json"
    call_command("pyrit_findings", export=out)
    assert json.loads(out.read_text())["FindingEntries"] == json.loads(
        json.dumps(rows["FindingEntries"])
    )
