"""Helpers for export tests: run an export to bytes, count what a database holds, re-import."""

from __future__ import annotations

import importlib
import io
import json
import zipfile
from typing import Any

from memory.models import (
    AttackResult,
    ComponentIdentifier,
    Conversation,
    MediaBlob,
    MessagePiece,
    RelatedConversation,
    ScenarioResult,
    ScorableContent,
    Score,
)
from memory.models.media import media_store
from memory.storage.media import media_attach
from memory.transfer.exporters.profiles import export_profile
from memory.transfer.exporters.selection import export_filters
from memory.transfer.exporters.stream import memory_export_stream
from memory.transfer.ingest.service import ingest
from seeds.models import Seed, SeedGroup
from tests.conftest import FIXTURES_DIR

EXPORT_110 = FIXTURES_DIR / "pyrit-1.1.0-small" / "export.json"
EXPORT_012 = FIXTURES_DIR / "pyrit-0.12.1-legacy" / "export.json"

STORED = {
    "conversations": Conversation,
    "pieces": MessagePiece,
    "scores": Score,
    "scorable_contents": ScorableContent,
    "attack_results": AttackResult,
    "related": RelatedConversation,
    "scenario_results": ScenarioResult,
    "seeds": Seed,
    "seed_groups": SeedGroup,
    "identifiers": ComponentIdentifier,
    "media": MediaBlob,
}


def stored_counts() -> dict[str, int]:
    """Rows per stored kind."""
    return {name: model.objects.count() for name, model in STORED.items()}


def export_bytes(
    *, fmt: str = "json", with_media: bool = False, profile: str | None = None, **filters: Any
) -> bytes:
    """Run an export as the command and the API do, and return all of its bytes."""
    stream = memory_export_stream(
        filters=export_filters(**filters),
        fmt=fmt,
        with_media=with_media,
        chunk_size=7,
        profile=export_profile(name=profile),
    )
    return b"".join(stream.chunks)


def export_doc(*, profile: str | None = None, **filters: Any) -> dict[str, Any]:
    """The JSON export document, parsed."""
    return json.loads(export_bytes(profile=profile, **filters))


def ingest_ok(payload: Any) -> dict[str, Any]:
    """Ingest ``payload``; fail the test with the first problems if it is refused."""
    report = ingest(payload=payload)
    assert report.ok, report.errors[:5]
    return report.counts


def read_zip(data: bytes) -> tuple[bytes, dict[str, Any], dict[str, bytes]]:
    """(document bytes, manifest, {member name: bytes}) of an export zip."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.testzip() is None
        members = {name: archive.read(name) for name in archive.namelist()}
    manifest = json.loads(members["manifest.json"])
    return members[manifest["document"]], manifest, members


def import_zip(data: bytes) -> None:
    """Re-import an export zip as docs/export.md tells a user to: the document, then each
    media file with each of its locations."""
    document, manifest, members = read_zip(data)
    ingest_ok(json.loads(document))
    for entry in manifest["media"]:
        blob = media_store(data=members[entry["file"]])
        for location in entry["locations"]:
            media_attach(blob=blob, location=location)
        if not entry["locations"]:
            media_attach(blob=blob)


#: How a row of each model is named across databases (auto-increment keys differ).
NATURAL_KEYS = {
    "Conversation": ("conversation_id",),
    "Message": ("conversation__conversation_id", "sequence"),
    "ComponentIdentifier": ("hash",),
    "MediaBlob": ("sha256",),
    "Label": ("key", "value"),
    "HarmCategory": ("name",),
    "SeedDataset": ("name",),
}
#: What a database holds that an export does not carry on purpose: its own bookkeeping
#: (times of writing, import jobs, history), reviewers' verdicts, where media bytes came
#: from (a re-import names them by the export's file names), and the dashboards' rollups
#: (counts by identifier id, kept by triggers; tests/dashboards/test_rollups.py checks them).
NOT_EXPORTED = {
    "ImportJob",
    "HumanVerdict",
    "MediaLocation",
} | {
    # The dashboards' rollups: counts the triggers keep, keyed by database ids.
    model.__name__
    for model in vars(importlib.import_module("memory.models.rollups")).values()
    if isinstance(model, type)
    and model.__module__ == "memory.models.rollups"
    and model.__name__.endswith("Rollup")
}
BOOKKEEPING_FIELDS = {"created_at", "updated_at"}
#: A blob's storage name and the location it first arrived under: a re-import names the bytes
#: by the export's file names, and an earlier test's files may still hold the plain name.
MEDIA_PROVENANCE = {("MediaBlob", "file"), ("MediaBlob", "original_name")}


def _lookups(model) -> list[str]:
    lookups = []
    for field in model._meta.concrete_fields:
        if field.name in BOOKKEEPING_FIELDS or (model.__name__, field.name) in MEDIA_PROVENANCE:
            continue
        if field.primary_key and field.get_internal_type() in ("AutoField", "BigAutoField"):
            continue
        if field.is_relation:
            natural = NATURAL_KEYS.get(field.related_model.__name__)
            lookups += [f"{field.name}__{key}" for key in natural] if natural else [field.attname]
        else:
            lookups.append(field.attname)
    return lookups


def database_snapshot() -> dict[str, list[tuple]]:
    """Every row of every memory and seed model, keyed by natural values instead of database
    keys, sorted: two databases holding the same memory give equal snapshots."""
    from django.apps import apps

    snapshot = {}
    for app in ("memory", "seeds"):
        for model in apps.get_app_config(app).get_models():
            name = model.__name__
            if name.startswith("Historical") or name in NOT_EXPORTED:
                continue
            rows = model._default_manager.values_list(*_lookups(model))
            snapshot[name] = sorted(map(repr, rows))
    return snapshot
