"""The framework crosswalk: loading the shipped file, admin edits, and suggested finding tags."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.urls import reverse

from memory.findings.selectors import tag_suggestions
from memory.findings.services import EvidenceSpec, finding_create
from memory.models import (
    CrosswalkLoad,
    CrosswalkMapping,
    Finding,
    Framework,
    FrameworkEntry,
)
from memory.storage.crosswalk import (
    CrosswalkData,
    crosswalk_load,
    parse_crosswalk,
    shipped_crosswalk,
)
from tests.conftest import logged_in
from tests.factories import make_identifier
from tests.markdown import gfm_html
from tests.queries import count_queries

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def shipped(db):
    # Loaded by the migration; loaded again in case a transactional test flushed the tables.
    crosswalk_load()


# --- the shipped data ----------------------------------------------------------------------


def test_the_shipped_file_names_the_2025_owasp_list_and_the_twelve_nist_risks():
    data = shipped_crosswalk()
    entries = {f["key"]: {e["code"]: e["title"] for e in f["entries"]} for f in data.frameworks}
    assert entries["owasp-llm"] == {
        "LLM01": "Prompt Injection",
        "LLM02": "Sensitive Information Disclosure",
        "LLM03": "Supply Chain",
        "LLM04": "Data and Model Poisoning",
        "LLM05": "Improper Output Handling",
        "LLM06": "Excessive Agency",
        "LLM07": "System Prompt Leakage",
        "LLM08": "Vector and Embedding Weaknesses",
        "LLM09": "Misinformation",
        "LLM10": "Unbounded Consumption",
    }
    assert len(entries["nist-ai-600-1"]) == 12
    assert entries["atlas"]["AML.T0051"] == "LLM Prompt Injection"
    assert entries["atlas"]["AML.T0054"] == "LLM Jailbreak"
    assert entries["atlas"]["AML.T0057"] == "LLM Data Leakage"
    # Every PyRIT attack class the issue names is mapped, jailbreaks to AML.T0054.
    techniques = {value: tag for kind, value, tag in data.rows if kind == "attack_technique"}
    for name in (
        "PromptSendingAttack",
        "CrescendoAttack",
        "TreeOfAttacksWithPruningAttack",
        "RedTeamingAttack",
        "ManyShotJailbreakAttack",
        "SkeletonKeyAttack",
        "FlipAttack",
        "RolePlayAttack",
        "ContextComplianceAttack",
    ):
        assert name in techniques
    jailbreaks = {v for k, v, t in data.rows if t == "atlas:AML.T0054"}
    assert "CrescendoAttack" in jailbreaks and "PromptSendingAttack" not in jailbreaks


def test_the_migration_loaded_the_shipped_version():
    data = shipped_crosswalk()
    assert CrosswalkLoad.objects.filter(version=data.version).exists()
    assert CrosswalkMapping.objects.filter(origin="shipped").count() == len(data.rows)
    assert FrameworkEntry.objects.get(tag="owasp-llm:LLM07").title == "System Prompt Leakage"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("frameworks: []", "version"),
        ('version: "1"\nframeworks: [{key: "a:b"}]', "without a colon"),
        (
            'version: "1"\nframeworks: [{key: x, entries: [{code: A, title: T}]}]\n'
            "harm_categories: {hate: {tags: [x:B]}}",
            "no entry 'x:B'",
        ),
        (
            'version: "1"\nframeworks: [{key: x, entries: [{code: A, title: T}, '
            "{code: A, title: U}]}]",
            "listed twice",
        ),
        ("- just a list", "must be a mapping"),
    ],
)
def test_a_bad_file_is_refused_with_the_reason(text, problem):
    with pytest.raises(ValueError, match=problem):
        parse_crosswalk(text)


def _newer(rows: list[tuple[str, str, str]]) -> CrosswalkData:
    shipped = shipped_crosswalk()
    return CrosswalkData("2099.1", shipped.frameworks, rows)


def test_a_reload_follows_the_file_but_keeps_admin_edits():
    shipped = shipped_crosswalk()
    edited = CrosswalkMapping.objects.get(
        source_kind="harm_category", source_value="privacy", entry__tag="owasp-llm:LLM02"
    )
    edited.active, edited.edited = False, True
    edited.save()
    mine = CrosswalkMapping.objects.create(
        source_kind="harm_category",
        source_value="our-own-harm",
        entry=FrameworkEntry.objects.get(tag="owasp-llm:LLM09"),
    )
    dropped = CrosswalkMapping.objects.get(
        source_kind="attack_technique",
        source_value="FlipAttack",
        entry__tag="owasp-llm:LLM01",
    )
    new_row = ("attack_technique", "BrandNewAttack", "owasp-llm:LLM01")
    rows = [r for r in shipped.rows if r[1] != "FlipAttack" or r[2] != "owasp-llm:LLM01"]
    result = crosswalk_load(data=_newer([*rows, new_row]))
    assert (result.version, result.added, result.removed) == ("2099.1", 1, 1)
    assert result.kept_edited == 1
    assert not CrosswalkMapping.objects.filter(pk=dropped.pk).exists()
    assert CrosswalkMapping.objects.get(source_value="BrandNewAttack").shipped_version == "2099.1"
    edited.refresh_from_db()
    assert edited.active is False  # the admin's choice survives the upgrade
    assert CrosswalkMapping.objects.filter(pk=mine.pk).exists()
    assert CrosswalkLoad.objects.latest().version == "2099.1"

    reset = crosswalk_load(reset=True)
    edited.refresh_from_db()
    assert edited.active is True and edited.edited is False
    assert not CrosswalkMapping.objects.filter(pk=mine.pk).exists()
    assert not CrosswalkMapping.objects.filter(source_value="BrandNewAttack").exists()
    assert reset.version == shipped.version
    assert CrosswalkMapping.objects.count() == len(shipped.rows)


def test_entry_titles_edited_in_the_admin_survive_a_reload(admin_client):
    entry = FrameworkEntry.objects.get(tag="atlas:AML.T0054")
    response = admin_client.post(
        reverse("admin:memory_frameworkentry_change", args=[entry.pk]),
        {"title": "LLM Jailbreak (our wording)", "url": "", "position": 3},
    )
    assert response.status_code == 302, response.content[:2000]
    entry.refresh_from_db()
    assert entry.edited and entry.tag == "atlas:AML.T0054"
    crosswalk_load()
    entry.refresh_from_db()
    assert entry.title == "LLM Jailbreak (our wording)"
    crosswalk_load(reset=True)
    entry.refresh_from_db()
    assert entry.title == "LLM Jailbreak"


def test_admin_rows_shipped_rows_and_switching_off(admin_client):
    entry = FrameworkEntry.objects.get(tag="owasp-llm:LLM07")
    add = admin_client.post(
        reverse("admin:memory_crosswalkmapping_add"),
        {
            "source_kind": "harm_category",
            "source_value": "prompt_leak",
            "entry": entry.pk,
            "active": "on",
            "note": "our dataset's name",
        },
    )
    assert add.status_code == 302, add.content[:2000]
    row = CrosswalkMapping.objects.get(source_value="prompt_leak")
    assert (row.origin, row.edited) == ("admin", False)
    shipped = CrosswalkMapping.objects.filter(origin="shipped").first()
    assert (
        admin_client.get(
            reverse("admin:memory_crosswalkmapping_delete", args=[shipped.pk])
        ).status_code
        == 403
    )
    switched = admin_client.post(
        reverse("admin:memory_crosswalkmapping_changelist"),
        {"action": "switch_off", "_selected_action": [shipped.pk]},
    )
    assert switched.status_code == 302
    shipped.refresh_from_db()
    assert (shipped.active, shipped.edited) == (False, True)


def test_mapping_changelist_query_count_does_not_grow(admin_client):
    url = reverse("admin:memory_crosswalkmapping_changelist")
    admin_client.get(url)
    first, response = count_queries(admin_client.get, url)
    assert response.status_code == 200
    CrosswalkMapping.objects.create(
        source_kind="harm_category",
        source_value="extra",
        entry=FrameworkEntry.objects.get(tag="owasp-llm:LLM09"),
    )
    assert count_queries(admin_client.get, url)[0] == first


def test_the_command_checks_and_loads(capsys, tmp_path):
    call_command("load_crosswalk", "--check")
    assert "valid" in capsys.readouterr().out
    call_command("load_crosswalk")
    assert "0 added" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\n")
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="version"):
        call_command("load_crosswalk", "--file", str(bad))


def test_only_leads_may_edit_the_crosswalk(member):
    lead, reviewer, ingest = member("lead"), member("reviewer"), member("ingest")
    assert lead.has_perm("memory.change_crosswalkmapping")
    assert lead.has_perm("memory.add_frameworkentry")
    assert not reviewer.has_perm("memory.change_crosswalkmapping")
    assert not ingest.has_perm("memory.change_crosswalkmapping")
    assert not ingest.has_perm("memory.add_crosswalkload")
    assert member("viewer").has_perm("memory.view_crosswalkmapping")


# --- suggested tags ------------------------------------------------------------------------


@pytest.fixture
def tagged(build, reviewer):
    crescendo = build(attack_identifier=make_identifier("CrescendoAttack"), harm="privacy")
    return finding_create(
        actor=reviewer,
        title="System prompt leaks",
        harm_categories=["Hate Speech"],
        framework_tags=["owasp-llm:LLM01", "internal:RT-7"],
        evidence=[EvidenceSpec("attack", str(crescendo.attack.pk))],
    )


def test_suggestions_come_from_harm_categories_and_evidence_attacks(tagged):
    found = {s.tag: s for s in tag_suggestions([tagged])[tagged.pk]}
    # Carried already: not suggested again.
    assert "owasp-llm:LLM01" not in found
    assert found["atlas:AML.T0054"].reasons == ("evidence attack CrescendoAttack",)
    assert found["owasp-llm:LLM02"].reasons == ("evidence attack harm category privacy",)
    assert found["owasp-llm:LLM02"].title == "Sensitive Information Disclosure"
    assert found["nist-ai-600-1:harmful-bias-homogenization"].reasons == (
        "harm category Hate Speech",
    )
    assert found["atlas:AML.T0054"].framework == "MITRE ATLAS"
    # Framework order: OWASP, then ATLAS, then NIST.
    keys = [s.tag.split(":")[0] for s in tag_suggestions([tagged])[tagged.pk]]
    assert keys == sorted(keys, key=["owasp-llm", "atlas", "nist-ai-600-1"].index)


def test_suggestions_for_many_findings_take_two_queries(build, reviewer):
    findings = [
        finding_create(
            actor=reviewer,
            title=f"f{i}",
            evidence=[EvidenceSpec("attack", str(build(harm="violence").attack.pk))],
        )
        for i in range(3)
    ]
    count, found = count_queries(tag_suggestions, findings)
    assert count == 2
    assert all("atlas:AML.T0048.003" in {s.tag for s in found[f.pk]} for f in findings)


def test_finding_page_shows_suggestions_and_one_click_adds(tagged, reviewer, viewer):
    client = logged_in(reviewer)
    page = client.get(tagged.get_absolute_url()).content.decode()
    assert 'id="suggested-tags"' in page
    assert "atlas:AML.T0054" in page and "LLM Jailbreak" in page
    assert "from evidence attack CrescendoAttack" in page
    assert "Not in the crosswalk" in page  # the free tag internal:RT-7
    url = reverse("finding-tag-add", args=[tagged.pk])
    assert logged_in(viewer).post(url, {"tag": "atlas:AML.T0054"}).status_code == 403
    assert 'action="' + url not in logged_in(viewer).get(tagged.get_absolute_url()).content.decode()
    response = client.post(url, {"tag": "atlas:AML.T0054"})
    assert response.status_code == 302
    tagged.refresh_from_db()
    assert tagged.framework_tags == ["owasp-llm:LLM01", "internal:RT-7", "atlas:AML.T0054"]
    assert tagged.history.first().history_user == reviewer
    # Again: nothing changes, no history row.
    rows = tagged.history.count()
    client.post(url, {"tag": "atlas:AML.T0054"})
    assert tagged.history.count() == rows
    page = client.get(tagged.get_absolute_url()).content.decode()
    assert 'value="atlas:AML.T0054"' not in page  # no longer suggested
    assert client.post(url, {"tag": "x" * 300}).status_code == 302
    tagged.refresh_from_db()
    assert len(tagged.framework_tags) == 3


def test_edit_form_adds_a_suggestion_without_saving(tagged, reviewer):
    client = logged_in(reviewer)
    url = reverse("finding-edit", args=[tagged.pk])
    form = client.get(url).content.decode()
    assert 'name="add_tag" value="owasp-llm:LLM02"' in form
    response = client.post(
        url,
        {
            "title": "Typed but not saved",
            "severity": "high",
            "framework_tags": "owasp-llm:LLM01, internal:RT-7",
            "add_tag": "owasp-llm:LLM02",
        },
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert 'value="owasp-llm:LLM01, internal:RT-7, owasp-llm:LLM02"' in page
    assert 'value="Typed but not saved"' in page
    assert 'name="add_tag" value="owasp-llm:LLM02"' not in page  # taken
    assert Finding.objects.get(pk=tagged.pk).title == "System prompt leaks"


def test_api_lists_suggested_tags_read_only(tagged, reviewer):
    client = logged_in(reviewer)
    body = client.get(f"/api/v1/findings/{tagged.pk}/").json()
    tags = {s["tag"]: s for s in body["suggested_tags"]}
    assert tags["atlas:AML.T0054"]["reasons"] == ["evidence attack CrescendoAttack"]
    assert tags["atlas:AML.T0054"]["title"] == "LLM Jailbreak"
    listed = client.get("/api/v1/findings/").json()["results"][0]
    assert listed["suggested_tags"] == body["suggested_tags"]
    patched = client.patch(
        f"/api/v1/findings/{tagged.pk}/",
        {"suggested_tags": [], "severity": "low"},
        content_type="application/json",
    )
    assert patched.status_code == 200
    assert patched.json()["suggested_tags"] == body["suggested_tags"]


def test_frameworks_are_listed_in_order():
    assert list(Framework.objects.values_list("key", flat=True)) == [
        "owasp-llm",
        "atlas",
        "nist-ai-600-1",
    ]


def test_report_executive_summary_counts_findings_per_framework_tag(tagged, reviewer, build):
    from memory.findings.reports import build_document, render_markdown
    from memory.findings.services import report_create

    other = build(harm="privacy")
    finding_create(
        actor=reviewer,
        title="Second",
        framework_tags=["owasp-llm:LLM01"],
        evidence=[EvidenceSpec("attack", str(other.attack.pk))],
    )
    doc = build_document(params=(("harm_category", "privacy"),), title="t")
    rows = doc["executive"]["findings_by_framework_tag"]
    assert rows == [
        {
            "tag": "owasp-llm:LLM01",
            "title": "Prompt Injection",
            "framework": "OWASP Top 10 for LLM Applications",
            "count": 2,
        },
        {"tag": "internal:RT-7", "title": "", "framework": "", "count": 1},
    ]
    rendered = gfm_html(render_markdown(doc))
    assert "<td>owasp-llm:LLM01</td>\n<td>Prompt Injection</td>\n<td>2</td>" in rendered
    report = report_create(actor=reviewer, scope_query="harm_category=privacy")
    page = logged_in(reviewer).get(report.get_absolute_url()).content.decode()
    assert 'id="rep-framework-tags"' in page and "Prompt Injection" in page
