"""manage.py export_memory: files, stdout, formats, media zip, errors."""

from __future__ import annotations

import json
import re
import zipfile

import pytest
from django.core.management import CommandError, call_command

from memory.demo import demo_load
from memory.transfer.exporters.document import MemoryExport
from tests.exporters.conftest import EXPORT_110, export_bytes, ingest_ok, read_zip

pytestmark = pytest.mark.django_db


@pytest.fixture
def memory_110():
    ingest_ok(json.loads(EXPORT_110.read_text()))


def test_writes_the_document_to_a_file(memory_110, tmp_path, capsys):
    out = tmp_path / "memory.json"

    call_command("export_memory", "--out", str(out))

    assert out.read_bytes() == export_bytes()
    err = capsys.readouterr().err
    assert (
        "Exported 38 conversations, 0 scorable_contents, 2 scores, 1 scenario_results, "
        "24 attack_results, 4 seed_datasets, 2 seeds, 15 seed_groups"
    ) in err
    assert f"to {out}" in err
    assert [p.name for p in tmp_path.iterdir()] == ["memory.json"]


def test_writes_to_stdout_by_default(memory_110, capsysbinary):
    call_command("export_memory", "--format", "jsonl", "--attack-class", "RedTeamingAttack")

    out = capsysbinary.readouterr().out
    assert out == export_bytes(fmt="jsonl", attack_class="RedTeamingAttack")
    assert out.count(b"\n") > 2


def test_filters(memory_110, tmp_path):
    out = tmp_path / "slice.json"

    call_command(
        "export_memory",
        "--out",
        str(out),
        "--label",
        "operation:op_seed_groups",
        "--since",
        "2026-01-01",
    )

    doc = json.loads(out.read_bytes())
    assert doc["attack_results"]
    assert all(a["labels"]["operation"] == "op_seed_groups" for a in doc["attack_results"])
    assert doc["seeds"] == []


def test_with_media_writes_a_zip(tmp_path):
    demo_load()
    out = tmp_path / "memory.zip"

    call_command("export_memory", "--out", str(out), "--with-media")

    assert zipfile.is_zipfile(out)
    document, manifest, members = read_zip(out.read_bytes())
    assert json.loads(document)["conversations"]
    assert manifest["media"]
    for entry in manifest["media"]:
        assert len(members[entry["file"]]) == entry["size"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--with-media"], "--with-media writes a zip; name the file with --out FILE.zip"),
        (["--since", "yesterday"], "since: 'yesterday' is not a date"),
        (["--label", "nocolon"], "label: 'nocolon' is not a label filter"),
        (["--out", "/nonexistent-folder/x.json"], "/nonexistent-folder is not a folder"),
        (["--chunk-size", "0"], "--chunk-size must be at least 1"),
    ],
)
def test_bad_arguments_are_one_clear_error(args, message):
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("export_memory", *args)


def test_a_failure_mid_way_leaves_no_file(memory_110, tmp_path, monkeypatch):
    def broken(self):
        yield iter(("{",))
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(MemoryExport, "_seeds", broken)
    out = tmp_path / "memory.json"

    with pytest.raises(RuntimeError, match="disk on fire"):
        call_command("export_memory", "--out", str(out))

    assert list(tmp_path.iterdir()) == []
