"""Keyed evidence seals: whoever can write the database but lacks the seal key cannot change
memory and reseal it to look intact; a rotated key stays verifiable while configured; a plain
SHA-256 seal from before keys is reported as legacy, never as intact (docs/findings.md)."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connection

from memory.findings import seal
from memory.findings.selectors import seal_checks
from memory.findings.services import EvidenceSpec, evidence_reseal, finding_create
from memory.models import Evidence, MessagePiece

pytestmark = pytest.mark.django_db

KEY = "seal-key-one-0123456789abcdefghijklmnopqrstuvwxyz"
KEY_TWO = "seal-key-two-0123456789abcdefghijklmnopqrstuvwxyz"


@pytest.fixture
def keyed(settings):
    settings.REDLINE_SEAL_KEY = KEY
    settings.REDLINE_SEAL_KEYS_OLD = []
    return settings


def _evidence(build, reviewer):
    built = build()
    finding = finding_create(
        actor=reviewer,
        title="Badge reader bypass",
        severity="high",
        evidence=[EvidenceSpec("attack", str(built.attack.pk))],
    )
    return built, Evidence.objects.get(finding=finding)


def _state(evidence):
    [check] = seal_checks([Evidence.objects.get(pk=evidence.pk)])
    return check


def _tamper(built):
    """Change the response as someone with database access would: a plain UPDATE."""
    MessagePiece.objects.filter(pk=built.response.pk).update(converted_value="No, I cannot.")


def _reseal_without_key(evidence, *, key_id):
    """What a database writer without the key can do: recompute every seal it knows how to."""
    document = seal.seal_documents([seal.Target("attack", evidence.attack_result_id)])
    document = document[seal.Target("attack", evidence.attack_result_id)]
    guessed_key = seal.SealKey(key_id, b"a guess at the key")
    forged = seal._mac(document, guessed_key)
    Evidence.objects.filter(pk=evidence.pk).update(sealed=document, seal=forged, seal_key_id=key_id)
    return document


def test_a_seal_is_an_hmac_under_the_configured_key_and_names_it(keyed, build, reviewer):
    _, evidence = _evidence(build, reviewer)
    current, _ = seal.seal_keys()
    assert evidence.seal_key_id == current.key_id
    assert KEY not in evidence.seal_key_id
    assert evidence.seal != seal.seal_of(evidence.sealed)
    assert _state(evidence).state == "intact"


def test_tamper_and_reseal_without_the_key_stays_broken(keyed, build, reviewer):
    built, evidence = _evidence(build, reviewer)
    _tamper(built)
    assert _state(evidence).state == "broken"

    # recomputed under a wrong key, with the stored copy rewritten to match
    _reseal_without_key(evidence, key_id=evidence.seal_key_id)
    assert _state(evidence).state == "broken"

    # recomputed as the old plain SHA-256 (the pre-key seal), key id cleared: not intact
    document = Evidence.objects.get(pk=evidence.pk).sealed
    Evidence.objects.filter(pk=evidence.pk).update(seal=seal.seal_of(document), seal_key_id="")
    check = _state(evidence)
    assert check.state == "legacy"
    assert check.label == "Legacy seal (unkeyed)"

    # named an invented key: it cannot be verified, and is not intact either
    Evidence.objects.filter(pk=evidence.pk).update(seal_key_id="0123456789abcdef")
    assert _state(evidence).state == "unknown_key"


def test_a_reseal_through_redline_with_the_key_is_intact_again(keyed, build, reviewer):
    built, evidence = _evidence(build, reviewer)
    _tamper(built)
    evidence_reseal(evidence=evidence, actor=reviewer, reason="the response was corrected")
    assert _state(evidence).state == "intact"


def test_a_rotated_key_verifies_while_it_is_listed_as_old(keyed, build, reviewer):
    _, evidence = _evidence(build, reviewer)
    keyed.REDLINE_SEAL_KEY = KEY_TWO
    assert _state(evidence).state == "unknown_key"
    keyed.REDLINE_SEAL_KEYS_OLD = [KEY]
    assert _state(evidence).state == "intact"
    # new seals use the new key
    _, newer = _evidence(build, reviewer)
    assert newer.seal_key_id == seal.seal_keys()[0].key_id != evidence.seal_key_id


def test_a_rotated_key_s_seal_of_changed_memory_is_broken_even_when_the_key_is_gone(
    keyed, build, reviewer
):
    built, evidence = _evidence(build, reviewer)
    keyed.REDLINE_SEAL_KEY = KEY_TWO
    _tamper(built)
    check = _state(evidence)
    assert check.state == "broken"
    assert "conversation.pieces[1].converted_value" in check.changed


def test_without_a_seal_key_the_key_is_derived_from_secret_key(settings, build, reviewer):
    settings.REDLINE_SEAL_KEY = ""
    settings.SECRET_KEY = "s" * 60
    _, evidence = _evidence(build, reviewer)
    assert _state(evidence).state == "intact"
    # rotating SECRET_KEY keeps the seals verifiable only with the old one as a fallback
    settings.SECRET_KEY = "t" * 60
    assert _state(evidence).state == "unknown_key"
    settings.SECRET_KEY_FALLBACKS = ["s" * 60]
    assert _state(evidence).state == "intact"


def test_an_existing_plain_seal_is_legacy_and_a_changed_one_broken(keyed, build, reviewer):
    built, evidence = _evidence(build, reviewer)
    # as migration 0029 leaves seals made before it: plain SHA-256, no key id
    Evidence.objects.filter(pk=evidence.pk).update(
        seal=seal.seal_of(evidence.sealed), seal_key_id=""
    )
    assert _state(evidence).state == "legacy"
    _tamper(built)
    assert _state(evidence).state == "broken"


def test_the_finding_page_and_api_say_legacy(keyed, build, reviewer, client):
    _, evidence = _evidence(build, reviewer)
    Evidence.objects.filter(pk=evidence.pk).update(
        seal=seal.seal_of(evidence.sealed), seal_key_id=""
    )
    client.force_login(reviewer)
    page = client.get(f"/findings/{evidence.finding_id}/").content.decode()
    assert "Legacy seal (unkeyed)" in page
    assert "Seal intact" not in page
    body = client.get(f"/api/v1/findings/{evidence.finding_id}/").json()
    assert body["evidence"][0]["seal_state"] == "legacy"
    assert body["evidence"][0]["seal_key_id"] == ""


def test_the_deploy_check_warns_without_a_seal_key(settings):
    settings.REDLINE_SEAL_KEY = ""
    with pytest.raises(SystemCheckError, match=r"redline\.W001"):
        call_command("check", "--deploy", "--fail-level", "WARNING", "--tag", "security")
    settings.REDLINE_SEAL_KEY = "short"
    with pytest.raises(SystemCheckError, match=r"redline\.W002"):
        call_command("check", "--deploy", "--fail-level", "WARNING", "--tag", "security")


def test_the_key_column_exists_as_migrated():
    columns = {
        c.name
        for c in connection.introspection.get_table_description(
            connection.cursor(), Evidence._meta.db_table
        )
    }
    assert "seal_key_id" in columns
