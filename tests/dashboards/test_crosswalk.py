"""The framework dimensions (OWASP, ATLAS, NIST) and the ``framework`` drill-down filter.

Expectations are plain Python over PyRIT's fixture export and the shipped YAML file, read
here with ``yaml.safe_load``: they share nothing with the crosswalk tables or the SQL.
"""

from __future__ import annotations

from collections import defaultdict
from urllib.parse import urlencode

import pytest
import yaml

from memory.models import AttackResult, HarmCategory
from memory.storage import aggregates as ag
from memory.storage.crosswalk import DATA_FILE, crosswalk_load
from tests.dashboards.conftest import dash, filtered_ids
from tests.dashboards.test_aggregates import (  # noqa: F401 (the world fixture)
    as_counts,
    check_groups,
    expected_groups,
    world,
)
from tests.factories import make_attack, make_identifier
from tests.queries import count_queries

FRAMEWORK = {"owasp": "owasp-llm", "atlas": "atlas", "nist": "nist-ai-600-1"}


def shipped_map() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(lower-case harm name -> tags, attack class -> tags) straight from the data file."""
    document = yaml.safe_load(DATA_FILE.read_text())
    harms: dict[str, set[str]] = defaultdict(set)
    classes: dict[str, set[str]] = defaultdict(set)
    for name, spec in document["harm_categories"].items():
        for value in [name, *spec.get("match", [])]:
            harms[str(value).lower()] |= set(spec["tags"])
    for name, spec in document["attack_techniques"].items():
        for value in [name, *spec.get("match", [])]:
            classes[value] |= set(spec["tags"])
    return harms, classes


def tags_of(attack: dict, framework: str) -> set[str]:
    harms, classes = shipped_map()
    tags = set(classes.get(attack["attack_class"], set()))
    for harm in attack["harm_category"]:
        tags |= harms.get(harm.lower(), set())
    return {t for t in tags if t.startswith(f"{framework}:")}


@pytest.fixture(autouse=True)
def crosswalk(db):
    # Loaded by the migration; loaded again in case a transactional test flushed the tables.
    crosswalk_load()


@pytest.mark.parametrize("name", list(FRAMEWORK))
def test_framework_breakdown_matches_the_export(world, name):  # noqa: F811
    breakdown = ag.breakdown(dash().scope, name)
    expected = expected_groups(world, lambda a: tags_of(a, FRAMEWORK[name]))
    assert len(expected) > 2  # the fixture reaches several entries and "none"
    check_groups(breakdown, expected)
    labels = {g.key: g.label for g in breakdown.groups}
    if name == "owasp":
        assert labels["owasp-llm:LLM02"] == "LLM02 Sensitive Information Disclosure"
        assert labels[None] == "(no OWASP category)"


def test_framework_breakdown_within_a_framework_filter_links_exactly(world):  # noqa: F811
    request = dash("framework=owasp-llm:LLM02")
    scoped = [a for a in world if "owasp-llm:LLM02" in tags_of(a, "owasp-llm")]
    assert scoped
    breakdown = ag.breakdown(request.scope, "atlas")
    expected = expected_groups(scoped, lambda a: tags_of(a, "atlas"))
    assert {g.key: g.counts for g in breakdown.groups} == {
        k: as_counts(c) for k, (c, _) in expected.items()
    }
    for group in breakdown.groups:
        url = request.attacks_url(group.params)
        if group.key is None:
            assert url is None
            continue
        # The link keeps the scope's framework and adds the group's: both must hold.
        assert url.count("framework=") == 2
        assert filtered_ids(url.split("?", 1)[1]) == expected[group.key][1]


def _harmed(attack: AttackResult, *names: str) -> AttackResult:
    attack.targeted_harm_categories = list(names)
    attack.save()
    for name in names:
        harm, _ = HarmCategory.objects.get_or_create(name=name)
        attack.harm_category_index.add(harm)
    return attack


def test_an_attack_counts_once_per_entry_and_the_rows_need_not_sum(db):
    prompt = make_identifier(class_name="PromptSendingAttack")
    # Class and harm both reach LLM01 / LLM02: the attack is in two groups, once in each.
    both = _harmed(make_attack(attack_identifier=prompt, outcome="success"), "privacy", "PPI")
    # Two spellings of one harm category (enum value and name): one entry, counted once.
    hate = _harmed(make_attack(outcome="failure"), "Hate Speech", "HATESPEECH")
    plain = make_attack(outcome="failure")
    breakdown = ag.breakdown(dash().scope, "owasp")
    counts = {g.key: g.counts for g in breakdown.groups}
    assert counts["owasp-llm:LLM01"].successes == 1
    assert counts["owasp-llm:LLM02"].successes == 1
    assert counts[None].failures == 2  # hate speech reaches no OWASP category
    assert sum(c.attacks for c in counts.values()) == 4 != AttackResult.objects.count()
    nist = {g.key: g.counts.attacks for g in ag.breakdown(dash().scope, "nist").groups}
    assert nist["nist-ai-600-1:dangerous-violent-hateful-content"] == 1
    assert nist[None] == 1
    # The raw count the dimension must equal: attacks whose class or harm maps to LLM02.
    assert filtered_ids("framework=owasp-llm:LLM02") == {str(both.pk)}
    assert filtered_ids("framework=nist-ai-600-1:harmful-bias-homogenization") == {str(hate.pk)}
    assert str(plain.pk) not in filtered_ids("framework=owasp-llm:LLM01")


def test_harm_categories_match_case_insensitively_and_classes_exactly(db):
    upper = _harmed(make_attack(), "PRIVACY")
    lower_class = make_attack(attack_identifier=make_identifier(class_name="promptsendingattack"))
    assert filtered_ids("framework=atlas:AML.T0057") == {str(upper.pk)}
    assert str(lower_class.pk) not in filtered_ids("framework=owasp-llm:LLM01")
    counts = {g.key for g in ag.breakdown(dash().scope, "atlas").groups}
    assert "atlas:AML.T0057" in counts


@pytest.mark.parametrize("value", ["owasp-llm:LLM99", "nothing", "owasp-llm:LLM10"])
def test_unknown_or_unmapped_entries_match_nothing(db, value):
    make_attack(attack_identifier=make_identifier(class_name="PromptSendingAttack"))
    assert filtered_ids(urlencode({"framework": value})) == set()


def test_switched_off_rows_leave_the_dimension_and_the_filter(db):
    from memory.models import CrosswalkMapping

    attack = _harmed(make_attack(), "privacy")
    CrosswalkMapping.objects.filter(source_value="privacy").update(active=False, edited=True)
    assert filtered_ids("framework=owasp-llm:LLM02") == set()
    keys = {g.key for g in ag.breakdown(dash().scope, "owasp").groups}
    assert keys == {None}
    assert str(attack.pk) in filtered_ids("")


@pytest.mark.parametrize("rows", [1, 12])
def test_framework_widgets_share_one_tally_and_do_not_grow_with_rows(db, rows):
    prompt = make_identifier(class_name="CrescendoAttack")
    for index in range(rows):
        _harmed(make_attack(attack_identifier=prompt), "privacy" if index % 2 else "violence")
    request = dash()
    # crosswalk, counts per attack class and harm-category list
    assert count_queries(ag.breakdown, request.scope, "owasp")[0] == 2
    assert count_queries(ag.breakdown, request.scope, "atlas")[0] == 0
    assert count_queries(ag.breakdown, request.scope, "nist")[0] == 0


@pytest.mark.parametrize("max_ids", [1000, 1])
def test_many_identifiers_of_a_class_are_read_by_a_subquery(db, monkeypatch, max_ids):
    from memory.storage.filters import FrameworkFilter

    monkeypatch.setattr(FrameworkFilter, "MAX_IDS", max_ids)
    attacks = {
        str(make_attack(attack_identifier=make_identifier(class_name="CrescendoAttack")).pk)
        for _ in range(3)
    }
    make_attack(attack_identifier=make_identifier(class_name="SomethingElse"))
    assert filtered_ids("framework=atlas:AML.T0054") == attacks
