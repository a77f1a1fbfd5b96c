"""Every dashboard aggregate against values computed independently from PyRIT's fixture export.

The expectations below are plain Python over ``export.json`` (PyRIT 1.1.0's own
``model_dump``), not over the database: they share nothing with the SQL they check. Each
group's drill-down parameters are run through the attack list's filter and must return
exactly the attacks the expectation put in the group.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter, defaultdict
from datetime import datetime
from urllib.parse import urlencode

import pytest

from memory.storage import aggregates as ag
from redteam.core.stats import OutcomeCounts, histogram_bin, wilson_interval
from tests.dashboards.conftest import dash, filtered_ids

OUTCOMES = ("success", "failure", "undetermined", "error")


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def model_of(identifier: dict | None):
    return (identifier or {}).get("model_name")


def attacks_of(export: dict) -> list[dict]:
    """One plain dict per attack result, with every dimension read from the JSON."""
    conversations = {c["conversation"]["conversation_id"]: c for c in export["conversations"]}
    pieces: dict[str, list[dict]] = defaultdict(list)
    for conversation in export["conversations"]:
        for message in conversation["messages"]:
            for piece in message["message_pieces"]:
                pieces[piece["conversation_id"]].append(piece)
    datasets: dict[str, set[str]] = defaultdict(set)
    for seed in export["seeds"]:
        if seed.get("dataset_name"):
            datasets[seed.get("value_sha256") or sha(seed["value"])].add(seed["dataset_name"])
    out = []
    for ar in export["attack_results"]:
        atomic = ar.get("atomic_attack_identifier")
        strategy = ar.get("attack_identifier") or (
            atomic["children"]["attack_technique"]["children"]["attack"] if atomic else None
        )
        main = ar["conversation_id"]
        related = [rc["conversation_id"] for rc in ar.get("related_conversations") or []]
        out.append(
            {
                "id": ar["attack_result_id"],
                "outcome": ar["outcome"],
                "attack_class": strategy["class_name"] if strategy else None,
                "target_model": model_of(
                    conversations[main]["conversation"].get("target_identifier")
                ),
                "converter": {
                    c["class_name"]
                    for p in pieces[main]
                    for c in p.get("converter_identifiers") or []
                },
                "harm_category": set(ar.get("targeted_harm_categories") or []),
                "labels": ar.get("labels") or {},
                "scorer": (ar.get("last_score") or {})
                .get("scorer_class_identifier", {})
                .get("class_name"),
                "dataset": datasets.get(sha(ar["objective"]), set()),
                "eval_hash": (atomic or {}).get("eval_hash"),
                "atomic_hash": (atomic or {}).get("hash"),
                "day": datetime.fromisoformat(ar["timestamp"]).date(),
                "conversations": {main, *related},
            }
        )
    return out


def expected_groups(attacks: list[dict], key) -> dict:
    """{group key: (Counter of outcomes, set of ids)}; ``key`` gives a value or a set."""
    groups: dict = defaultdict(lambda: (Counter(), set()))
    for attack in attacks:
        value = key(attack)
        keys = (value or {None}) if isinstance(value, set) else {value}
        for k in keys:
            groups[k][0][attack["outcome"]] += 1
            groups[k][1].add(attack["id"])
    return dict(groups)


def as_counts(counter: Counter) -> OutcomeCounts:
    return OutcomeCounts(*(counter[o] for o in OUTCOMES))


def check_groups(breakdown: ag.Breakdown, expected: dict) -> None:
    """Counts per group equal the expectation; every link selects exactly the group's attacks."""
    got = {g.key: g for g in breakdown.groups}
    assert set(got) == set(expected)
    for key, (counter, ids) in expected.items():
        group = got[key]
        assert group.counts == as_counts(counter), key
        low, high = wilson_interval(
            counter["success"], counter["success"] + counter["failure"]
        ) or (
            None,
            None,
        )
        assert (group.counts.ci_low, group.counts.ci_high) == (low, high)
        if key is None:
            assert group.params is None
            continue
        query = urlencode(group.params)
        assert filtered_ids(query) == ids, key
        successes = {i for i in ids if i in _ids_with("success", breakdown)}
        assert filtered_ids(query + "&outcome=success") == successes


_OUTCOME_IDS: dict = {}


def _ids_with(outcome: str, breakdown: ag.Breakdown) -> set[str]:
    return _OUTCOME_IDS[outcome]


@pytest.fixture
def world(pyrit_memory):
    attacks = attacks_of(pyrit_memory.export)
    _OUTCOME_IDS.clear()
    for outcome in OUTCOMES:
        _OUTCOME_IDS[outcome] = {a["id"] for a in attacks if a["outcome"] == outcome}
    assert len(attacks) == 24
    return attacks


def _volume(export: dict, attacks: list[dict] | None):
    """Conversations, pieces and scores in the export: all of them, or those behind attacks."""
    conversations = (
        {c["conversation"]["conversation_id"] for c in export["conversations"]}
        if attacks is None
        else set().union(*(a["conversations"] for a in attacks))
    )
    pieces = [
        p
        for c in export["conversations"]
        for m in c["messages"]
        for p in m["message_pieces"]
        if p["conversation_id"] in conversations
    ]
    if attacks is None:
        return len(conversations), len(pieces), len(export["scores"])
    # A score counts at home: in the conversation of the piece whose id it names (not again
    # on copies of that piece in duplicated conversations, which share its original_prompt_id).
    piece_ids = {p["id"] for p in pieces}
    scores = [s for s in export["scores"] if s.get("message_piece_id") in piece_ids]
    return len(conversations), len(pieces), len(scores)


def test_headline_and_volume_count_the_whole_memory_without_filters(world, pyrit_memory):
    headline = ag.headline(dash().scope)
    volume = ag.volume(dash().scope)
    assert volume.whole_memory
    assert headline.counts == as_counts(Counter(a["outcome"] for a in world))
    assert (volume.conversations, volume.pieces, volume.scores) == _volume(
        pyrit_memory.export, None
    )
    assert headline.human_reviewed == 0
    assert headline.counts.asr == pytest.approx(
        headline.counts.successes / (headline.counts.successes + headline.counts.failures)
    )


@pytest.mark.parametrize(
    ("query", "keep"),
    [
        ("attack_class=RedTeamingAttack", lambda a: a["attack_class"] == "RedTeamingAttack"),
        ("labels=operator:alice", lambda a: a["labels"].get("operator") == "alice"),
        ("harm_category=privacy", lambda a: "privacy" in a["harm_category"]),
        # no model of that name: the scope is known to be empty before any query runs
        ("target_model=no-such-model", lambda a: False),
        ("labels=no-such-key:x", lambda a: False),
        # repeatable filters: every value must hold (not only the last one)
        (
            "labels=operator:alice&labels=operation:op_blue_heron",
            lambda a: (
                a["labels"].get("operator") == "alice"
                and a["labels"].get("operation") == "op_blue_heron"
            ),
        ),
        (
            "harm_category=privacy&harm_category=violence",
            lambda a: {"privacy", "violence"} <= set(a["harm_category"]),
        ),
    ],
)
def test_volume_counts_what_is_behind_the_filtered_attacks(world, pyrit_memory, query, keep):
    scoped = [a for a in world if keep(a)]
    headline = ag.headline(dash(query).scope)
    volume = ag.volume(dash(query).scope)
    assert not volume.whole_memory
    assert headline.counts == as_counts(Counter(a["outcome"] for a in scoped))
    assert (volume.conversations, volume.pieces, volume.scores) == _volume(
        pyrit_memory.export, scoped
    )


@pytest.mark.parametrize(
    ("dimension", "key"),
    [
        ("attack_class", lambda a: a["attack_class"]),
        ("target_model", lambda a: a["target_model"]),
        ("converter", lambda a: a["converter"]),
        ("harm_category", lambda a: a["harm_category"]),
        ("dataset", lambda a: a["dataset"]),
        ("scorer", lambda a: a["scorer"]),
    ],
)
def test_breakdown_matches_the_export(world, dimension, key):
    breakdown = ag.breakdown(dash().scope, dimension)
    check_groups(breakdown, expected_groups(world, key))


@pytest.mark.parametrize("label_key", ["operator", "operation", "environment"])
def test_label_breakdown_matches_the_export(world, label_key):
    breakdown = ag.breakdown(dash().scope, "label", label_key=label_key)
    expected = expected_groups(world, lambda a: a["labels"].get(label_key))
    got = {g.key: g for g in breakdown.groups}
    assert set(got) == set(expected)
    for key, (counter, ids) in expected.items():
        assert got[key].counts == as_counts(counter)
        if key is not None:
            assert got[key].params == (("labels", f"{label_key}:{key}"),)
            assert filtered_ids(urlencode(got[key].params)) == ids


@pytest.mark.parametrize(
    ("query", "keep"),
    [
        ("attack_class=RedTeamingAttack", lambda a: a["attack_class"] == "RedTeamingAttack"),
        ("labels=operator:alice", lambda a: a["labels"].get("operator") == "alice"),
    ],
)
def test_label_breakdown_within_a_filter_counts_only_the_scope(world, query, keep):
    scoped = [a for a in world if keep(a)]
    breakdown = ag.breakdown(dash(query).scope, "label", label_key="operation")
    expected = expected_groups(scoped, lambda a: a["labels"].get("operation"))
    assert expected
    assert {g.key: g.counts for g in breakdown.groups} == {
        k: as_counts(c) for k, (c, _) in expected.items()
    }


def test_breakdown_within_a_filter_links_exactly(world):
    # A harm-category filter joins the harm table; grouping by harm must still see every
    # category of the filtered attacks, and each link (filter + group) select them exactly.
    request = dash("harm_category=privacy&labels=operation:op_blue_heron")
    scoped = [
        a
        for a in world
        if "privacy" in a["harm_category"] and a["labels"].get("operation") == "op_blue_heron"
    ]
    assert scoped
    breakdown = ag.breakdown(request.scope, "harm_category")
    expected = expected_groups(scoped, lambda a: a["harm_category"])
    assert {g.key: g.counts for g in breakdown.groups} == {
        k: as_counts(c) for k, (c, _) in expected.items()
    }
    for group in breakdown.groups:
        url = request.attacks_url(group.params)
        assert filtered_ids(url.split("?", 1)[1]) == expected[group.key][1]


def test_single_valued_filter_keeps_only_its_own_group(world):
    # With converter_class=X in the scope, an attack also using Y would be counted under Y,
    # which no link can select ("X and Y"): only X's group is shown.
    converted = [a for a in world if a["converter"]]
    name = Counter(c for a in converted for c in a["converter"]).most_common(1)[0][0]
    request = dash(f"converter_class={name}")
    breakdown = ag.breakdown(request.scope, "converter")
    assert [g.key for g in breakdown.groups] == [name]
    expected = {a["id"] for a in world if name in a["converter"]}
    assert breakdown.groups[0].counts.attacks == len(expected)
    assert (
        filtered_ids(request.attacks_url(breakdown.groups[0].params).split("?", 1)[1]) == expected
    )


def test_eval_hash_groups_match_the_atomic_identifiers(world):
    breakdown = ag.eval_hash_breakdown(dash().scope)
    expected = expected_groups([a for a in world if a["eval_hash"]], lambda a: a["eval_hash"])
    got = {g.key: g for g in breakdown.groups}
    assert set(got) == set(expected)
    for digest, (counter, ids) in expected.items():
        group = got[digest]
        assert group.counts == as_counts(counter)
        assert filtered_ids(urlencode(group.params)) == ids
        members = {a["atomic_hash"] for a in world if a["eval_hash"] == digest}
        assert {m["hash"] for m in group.members} == members
        for member in group.members:
            member_ids = {a["id"] for a in world if a["atomic_hash"] == member["hash"]}
            assert member["counts"].attacks == len(member_ids)
            assert filtered_ids(urlencode(group.params + member["params"])) == member_ids
    # The error run has no identifier at all and is in no group.
    assert sum(g.counts.attacks for g in breakdown.groups) == sum(
        1 for a in world if a["eval_hash"]
    )


def test_eval_hash_groups_the_same_attack_across_endpoints(db):
    # Two atomic identifiers with different hashes (two endpoints) and one eval hash, plus an
    # attack identifier carrying its own eval hash: group membership is what the filter says.
    from tests.factories import make_attack, make_identifier, sha256_hex

    shared = sha256_hex("logical attack")
    east = make_identifier("AtomicAttack")
    west = make_identifier("AtomicAttack")
    for row in (east, west):
        row.eval_hash = shared
        row.save()
    strategy = make_identifier("PromptSendingAttack")
    strategy.eval_hash = sha256_hex("strategy")
    strategy.save()
    a1 = make_attack(atomic_attack_identifier=east, attack_identifier=strategy, outcome="success")
    a2 = make_attack(atomic_attack_identifier=west, outcome="failure")
    a3 = make_attack(attack_identifier=strategy, outcome="failure")
    make_attack(outcome="success")
    groups = {g.key: g for g in ag.eval_hash_breakdown(dash().scope).groups}
    assert set(groups) == {shared, strategy.eval_hash}
    assert groups[shared].counts == OutcomeCounts(successes=1, failures=1)
    assert {m["hash"] for m in groups[shared].members} == {east.hash, west.hash}
    assert groups[strategy.eval_hash].counts == OutcomeCounts(successes=1, failures=1)
    assert filtered_ids(f"eval_hash={shared}") == {str(a1.pk), str(a2.pk)}
    assert filtered_ids(f"eval_hash={strategy.eval_hash}") == {str(a1.pk), str(a3.pk)}
    for group in groups.values():
        for member in group.members:
            assert len(filtered_ids(urlencode(group.params + member["params"]))) == (
                member["counts"].attacks
            )


def test_heatmap_matches_the_export(world):
    request = dash()
    heat = ag.heatmap(request.scope, "attack_class", "target_model")
    expected = expected_groups(world, lambda a: (a["attack_class"], a["target_model"]))
    assert {k: c.counts for k, c in heat.cells.items()} == {
        k: as_counts(c) for k, (c, _) in expected.items()
    }
    for key, (_, ids) in expected.items():
        params = heat.cells[key].params
        if None in key:
            assert params is None
        else:
            assert filtered_ids(urlencode(params)) == ids


def test_heatmap_with_a_multi_valued_axis(world):
    heat = ag.heatmap(dash().scope, "harm_category", "label", label_key="operator")
    expected: dict = defaultdict(Counter)
    for attack in world:
        for harm in attack["harm_category"] or {None}:
            expected[(harm, attack["labels"].get("operator"))][attack["outcome"]] += 1
    assert {k: c.counts for k, c in heat.cells.items()} == {
        k: as_counts(c) for k, c in expected.items()
    }


def test_trend_per_day_matches_the_export(world):
    request = dash()
    trend = ag.trend(request.scope, period="day", split="attack_class")
    per_day = expected_groups(world, lambda a: a["day"])
    got = {p.start.date(): p for p in trend.points if p.counts.attacks}
    assert {d: p.counts for d, p in got.items()} == {
        d: as_counts(c) for d, (c, _) in per_day.items()
    }
    for day, (_, ids) in per_day.items():
        assert filtered_ids(urlencode(got[day].params)) == ids
        by_class = expected_groups(
            [a for a in world if a["day"] == day], lambda a: a["attack_class"]
        )
        assert got[day].series == {k: as_counts(c) for k, (c, _) in by_class.items()}


def test_trend_fills_empty_periods_and_folds_weeks(db):
    from datetime import UTC, timedelta

    from tests.factories import make_attack

    monday = datetime(2026, 11, 2, 9, tzinfo=UTC)
    make_attack(timestamp=monday, outcome="success")
    make_attack(timestamp=monday + timedelta(days=3), outcome="failure")
    make_attack(timestamp=monday + timedelta(days=15), outcome="failure")
    days = ag.trend(dash().scope, period="day")
    assert len(days.points) == 16
    assert [p.counts.attacks for p in days.points].count(0) == 13
    weeks = ag.trend(dash().scope, period="week")
    assert [p.start.date().isoformat() for p in weeks.points] == [
        "2026-11-02",
        "2026-11-09",
        "2026-11-16",
    ]
    assert [p.counts.attacks for p in weeks.points] == [2, 0, 1]
    assert weeks.points[0].counts == OutcomeCounts(successes=1, failures=1)
    # A period link stays inside the scope's own time range.
    request = dash("timestamp_after=2026-11-04T00:00:00%2B00:00")
    first = ag.trend(request.scope, period="week").points[0]
    assert dict(first.params)["timestamp_after"] == "2026-11-04T00:00:00+00:00"
    assert len(filtered_ids(urlencode(first.params))) == first.counts.attacks == 1
    assert ag.trend(dash().scope, period="auto").period == "day"


def test_one_days_attacks_are_drawn_per_hour(db):
    """A day's attacks per day were one bar and one point: "auto" draws them per hour."""
    from datetime import UTC, timedelta

    from memory.dashboards.charts import trend_chart
    from memory.dashboards.tables import trend_table
    from tests.factories import make_attack

    morning = datetime(2026, 11, 2, 9, 15, tzinfo=UTC)
    make_attack(timestamp=morning, outcome="success")
    make_attack(timestamp=morning + timedelta(minutes=20), outcome="failure")
    make_attack(timestamp=morning + timedelta(hours=3), outcome="failure")
    trend = ag.trend(dash().scope)
    assert trend.period == "hour"
    assert [trend.label(p) for p in trend.points] == [
        "2026-11-02 09:00",
        "2026-11-02 10:00",
        "2026-11-02 11:00",
        "2026-11-02 12:00",
    ]
    assert [p.counts.attacks for p in trend.points] == [2, 0, 0, 1]
    assert trend.points[0].counts == OutcomeCounts(successes=1, failures=1)
    # An hour's drill-down selects exactly that hour's attacks.
    first = trend.points[0]
    assert dict(first.params) == {
        "timestamp_after": "2026-11-02T09:00:00+00:00",
        "timestamp_before": "2026-11-02T09:59:59.999999+00:00",
    }
    assert len(filtered_ids(urlencode(first.params))) == 2
    # Drawn and tabulated per hour; "day" folds the same rows into one day.
    request = dash()
    assert trend_chart(request, trend).x_labels[0][1] == "02 Nov 09:00"
    assert trend_table(request, trend).rows[0][0].text == "2026-11-02 09:00"
    days = ag.trend(dash().scope, period="day")
    assert [(days.label(p), p.counts.attacks) for p in days.points] == [("2026-11-02", 3)]
    assert ag.trend(dash().scope, period="hour").period == "hour"
    # Over two days apart: per day again.
    make_attack(timestamp=morning + timedelta(days=2, hours=1), outcome="failure")
    assert ag.trend(dash().scope).period == "day"


@pytest.mark.parametrize("query", ["", "labels=operation:op_blue_heron"])
def test_scorer_distributions_match_the_export(world, pyrit_memory, query):
    export = pyrit_memory.export
    scoped = [a for a in world if not query or a["labels"].get("operation") == "op_blue_heron"]
    conversations = set().union(*(a["conversations"] for a in scoped))
    if not query:
        conversations = {c["conversation"]["conversation_id"] for c in export["conversations"]}
    # Scores count at home: in the conversation of the piece whose id they name.
    piece_ids = {
        p["id"]
        for c in export["conversations"]
        for m in c["messages"]
        for p in m["message_pieces"]
        if p["conversation_id"] in conversations
    }
    expected: dict = defaultdict(lambda: {"bins": [0] * 10, "true": 0, "false": 0, "und": 0})
    for score in export["scores"]:
        if query and score.get("message_piece_id") not in piece_ids:
            continue
        entry = expected[score["scorer_class_identifier"]["class_name"]]
        value = score["score_value"]
        if value is None:
            entry["und"] += 1
        elif score["score_type"] == "float_scale":
            entry["bins"][histogram_bin(float(value))] += 1
        elif value.lower() == "true":
            entry["true"] += 1
        else:
            entry["false"] += 1
    got = {
        d.scorer: {"bins": d.bins, "true": d.true, "false": d.false, "und": d.undetermined}
        for d in ag.scorer_distributions(dash(query).scope)
    }
    assert got == dict(expected)
    assert any(sum(e["bins"]) for e in got.values())


def test_source_human_counts_the_newest_verdict(world):
    from memory.models import AttackResult, HumanVerdict

    flipped = AttackResult.objects.filter(outcome="failure").order_by("pk")[:2]
    for attack in flipped:
        HumanVerdict.objects.create(attack_result=attack, outcome="success", reason="It did work")
        attack.human_outcome = "success"
        attack.save(update_fields=["human_outcome"])
    automated = ag.headline(dash().scope).counts
    human = ag.headline(dash("source=human").scope).counts
    assert human.successes == automated.successes + 2
    assert human.failures == automated.failures - 2
    request = dash("source=human")
    group = next(g for g in ag.breakdown(request.scope, "attack_class").groups if g.params)
    url = request.attacks_url(group.params, ("success",))
    assert "effective_outcome=success" in url
    assert len(filtered_ids(url.split("?", 1)[1])) == group.counts.successes


def test_attack_agreement_and_kappa(db):
    from memory.models import HumanVerdict
    from tests.factories import make_attack, make_identifier, make_score

    scorer = make_identifier("SubStringScorer")
    pairs = (
        [("success", "success")] * 6
        + [("success", "failure")] * 2
        + [("failure", "failure")] * 5
        + [("failure", "success")] * 1
        + [("failure", "undetermined")] * 1
    )
    attacks = []
    for machine, human in pairs:
        score = make_score(
            None, "true" if machine == "success" else "false", scorer_class_identifier=scorer
        )
        attack = make_attack(outcome=machine, last_score=score, human_outcome=human)
        HumanVerdict.objects.create(attack_result=attack, outcome=human, reason="checked")
        attacks.append((attack, machine, human))
    make_attack(
        outcome="success", last_score=make_score(None, "true", scorer_class_identifier=scorer)
    )
    request = dash()
    [item] = ag.attack_agreement(request.scope)
    assert item.scorer == "SubStringScorer"
    a = item.agreement
    assert a.n == len(pairs)
    n = len(pairs)
    p_o = sum(m == h for m, h in pairs) / n
    cats = {c for pair in pairs for c in pair}
    p_e = sum(
        (sum(m == k for m, _ in pairs) / n) * (sum(h == k for _, h in pairs) / n) for k in cats
    )
    assert a.kappa == pytest.approx((p_o - p_e) / (1 - p_e))
    for (machine, human), params in item.cell_params.items():
        expected = {str(x.pk) for x, m, h in attacks if (m, h) == (machine, human)}
        assert filtered_ids(request.attacks_url(params).split("?", 1)[1]) == expected


def test_score_agreement_pairs_human_and_machine_scores_on_a_piece(db, reviewer):
    from tests.factories import (
        make_attack,
        make_conversation,
        make_identifier,
        make_message,
        make_piece,
        make_score,
    )

    machine = make_identifier("SelfAskRefusalScorer")
    likert = make_identifier("SelfAskLikertScorer")
    human = make_identifier("HumanScorer")
    expected_tf: Counter = Counter()
    for i, (m, h) in enumerate(
        [("true", "true")] * 4 + [("false", "false")] * 3 + [("true", "false")] * 2
    ):
        conversation = make_conversation()
        piece = make_piece(make_message(conversation, 0, "assistant"), f"reply {i}")
        make_score(piece, m, scorer_class_identifier=machine)
        make_score(piece, h, scorer_class_identifier=human, reviewer=reviewer)
        make_attack(conversation)
        expected_tf[(m, h)] += 1
    conversation = make_conversation()
    piece = make_piece(make_message(conversation, 0, "assistant"), "graded")
    make_score(piece, "0.8", score_type="float_scale", scorer_class_identifier=likert)
    make_score(
        piece, "0.2", score_type="float_scale", scorer_class_identifier=human, reviewer=reviewer
    )
    make_attack(conversation)
    items = {i.scorer: i for i in ag.score_agreement(dash().scope)}
    assert set(items) == {"SelfAskRefusalScorer", "SelfAskLikertScorer"}
    tf = items["SelfAskRefusalScorer"].agreement
    assert tf.matrix == (
        (expected_tf[("true", "true")], expected_tf[("true", "false")]),
        (expected_tf[("false", "true")], expected_tf[("false", "false")]),
    )
    assert tf.kappa == pytest.approx(
        (7 / 9 - (6 / 9 * 4 / 9 + 3 / 9 * 5 / 9)) / (1 - (6 / 9 * 4 / 9 + 3 / 9 * 5 / 9))
    )
    # 0.8 vs 0.2: true vs false at the 0.5 threshold.
    assert items["SelfAskLikertScorer"].agreement.matrix == ((0, 1), (0, 0))
    distributions = {d.scorer: d for d in ag.scorer_distributions(dash().scope)}
    assert distributions["HumanScorer (human)"].true == 4
    assert distributions["HumanScorer (human)"].bins[2] == 1


def test_dataset_breakdown_counts_curated_and_plain_dataset_names(db):
    from tests.factories import make_attack, make_dataset, make_seed, sha256_hex

    curated = make_dataset("curated")
    make_seed("objective one", dataset=curated, dataset_name="something else")
    make_seed("objective one", dataset_name="plain")
    make_seed("objective two", dataset_name="plain")
    one = make_attack(objective="objective one", objective_sha256=sha256_hex("objective one"))
    two = make_attack(
        objective="objective two", objective_sha256=sha256_hex("objective two"), outcome="failure"
    )
    make_attack(objective="stray", objective_sha256=sha256_hex("stray"), outcome="undetermined")
    groups = {g.key: g for g in ag.breakdown(dash().scope, "dataset").groups}
    assert set(groups) == {"curated", "plain", None}
    assert groups["curated"].counts == OutcomeCounts(successes=1)
    assert groups["plain"].counts == OutcomeCounts(successes=1, failures=1)
    assert groups[None].counts == OutcomeCounts(undetermined=1)
    assert filtered_ids("dataset=curated") == {str(one.pk)}
    assert filtered_ids("dataset=plain") == {str(one.pk), str(two.pk)}
    assert "something else" not in groups


def test_score_agreement_keeps_to_the_filtered_attacks(db, reviewer):
    from tests.api.conftest import tag
    from tests.factories import (
        make_attack,
        make_conversation,
        make_identifier,
        make_message,
        make_piece,
        make_score,
    )

    machine = make_identifier("SelfAskRefusalScorer")
    human = make_identifier("HumanScorer")
    for i, operation in enumerate(["op_a", "op_a", "op_b"]):
        conversation = make_conversation()
        piece = make_piece(make_message(conversation, 0, "assistant"), f"reply {i}")
        make_score(piece, "true", scorer_class_identifier=machine)
        make_score(piece, "false", scorer_class_identifier=human, reviewer=reviewer)
        tag(make_attack(conversation), {"operation": operation})
    [everything] = ag.score_agreement(dash().scope)
    assert everything.agreement.n == 3
    [only_a] = ag.score_agreement(dash("labels=operation:op_a").scope)
    assert only_a.agreement.matrix == ((0, 2), (0, 0))
    assert ag.score_agreement(dash("labels=operation:op_c").scope) == []


@pytest.mark.parametrize("facts", [True, False])
@pytest.mark.parametrize(
    "query", ["", "labels=operation:op_blue_heron", "harm_category=violence", "source=human"]
)
def test_widgets_summed_from_the_attack_facts_equal_a_count_of_the_rows(world, query, facts):
    """Attack class, target, scorer, heat map, eval hash, headline and verdict agreement sum
    one grouping (``attack_facts``, unfiltered its rollup) once it is read, else each groups on
    its own; both must equal a count over the attacks themselves."""
    from memory.models import AttackResult

    flipped = AttackResult.objects.filter(outcome="failure").order_by("pk")[:3]
    for attack, verdict in zip(flipped, ("success", "failure", "undetermined"), strict=True):
        attack.human_outcome = verdict
        attack.save(update_fields=["human_outcome"])
    scope = dash(query).scope
    if facts:
        ag.attack_facts(scope)  # unfiltered: from the facts' rollup
    else:
        scope = dataclasses.replace(scope, rollups=False)
    human = scope.source == ag.Source.HUMAN
    attacks = list(
        scope.attacks.select_related(
            "attack_identifier", "conversation__target_identifier", "last_score"
        )
    )
    assert attacks

    def out(attack) -> str:
        return attack.human_outcome or attack.outcome if human else attack.outcome

    def model(attack) -> str | None:
        target = attack.conversation.target_identifier
        name = target.params.get("model_name") if target else None
        return name if isinstance(name, str) else None

    def scorer(attack) -> str | None:
        score = attack.last_score
        return score.scorer_class_identifier.class_name if score else None

    keys = {
        "attack_class": lambda a: a.attack_identifier.class_name if a.attack_identifier else None,
        "target_model": model,
        "scorer": scorer,
    }

    def counted(groups) -> dict:
        return {g.key: g.counts for g in groups}

    def expected(key) -> dict:
        per_key: dict = defaultdict(Counter)
        for attack in attacks:
            per_key[key(attack)][out(attack)] += 1
        return {k: as_counts(c) for k, c in per_key.items()}

    assert ag.headline(scope).counts == expected(lambda a: "all")["all"]
    for name, key in keys.items():
        assert counted(ag.breakdown(scope, name).groups) == expected(key), name
    assert ("facts" in scope.memo) == facts
    heat = ag.heatmap(scope, "attack_class", "target_model")
    pairs = expected(lambda a: (keys["attack_class"](a), model(a)))
    assert {k: c.counts for k, c in heat.cells.items()} == pairs
    assert ag.headline(scope).human_reviewed == sum(1 for a in attacks if a.human_outcome)
    agreement = {
        (item.scorer, m, h): count
        for item in ag.attack_agreement(scope)
        for i, m in enumerate(item.agreement.categories)
        for j, h in enumerate(item.agreement.categories)
        if (count := item.agreement.matrix[i][j])
    }
    verdicts = Counter(
        (scorer(a) or "(no score)", a.outcome, a.human_outcome) for a in attacks if a.human_outcome
    )
    assert agreement == dict(verdicts)
    evals = ag.eval_hash_breakdown(scope)
    per_hash: dict = defaultdict(Counter)
    for attack in attacks:
        digests = {
            identifier.eval_hash
            for identifier in (attack.atomic_attack_identifier, attack.attack_identifier)
            if identifier is not None and identifier.eval_hash
        }
        for digest in digests:
            per_hash[digest][out(attack)] += 1
    assert counted(evals.groups) == {k: as_counts(c) for k, c in per_hash.items()}


@pytest.mark.parametrize("source", ["automated", "human"])
def test_converter_sets_of_the_whole_memory_equal_the_per_attack_tally(world, source):
    """Unfiltered, the converter breakdown counts folded converter sets; a filter that keeps
    every attack takes the per-attack path: both count the same."""
    from memory.models import AttackResult

    attack = AttackResult.objects.filter(outcome="failure").order_by("pk").first()
    attack.human_outcome = "success"
    attack.save(update_fields=["human_outcome"])
    whole = ag.breakdown(dash(f"source={source}").scope, "converter")
    everything = dash(f"source={source}&timestamp_after=1970-01-02T00:00:00")
    assert everything.scope.attacks.count() == AttackResult.objects.count()
    tallied = ag.breakdown(everything.scope, "converter")
    assert [(g.key, g.counts) for g in whole.groups] == [(g.key, g.counts) for g in tallied.groups]
    assert len(whole.groups) > 1
