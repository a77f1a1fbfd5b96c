"""Findings, evidence seals, the lifecycle, retests and the deletion guard."""

from __future__ import annotations

import pytest

from memory.findings import lifecycle
from memory.findings.selectors import operation_attacks, retest_suggestions, seal_checks
from memory.findings.services import (
    EvidenceSpec,
    evidence_attach,
    finding_comment_add,
    finding_create,
    finding_status_set,
    finding_update,
    operation_save,
    retest_record,
)
from memory.models import AttackResult, Evidence, Finding, FindingStatus, MessagePiece
from memory.storage.services import human_score_add, memory_delete, piece_correct
from redteam.core.choices import AttackOutcome
from redteam.core.errors import InvalidMemory

pytestmark = pytest.mark.django_db


def _finding(built, reviewer, **fields):
    return finding_create(
        actor=reviewer,
        title="Badge reader bypass",
        severity="high",
        evidence=[EvidenceSpec("attack", str(built.attack.pk))],
        **fields,
    )


def test_a_finding_remembers_the_configuration_and_seals_its_evidence(build, reviewer, strategy):
    built = build()
    finding = _finding(built, reviewer)
    assert finding.found_eval_hash == strategy.eval_hash
    assert finding.found_target_hash == built.attack.conversation.target_identifier.hash
    evidence = Evidence.objects.get(finding=finding)
    assert evidence.conversation_id == built.attack.conversation_id
    assert len(evidence.seal) == 64
    pieces = evidence.sealed["conversation"]["pieces"]
    assert [p["converted_value"] for p in pieces][1].startswith("Sure")
    assert pieces[1]["scores"][0]["score_value"] == "true"
    [check] = seal_checks([evidence])
    assert check.state == "intact"
    # history: created by the reviewer
    assert finding.history.first().history_user == reviewer


def test_a_changed_piece_breaks_the_seal_and_says_where(build, reviewer, superuser):
    built = build()
    finding = _finding(built, reviewer)
    piece_correct(piece=built.response, actor=superuser, reason="test", converted_value="No.")
    [check] = seal_checks(list(finding.evidence.all()))
    assert check.state == "broken"
    assert "conversation.pieces[1].converted_value" in check.changed
    assert "conversation.pieces[1].converted_value_sha256" in check.changed


def test_a_human_score_added_later_keeps_the_seal(build, reviewer):
    built = build()
    finding = _finding(built, reviewer)
    human_score_add(
        piece=built.response,
        score_type="true_false",
        value="true",
        rationale="agree",
        reviewer=reviewer,
    )
    assert seal_checks(list(finding.evidence.all()))[0].state == "intact"


def test_each_kind_of_evidence_is_sealed(build, reviewer):
    built = build()
    finding = finding_create(
        actor=reviewer,
        title="Several kinds",
        evidence=[
            EvidenceSpec("conversation", built.attack.conversation.conversation_id),
            EvidenceSpec("piece", str(built.response.pk)),
            EvidenceSpec("score", str(built.score.pk)),
        ],
    )
    checks = seal_checks(list(finding.evidence.all()))
    assert [c.state for c in checks] == ["intact"] * 3
    # the conversation's attack stands in as the configuration it was found with
    assert finding.found_eval_hash is not None


def test_evidence_is_refused_when_it_does_not_exist_or_is_attached_twice(build, reviewer):
    built = build()
    with pytest.raises(InvalidMemory) as error:
        finding_create(
            actor=reviewer,
            title="x",
            evidence=[
                EvidenceSpec("attack", "not-a-uuid"),
                EvidenceSpec("piece", str(built.attack.pk)),
            ],
        )
    assert {p.path for p in error.value.problems} == {"evidence[0].ref", "evidence[1].ref"}
    finding = _finding(built, reviewer)
    with pytest.raises(InvalidMemory):
        evidence_attach(
            finding=finding, evidence=[EvidenceSpec("attack", str(built.attack.pk))], actor=reviewer
        )


def test_memory_that_is_evidence_needs_force_to_delete_and_then_shows_missing(
    build, reviewer, superuser
):
    built = build()
    finding = _finding(built, reviewer)
    pieces = MessagePiece.objects.filter(pk=built.response.pk)
    with pytest.raises(InvalidMemory) as error:
        memory_delete(queryset=pieces, actor=superuser, reason="cleanup")
    assert "evidence of a finding" in str(error.value)
    attacks = AttackResult.objects.filter(pk=built.attack.pk)
    with pytest.raises(InvalidMemory):
        memory_delete(queryset=attacks, actor=superuser, reason="cleanup")
    memory_delete(queryset=attacks, actor=superuser, reason="wrong instance", force=True)
    evidence = Evidence.objects.get(finding=finding)
    assert evidence.attack_result_id is None
    assert seal_checks([evidence])[0].state == "missing"


def test_the_lifecycle_is_enforced_and_recorded(build, reviewer):
    finding = _finding(build(), reviewer)
    with pytest.raises(InvalidMemory):
        finding_status_set(finding=finding, status=FindingStatus.MITIGATED, actor=reviewer)
    for status in (FindingStatus.CONFIRMED, FindingStatus.REPORTED, FindingStatus.MITIGATED):
        finding = finding_status_set(
            finding=finding, status=status, actor=reviewer, note=f"now {status}"
        )
    assert finding.status == FindingStatus.MITIGATED
    reasons = [h.history_change_reason for h in finding.history.order_by("history_date")]
    assert reasons[-1] == "now mitigated"
    assert finding.comments.count() == 3
    assert lifecycle.next_statuses(FindingStatus.NEW) == ["confirmed", "false_positive", "wont_fix"]


def test_update_and_comments_are_in_the_history(build, reviewer, viewer):
    finding = _finding(build(), reviewer)
    finding = finding_update(
        finding=finding, actor=reviewer, severity="critical", owner=viewer, framework_tags=["a"]
    )
    assert finding.severity == "critical" and finding.owner == viewer
    newest, older = finding.history.order_by("-history_date")[:2]
    changed = {c.field for c in newest.diff_against(older).changes}
    assert {"severity", "owner", "framework_tags"} <= changed
    comment = finding_comment_add(finding=finding, author=viewer, body="seen")
    assert comment.author_name == "vera"
    with pytest.raises(InvalidMemory):
        finding_update(finding=finding, actor=reviewer, status="new")
    with pytest.raises(InvalidMemory):
        finding_update(finding=finding, actor=reviewer, severity="dire")


def test_a_later_attack_of_the_same_configuration_is_a_retest(build, reviewer, target):
    from tests.factories import make_identifier

    found = build()
    finding = _finding(found, reviewer)
    later_fail = build(outcome=AttackOutcome.FAILURE, minutes=60)
    build(minutes=-60)  # earlier: not a retest
    other = make_identifier("OpenAIChatTarget", model_name="other-model")
    build(minutes=90, conversation_target=other)  # another target
    assert list(retest_suggestions(finding)) == [later_fail.attack]
    for status in (FindingStatus.CONFIRMED, FindingStatus.MITIGATED):
        finding = finding_status_set(finding=finding, status=status, actor=reviewer)
    retest = retest_record(finding=finding, attack=later_fail.attack, actor=reviewer)
    assert retest.result == "passed"
    finding.refresh_from_db()
    assert finding.status == FindingStatus.RETEST_PASSED
    assert list(retest_suggestions(finding)) == []
    # a regression: the same configuration succeeds again
    again = build(minutes=120)
    retest_record(finding=finding, attack=again.attack, actor=reviewer)
    finding.refresh_from_db()
    assert finding.status == FindingStatus.RETEST_FAILED


def test_a_retest_must_repeat_the_configuration(build, reviewer):
    from tests.factories import make_identifier

    finding = _finding(build(), reviewer)
    unrelated = build(outcome=AttackOutcome.FAILURE, attack_identifier=make_identifier("X"))
    with pytest.raises(InvalidMemory) as error:
        retest_record(finding=finding, attack=unrelated.attack, actor=reviewer)
    assert "eval hash" in str(error.value)


def test_an_operation_selects_its_attacks_by_label_column_or_filter(build, reviewer):
    mine = build(operation="Op Blue Heron")
    build(operation="Other op")
    label_only = build(operation=None, harm="cybercrime")
    op = operation_save(actor=reviewer, name="Blue Heron", pyrit_operation="Op Blue Heron")
    assert list(operation_attacks(op)) == [mine.attack]
    by_filter = operation_save(
        actor=reviewer, name="Cyber", attack_filter="harm_category=cybercrime"
    )
    assert list(operation_attacks(by_filter)) == [label_only.attack]
    with pytest.raises(InvalidMemory) as error:
        operation_save(actor=reviewer, name="Bad", attack_filter="timestamp_after=yesterday")
    assert error.value.problems[0].path == "attack_filter.timestamp_after"
    with pytest.raises(InvalidMemory):
        operation_save(actor=reviewer, name="Blue Heron")
    assert not operation_attacks(operation_save(actor=reviewer, name="No rule")).exists()


def test_constraints_hold_in_the_database(build, reviewer):
    from django.db import IntegrityError, transaction

    finding = _finding(build(), reviewer)
    for field, value in (("severity", "dire"), ("status", "open"), ("title", "")):
        with pytest.raises(IntegrityError), transaction.atomic():
            Finding.objects.filter(pk=finding.pk).update(**{field: value})
