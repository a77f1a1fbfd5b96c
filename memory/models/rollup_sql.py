"""The SQL that keeps the dashboard rollups (:mod:`memory.models.rollups`) exact.

Every rollup is a grouping of a join of the raw tables (attacks with their conversation's
target and their last score's scorer, attacks with their label or harm-category links,
scores). A trigger on each table of the join applies the change of its row to the grouping,
reading the other tables as they are: ``-1`` at the old row's key, ``+1`` at the new one's
(an upsert on the rollup's unique key). Applied row by row, that keeps the grouping equal to
the join at every moment, in whatever order the rows arrive (PostgreSQL and SQLite defer
foreign keys, so a link can come before its attack).

One exception: on PostgreSQL an ``AFTER … FOR EACH ROW`` trigger runs when its whole statement
is done, so it sees the statement's other rows too. Only the harm-category link trigger reads
its own table (is this the attack's first link, or its last?); on PostgreSQL it is a
statement trigger over the statement's transition tables.

"Reading the other tables as they are" holds across concurrent transactions because every
trigger function on PostgreSQL first takes the writers' lock (:data:`WRITERS_LOCK`): see
:func:`_pg_function`.

:func:`rebuild` recomputes every rollup from the raw tables, :func:`check` compares them
(``manage.py dashboard_rollups --rebuild`` / ``--check``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ATTACK = "memory_attackresult"
CONVERSATION = "memory_conversation"
SCORE = "memory_score"
LABEL_LINK = "memory_attackresult_label_index"
HARM_LINK = "memory_attackresult_harm_category_index"
IDENTIFIER = "memory_componentidentifier"
HARM_CATEGORY = "memory_harmcategory"
PIECE = "memory_messagepiece"
CONVERTER_LINK = "memory_conversation_converter_index"
RELATED = "memory_relatedconversation"


#: The writers' lock: one PostgreSQL advisory lock (``pg_advisory_xact_lock``) that every
#: transaction writing a counted table holds from its first such write to its commit. Every
#: trigger function takes it (:func:`_pg_function`), so no writer can go without it; the
#: ingestion service, the importer and the other writers of Redline take it first thing too
#: (``memory.storage.write.serialise_writers``), before they lock any row.
WRITERS_LOCK = 0x5265646C696E65  # "Redline"

#: The statement that opens every trigger function on PostgreSQL (check() looks for it).
LOCK_STATEMENT = f"PERFORM pg_advisory_xact_lock({WRITERS_LOCK})"


@dataclass(frozen=True)
class Rollup:
    table: str
    keys: tuple[str, ...]
    #: Columns written but not part of the key (the harm list's text).
    extra: tuple[str, ...] = ()


FACT = Rollup("memory_rollup_fact", ("strategy", "atomic", "target", "scorer", "outcome", "human"))
HOUR = Rollup("memory_rollup_hour", ("hour", "outcome", "human"))
OBJECTIVE = Rollup("memory_rollup_objective", ("objective", "outcome", "human"))
HARMLIST = Rollup(
    "memory_rollup_harmlist",
    ("classed", "attack_class", "harms_key", "outcome", "human"),
    ("harms",),
)
LABEL = Rollup("memory_rollup_label", ("label", "outcome", "human"))
HARM = Rollup("memory_rollup_harm", ("harm", "outcome", "human"))
SCORES = Rollup("memory_rollup_score", ("scorer", "kind", "valued", "bucket", "human"))
#: The volume part's table counts, by name (``conversations``; ``pieces`` on PostgreSQL).
COUNT = Rollup("memory_rollup_count", ("name",))
CONVERTER = Rollup(
    "memory_rollup_converter", ("converters_key", "outcome", "human"), ("converters",)
)
#: The rollups of migration 0022, created together and kept by the same triggers.
FIRST = (FACT, HOUR, OBJECTIVE, HARMLIST, LABEL, HARM, SCORES)


def _scoped(rollup: Rollup, table: str) -> Rollup:
    return Rollup(table, ("scope", *rollup.keys), rollup.extra)


#: The same groupings per label (``scope``: a label id) of the attacks that carry it
#: (migration 0026); ``LABEL_PAIR`` counts, in a label's scope, the attacks' labels.
LABEL_FACT = _scoped(FACT, "memory_rollup_label_fact")
LABEL_HOUR = _scoped(HOUR, "memory_rollup_label_hour")
LABEL_OBJECTIVE = _scoped(OBJECTIVE, "memory_rollup_label_objective")
LABEL_HARMLIST = _scoped(HARMLIST, "memory_rollup_label_harmlist")
LABEL_PAIR = _scoped(LABEL, "memory_rollup_label_label")
LABEL_HARM = _scoped(HARM, "memory_rollup_label_harm")
LABEL_CONVERTER = _scoped(CONVERTER, "memory_rollup_label_converter")
SCOPED = (
    LABEL_FACT,
    LABEL_HOUR,
    LABEL_OBJECTIVE,
    LABEL_HARMLIST,
    LABEL_PAIR,
    LABEL_HARM,
    LABEL_CONVERTER,
)
#: Each whole-memory rollup's label-scoped twin.
SCOPED_OF = {
    FACT: LABEL_FACT,
    HOUR: LABEL_HOUR,
    OBJECTIVE: LABEL_OBJECTIVE,
    HARMLIST: LABEL_HARMLIST,
    LABEL: LABEL_PAIR,
    HARM: LABEL_HARM,
    CONVERTER: LABEL_CONVERTER,
}
#: Per label, its conversations (how often each is in the scope), their scores and their
#: volume (migration 0027).
LABEL_CONVERSATION = Rollup("memory_rollup_label_conversation", ("conversation", "scope"))
LABEL_SCORES = _scoped(SCORES, "memory_rollup_label_score")
LABEL_COUNT = Rollup("memory_rollup_label_count", ("scope", "name"))
VOLUME = (LABEL_CONVERSATION, LABEL_SCORES, LABEL_COUNT)
ROLLUPS = (*FIRST, COUNT, CONVERTER, *SCOPED, *VOLUME)

#: The triggers of the first rollups (:data:`FIRST`), by name.
_FIRST_TRIGGERS = {
    "sqlite": (
        "redline_rollup_attack_insert",
        "redline_rollup_attack_delete",
        "redline_rollup_attack_update",
        "redline_rollup_conversation_insert",
        "redline_rollup_conversation_delete",
        "redline_rollup_conversation_update",
        "redline_rollup_score_insert",
        "redline_rollup_score_delete",
        "redline_rollup_score_update",
        "redline_rollup_label_insert",
        "redline_rollup_label_delete",
        "redline_rollup_label_update",
        "redline_rollup_identifier_insert",
        "redline_rollup_identifier_delete",
        "redline_rollup_identifier_update",
        "redline_rollup_harm_insert",
        "redline_rollup_harm_delete",
        "redline_rollup_harm_update",
    ),
    "postgresql": (
        "redline_rollup_attack",
        "redline_rollup_attack_update",
        "redline_rollup_conversation",
        "redline_rollup_conversation_update",
        "redline_rollup_score",
        "redline_rollup_score_update",
        "redline_rollup_label",
        "redline_rollup_identifier",
        "redline_rollup_identifier_update",
        "redline_rollup_harm_insert",
        "redline_rollup_harm_delete",
        "redline_rollup_harm_update",
    ),
}


#: The count and converter rollups' triggers, by name, with the table each is on.
_COUNT_TRIGGERS = {
    "sqlite": {
        "redline_rollup_count_conversation_insert": CONVERSATION,
        "redline_rollup_count_conversation_delete": CONVERSATION,
    },
    "postgresql": {
        "redline_rollup_count_conversation_insert": CONVERSATION,
        "redline_rollup_count_conversation_delete": CONVERSATION,
        "redline_rollup_count_piece_insert": PIECE,
        "redline_rollup_count_piece_delete": PIECE,
    },
}
_CONVERTER_TRIGGERS = {
    vendor: {
        "redline_rollup_converter_attack_insert": ATTACK,
        "redline_rollup_converter_attack_delete": ATTACK,
        "redline_rollup_converter_attack_update": ATTACK,
        "redline_rollup_converter_link_insert": CONVERTER_LINK,
        "redline_rollup_converter_link_delete": CONVERTER_LINK,
        "redline_rollup_converter_link_update": CONVERTER_LINK,
    }
    for vendor in ("sqlite", "postgresql")
}


def _per_event(prefix: str, tables: dict[str, str]) -> dict[str, dict[str, str]]:
    """Per vendor, ``{<prefix>_<name>_<event>: table}``: a trigger per event on each table."""
    return {
        vendor: {
            f"{prefix}_{name}_{op}": table
            for name, table in tables.items()
            for op in ("insert", "delete", "update")
        }
        for vendor in ("sqlite", "postgresql")
    }


#: The label-scoped rollups' triggers, by name, with the table each is on: one per event on
#: every table a rollup's key is read from (``redline_rollup_scoped_<table>_<event>``).
_SCOPED_TABLES = {
    "attack": ATTACK,
    "label": LABEL_LINK,
    "conversation": CONVERSATION,
    "score": SCORE,
    "identifier": IDENTIFIER,
    "harm": HARM_LINK,
    "converter": CONVERTER_LINK,
}
_SCOPED_TRIGGERS = _per_event("redline_rollup_scoped", _SCOPED_TABLES)


#: The label volume's triggers (:data:`VOLUME`), by name, with the table each is on
#: (``redline_rollup_volume_<table>_<event>``; ``member``: a conversation joins or leaves a
#: label's scope).
_VOLUME_TABLES = {
    "attack": ATTACK,
    "label": LABEL_LINK,
    "related": RELATED,
    "score": SCORE,
    "conversation": CONVERSATION,
    "member": LABEL_CONVERSATION.table,
}
_VOLUME_TRIGGERS = _per_event("redline_rollup_volume", _VOLUME_TABLES)


def triggers(vendor: str, rollups: tuple[Rollup, ...] = ROLLUPS) -> tuple[str, ...]:
    """The triggers that keep ``rollups`` (``check`` reports missing ones: a table rebuilt by
    a later migration on SQLite loses its triggers)."""
    out: tuple[str, ...] = ()
    if FACT in rollups:
        out += _FIRST_TRIGGERS[vendor]
    if COUNT in rollups:
        out += tuple(_COUNT_TRIGGERS[vendor])
    if CONVERTER in rollups:
        out += tuple(_CONVERTER_TRIGGERS[vendor])
    if LABEL_FACT in rollups:
        out += tuple(_SCOPED_TRIGGERS[vendor])
    if LABEL_CONVERSATION in rollups:
        out += tuple(_VOLUME_TRIGGERS[vendor])
    return out


#: Every trigger the rollups need, by name.
TRIGGERS = {vendor: triggers(vendor) for vendor in ("sqlite", "postgresql")}


def _upsert(rollup: Rollup, values: list[str], n: str, rest: str) -> str:
    """``INSERT … SELECT values, n rest ON CONFLICT (key) DO UPDATE SET n = n + excluded.n``.

    ``rest`` must carry a ``WHERE`` (SQLite reads ``ON`` after a bare ``FROM`` as a join's).
    """
    columns = ", ".join((*rollup.keys, *rollup.extra, "n"))
    keys = ", ".join(rollup.keys)
    return (
        f"INSERT INTO {rollup.table} ({columns}) SELECT {', '.join(values)}, {n} {rest} "
        f"ON CONFLICT ({keys}) DO UPDATE SET n = {rollup.table}.n + excluded.n"
    )


def _positions(values: list[str]) -> str:
    """``1, 2, …``: a ``GROUP BY`` of every one of ``values`` by position."""
    return ", ".join(str(i) for i in range(1, len(values) + 1))


def _human(row: str) -> str:
    return f"COALESCE({row}.human_outcome, '')"


def _target(attack: str) -> str:
    return (
        f"COALESCE((SELECT c.target_identifier_id FROM {CONVERSATION} c "
        f"WHERE c.id = {attack}.conversation_id), 0)"
    )


def _scorer(attack: str) -> str:
    return (
        f"COALESCE((SELECT s.scorer_class_identifier_id FROM {SCORE} s "
        f"WHERE s.id = {attack}.last_score_id), 0)"
    )


def _hour(vendor: str, row: str) -> str:
    if vendor == "postgresql":
        return f"to_char({row}.timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24')"
    # Django stores an aware datetime on SQLite as UTC text, 'YYYY-MM-DD HH:MM:SS…'.
    return f"substr({row}.timestamp, 1, 13)"


def _harms(vendor: str, row: str) -> str:
    """The stored harm-category list as text, as ``Cast(…, TextField())`` reads it."""
    if vendor == "postgresql":
        return f"COALESCE({row}.targeted_harm_categories::text, '')"
    return f"COALESCE({row}.targeted_harm_categories, '')"


def _harms_key(vendor: str, row: str) -> str:
    if vendor == "postgresql":
        return f"md5({_harms(vendor, row)})"
    return _harms(vendor, row)


def score_bucket(vendor: str, row: str) -> str:
    """The histogram bin of a score's value, as ``aggregates.scorer_distributions`` computes
    it (``floor(value × 10)``, at most 9); 0 when there is no value (``valued`` is 0 then)."""
    value = f"{row}.numeric_value"
    if vendor == "postgresql":
        # Clamped before the cast: a trigger must not fail a write on an odd value.
        floor = f"GREATEST(LEAST(FLOOR({value} * 10), 9), -2147483648)::integer"
    else:
        # CAST truncates towards zero; one less below zero is the floor. No FLOOR(): a
        # connection that is not Django's may lack the math functions.
        cast = f"CAST({value} * 10 AS INTEGER)"
        floor = f"MAX(MIN({cast} - ({value} * 10 < {cast}), 9), -2147483648)"
    return f"CASE WHEN {value} IS NULL THEN 0 ELSE {floor} END"


def _class_of(attack: str) -> str:
    """The class name of the attack's identifier (NULL: none, as the raw LEFT JOIN)."""
    return (
        f"(SELECT ci.class_name FROM {IDENTIFIER} ci WHERE ci.id = {attack}.attack_identifier_id)"
    )


def _harmlist_values(vendor: str, attack: str, class_name: str) -> list[str]:
    return [
        f"CASE WHEN {class_name} IS NULL THEN 0 ELSE 1 END",
        f"COALESCE({class_name}, '')",
        _harms_key(vendor, attack),
        f"{attack}.outcome",
        _human(attack),
        _harms(vendor, attack),
    ]


def identifier_statements(vendor: str, op: str) -> list[str]:
    """An identifier row's change: the attack class of the attacks it identifies."""
    terms = {"INSERT": ("NULL", "NEW.class_name"), "DELETE": ("OLD.class_name", "NULL")}
    old, new = terms.get(op, ("OLD.class_name", "NEW.class_name"))
    row = "OLD" if op == "DELETE" else "NEW"
    out = []
    for term, sign in ((old, "-1"), (new, "1")):
        out.append(
            _upsert(
                HARMLIST,
                _harmlist_values(vendor, "a", term),
                f"{sign} * COUNT(*)",
                f"FROM {ATTACK} a WHERE a.attack_identifier_id = {row}.id "
                "GROUP BY 1, 2, 3, 4, 5, 6",
            )
        )
    return out


def _fact_values(attack: str, *, target: str | None = None, scorer: str | None = None) -> list[str]:
    return [
        f"COALESCE({attack}.attack_identifier_id, 0)",
        f"COALESCE({attack}.atomic_attack_identifier_id, 0)",
        target or _target(attack),
        scorer or _scorer(attack),
        f"{attack}.outcome",
        _human(attack),
    ]


def attack_row_statements(vendor: str, row: str, sign: str) -> list[str]:
    """What one attack row (``NEW`` or ``OLD``) adds (``sign`` "1") or takes away ("-1")."""
    where = "WHERE true"
    return [
        _upsert(FACT, _fact_values(row), sign, where),
        _upsert(HOUR, [_hour(vendor, row), f"{row}.outcome", _human(row)], sign, where),
        _upsert(
            OBJECTIVE,
            [f"COALESCE({row}.objective_sha256, '')", f"{row}.outcome", _human(row)],
            sign,
            where,
        ),
        _upsert(HARMLIST, _harmlist_values(vendor, row, _class_of(row)), sign, where),
        _upsert(
            LABEL,
            ["l.label_id", f"{row}.outcome", _human(row)],
            f"{sign} * COUNT(*)",
            f"FROM {LABEL_LINK} l WHERE l.attackresult_id = {row}.id GROUP BY l.label_id",
        ),
        _upsert(
            HARM,
            ["l.harmcategory_id", f"{row}.outcome", _human(row)],
            f"{sign} * COUNT(*)",
            f"FROM {HARM_LINK} l WHERE l.attackresult_id = {row}.id GROUP BY l.harmcategory_id",
        ),
        _upsert(
            HARM,
            ["0", f"{row}.outcome", _human(row)],
            sign,
            f"WHERE NOT EXISTS (SELECT 1 FROM {HARM_LINK} l WHERE l.attackresult_id = {row}.id)",
        ),
    ]


def _fact_move(where: str, *, target: tuple[str, str] | None = None, scorer=None) -> list[str]:
    """The attacks matching ``where`` move from one target (scorer) term to another."""
    out = []
    for term, sign in ((0, "-1"), (1, "1")):
        values = _fact_values(
            "a",
            target=target[term] if target else None,
            scorer=scorer[term] if scorer else None,
        )
        out.append(
            _upsert(
                FACT,
                values,
                f"{sign} * COUNT(*)",
                f"FROM {ATTACK} a WHERE {where} GROUP BY 1, 2, 3, 4, 5, 6",
            )
        )
    return out


def conversation_statements(op: str) -> list[str]:
    """A conversation row's change: its attacks' objective target changes."""
    old, new = "COALESCE(OLD.target_identifier_id, 0)", "COALESCE(NEW.target_identifier_id, 0)"
    if op == "INSERT":
        return _fact_move("a.conversation_id = NEW.id", target=("0", new))
    if op == "DELETE":
        return _fact_move("a.conversation_id = OLD.id", target=(old, "0"))
    return _fact_move("a.conversation_id = NEW.id", target=(old, new))


def score_statements(vendor: str, op: str) -> list[str]:
    """A score row's change: the scorer of the attacks it is the last score of, and the
    score distributions."""
    old = "COALESCE(OLD.scorer_class_identifier_id, 0)"
    new = "COALESCE(NEW.scorer_class_identifier_id, 0)"
    out = []
    if op == "INSERT":
        out += _fact_move("a.last_score_id = NEW.id", scorer=("0", new))
    elif op == "DELETE":
        out += _fact_move("a.last_score_id = OLD.id", scorer=(old, "0"))
    else:
        out += _fact_move("a.last_score_id = NEW.id", scorer=(old, new))
    for row, sign in (("OLD", "-1"), ("NEW", "1")):
        if (op, row) in (("INSERT", "OLD"), ("DELETE", "NEW")):
            continue
        out.append(_upsert(SCORES, _score_key(vendor, row), sign, "WHERE true"))
    return out


def _score_key(vendor: str, row: str) -> list[str]:
    """A score's key in the score rollups: scorer, type, valued, bin, human."""
    return [
        f"{row}.scorer_class_identifier_id",
        f"{row}.score_type",
        f"CASE WHEN {row}.numeric_value IS NULL THEN 0 ELSE 1 END",
        score_bucket(vendor, row),
        f"CASE WHEN {row}.reviewer_id IS NULL THEN 0 ELSE 1 END",
    ]


def label_link_statements(row: str, sign: str) -> list[str]:
    return [
        _upsert(
            LABEL,
            [f"{row}.label_id", "a.outcome", _human("a")],
            sign,
            f"FROM {ATTACK} a WHERE a.id = {row}.attackresult_id",
        )
    ]


def _one_attack(scoped: bool, rollup: Rollup, values: list[str], n: str, where: str) -> str:
    """An upsert of ``values`` read from the attack ``a`` that ``where`` selects (one attack),
    or, ``scoped``, into ``rollup``'s label-scoped twin once per label of that attack."""
    if scoped:
        return _upsert(
            SCOPED_OF[rollup],
            ["sl.label_id", *values],
            n,
            f"FROM {ATTACK} a, {LABEL_LINK} sl WHERE sl.attackresult_id = a.id AND {where}",
        )
    return _upsert(rollup, values, n, f"FROM {ATTACK} a WHERE {where}")


def harm_link_row_statements(op: str, *, scoped: bool = False) -> list[str]:
    """SQLite's harm link trigger, run row by row (it sees the rows before this one); with
    ``scoped``, the same for the label-scoped harm rollup."""
    out = []
    if op in ("DELETE", "UPDATE"):
        out.append(
            _one_attack(
                scoped,
                HARM,
                ["OLD.harmcategory_id", "a.outcome", _human("a")],
                "-1",
                "a.id = OLD.attackresult_id",
            )
        )
        moved = " AND OLD.attackresult_id IS NOT NEW.attackresult_id" if op == "UPDATE" else ""
        out.append(
            _one_attack(
                scoped,
                HARM,
                ["0", "a.outcome", _human("a")],
                "1",
                f"a.id = OLD.attackresult_id{moved} AND NOT EXISTS "
                f"(SELECT 1 FROM {HARM_LINK} l WHERE l.attackresult_id = a.id)",
            )
        )
    if op in ("INSERT", "UPDATE"):
        out.append(
            _one_attack(
                scoped,
                HARM,
                ["NEW.harmcategory_id", "a.outcome", _human("a")],
                "1",
                "a.id = NEW.attackresult_id",
            )
        )
        moved = " AND OLD.attackresult_id IS NOT NEW.attackresult_id" if op == "UPDATE" else ""
        out.append(
            _one_attack(
                scoped,
                HARM,
                ["0", "a.outcome", _human("a")],
                "-1",
                f"a.id = NEW.attackresult_id{moved} AND "
                f"(SELECT COUNT(*) FROM {HARM_LINK} l WHERE l.attackresult_id = a.id) = 1",
            )
        )
    return out


def harm_link_statement_statements(op: str, *, scoped: bool = False) -> list[str]:
    """PostgreSQL's harm link trigger, once per statement, over its transition tables
    ``new_rows`` / ``old_rows``: per attack touched, links now and before the statement. With
    ``scoped``, the same for the label-scoped harm rollup (per label of each attack)."""
    empty = "SELECT NULL::uuid AS attackresult_id, NULL::bigint AS harmcategory_id WHERE false"
    new_rows = "new_rows" if op in ("INSERT", "UPDATE") else f"({empty})"
    old_rows = "old_rows" if op in ("DELETE", "UPDATE") else f"({empty})"
    rollup = LABEL_HARM if scoped else HARM
    scope = ["sl.label_id"] if scoped else []
    labels = f" JOIN {LABEL_LINK} sl ON sl.attackresult_id = a.id" if scoped else ""
    out = []
    for rows, sign in ((old_rows, "-1"), (new_rows, "1")):
        if "WHERE false" in rows:
            continue
        values = [*scope, "t.harmcategory_id", "a.outcome", _human("a")]
        out.append(
            _upsert(
                rollup,
                values,
                f"{sign} * COUNT(*)",
                f"FROM {rows} t JOIN {ATTACK} a ON a.id = t.attackresult_id{labels} WHERE true "
                f"GROUP BY {_positions(values)}",
            )
        )
    # +1 for an attack left without links, -1 for one that had none before the statement.
    none = (
        "CASE WHEN x.links_now = 0 THEN 1 ELSE 0 END "
        "- CASE WHEN x.links_now - x.added + x.removed = 0 THEN 1 ELSE 0 END"
    )
    out.append(
        "WITH added AS (SELECT attackresult_id AS id, COUNT(*) AS c "
        f"FROM {new_rows} t GROUP BY 1), "
        f"removed AS (SELECT attackresult_id AS id, COUNT(*) AS c FROM {old_rows} t GROUP BY 1), "
        "touched AS (SELECT id FROM added UNION SELECT id FROM removed), "
        f"x AS (SELECT t.id, (SELECT COUNT(*) FROM {HARM_LINK} l WHERE l.attackresult_id = t.id) "
        "AS links_now, COALESCE(ad.c, 0) AS added, COALESCE(rm.c, 0) AS removed FROM touched t "
        "LEFT JOIN added ad ON ad.id = t.id LEFT JOIN removed rm ON rm.id = t.id) "
        + _upsert(
            rollup,
            [*scope, "0", "a.outcome", _human("a")],
            f"SUM({none})",
            f"FROM x JOIN {ATTACK} a ON a.id = x.id{labels} WHERE true "
            f"GROUP BY {', '.join([*scope, 'a.outcome', _human('a')])} HAVING SUM({none}) <> 0",
        )
    )
    return out


# --- the count and converter rollups ---------------------------------------------------------


def _count_statement(name: str, n: str, rest: str) -> str:
    return _upsert(COUNT, [f"'{name}'"], n, rest)


def _converter_set(vendor: str, ids: str) -> str:
    """The converter set of the identifier ids ``ids`` selects (one column ``i``): ascending,
    comma-separated; NULL when it selects none."""
    if vendor == "postgresql":
        return f"(SELECT string_agg(c.i::text, ',' ORDER BY c.i) FROM ({ids}) c)"
    return f"(SELECT group_concat(c.i) FROM ({ids} ORDER BY 1) c)"


def _links_of(conversation: str) -> str:
    return (
        f"SELECT x.componentidentifier_id AS i FROM {CONVERTER_LINK} x "
        f"WHERE x.conversation_id = {conversation}"
    )


def _converters_key(vendor: str, converters: str) -> str:
    return f"md5({converters})" if vendor == "postgresql" else converters


def _converter_values(vendor: str, converters: str, outcome: str, human: str) -> list[str]:
    return [_converters_key(vendor, converters), outcome, human, converters]


def converter_attack_row_statements(vendor: str, row: str, sign: str) -> list[str]:
    """What one attack row adds to (takes from) the converter rollup: its conversation's set."""
    return [
        _upsert(
            CONVERTER,
            _converter_values(vendor, "ch.ids", f"{row}.outcome", _human(row)),
            sign,
            f"FROM (SELECT {_converter_set(vendor, _links_of(f'{row}.conversation_id'))} AS ids) "
            "ch WHERE ch.ids IS NOT NULL",
        )
    ]


def converter_attack_statement_statements(vendor: str, rows: str, sign: str) -> list[str]:
    """PostgreSQL: the attacks of a statement's transition table ``rows``, at once."""
    return [
        _upsert(
            CONVERTER,
            _converter_values(vendor, "m.ids", "m.outcome", "m.human"),
            f"{sign} * COUNT(*)",
            f"FROM (SELECT {_converter_set(vendor, _links_of('t.conversation_id'))} AS ids, "
            f"t.outcome, {_human('t')} AS human FROM {rows} t) m WHERE m.ids IS NOT NULL "
            "GROUP BY m.ids, m.outcome, m.human",
        )
    ]


def _converter_move(
    vendor: str, conversation: str, before: str, now: str, *, scoped: bool = False
) -> list[str]:
    """The attacks of ``conversation`` move from converter set ``before`` to ``now`` (with
    ``scoped``, in the scope of each of their labels)."""
    out = []
    for term, sign in (("ch.was", "-1"), ("ch.now", "1")):
        values = _converter_values(vendor, term, "a.outcome", _human("a"))
        labels, group = "", "GROUP BY a.outcome, 3"
        if scoped:
            values = ["sl.label_id", *values]
            labels, group = f", {LABEL_LINK} sl", "AND sl.attackresult_id = a.id GROUP BY 1, 3, 4"
        out.append(
            _upsert(
                LABEL_CONVERTER if scoped else CONVERTER,
                values,
                f"{sign} * COUNT(*)",
                f"FROM (SELECT {before} AS was, {now} AS now) ch, {ATTACK} a{labels} "
                f"WHERE a.conversation_id = {conversation} AND {term} IS NOT NULL "
                f"AND ch.was IS NOT ch.now {group}",
            )
        )
    return out


def converter_link_row_statements(vendor: str, op: str, *, scoped: bool = False) -> list[str]:
    """SQLite's converter link trigger, row by row: the set of the conversation(s) the link
    row names, before the row's change and now (``scoped``: for the label-scoped rollup)."""

    def before(conversation: str) -> str:
        ids = _links_of(conversation)
        if op in ("INSERT", "UPDATE"):
            ids += (
                " AND NOT (x.conversation_id = NEW.conversation_id "
                "AND x.componentidentifier_id = NEW.componentidentifier_id)"
            )
        if op in ("DELETE", "UPDATE"):
            ids += (
                " UNION SELECT OLD.componentidentifier_id "
                f"WHERE OLD.conversation_id = {conversation}"
            )
        return _converter_set(vendor, ids)

    conversations = {"INSERT": ["NEW"], "DELETE": ["OLD"], "UPDATE": ["OLD", "NEW"]}[op]
    out = []
    for row in conversations:
        conversation = f"{row}.conversation_id"
        moves = _converter_move(
            vendor,
            conversation,
            before(conversation),
            _converter_set(vendor, _links_of(conversation)),
            scoped=scoped,
        )
        if op == "UPDATE" and row == "NEW":
            moves = [
                m.replace(" GROUP BY", " AND OLD.conversation_id <> NEW.conversation_id GROUP BY")
                for m in moves
            ]
        out += moves
    return out


def converter_link_statement_statements(vendor: str, op: str, *, scoped: bool = False) -> list[str]:
    """PostgreSQL's converter link trigger, once per statement, over its transition tables
    ``new_rows`` / ``old_rows``: per conversation touched, its set before and after (with
    ``scoped``, per label of each of its attacks)."""
    touched = []
    was = _links_of("t.id")
    if op in ("INSERT", "UPDATE"):
        touched.append("SELECT conversation_id AS id FROM new_rows")
        was = (
            f"({was} EXCEPT SELECT n.componentidentifier_id FROM new_rows n "
            "WHERE n.conversation_id = t.id)"
        )
    if op in ("DELETE", "UPDATE"):
        touched.append("SELECT conversation_id AS id FROM old_rows")
        was = (
            f"{was} UNION SELECT o.componentidentifier_id FROM old_rows o "
            "WHERE o.conversation_id = t.id"
        )
    now = _converter_set(vendor, _links_of("t.id"))
    scope = "sl.label_id AS scope, " if scoped else ""
    labels = f" JOIN {LABEL_LINK} sl ON sl.attackresult_id = a.id" if scoped else ""
    moved = " UNION ALL ".join(
        f"SELECT {scope}{term} AS ids, a.outcome, {_human('a')} AS human, {sign} AS d FROM ch "
        f"JOIN {ATTACK} a ON a.conversation_id = ch.id{labels} "
        f"WHERE {term} IS NOT NULL AND ch.was IS DISTINCT FROM ch.now"
        for term, sign in (("ch.was", "-1"), ("ch.now", "1"))
    )
    values = _converter_values(vendor, "m.ids", "m.outcome", "m.human")
    group = "m.ids, m.outcome, m.human"
    if scoped:
        values, group = ["m.scope", *values], f"m.scope, {group}"
    return [
        # UNION, or DISTINCT: a conversation is touched once however many of its links changed.
        f"WITH touched AS (SELECT DISTINCT id FROM ({' UNION '.join(touched)}) t), "
        f"ch AS (SELECT t.id, {_converter_set(vendor, was)} AS was, {now} AS now "
        "FROM touched t), "
        f"moved AS ({moved}) "
        + _upsert(
            LABEL_CONVERTER if scoped else CONVERTER,
            values,
            "SUM(m.d)",
            f"FROM moved m WHERE true GROUP BY {group} HAVING SUM(m.d) <> 0",
        )
    ]


# --- the label-scoped rollups ------------------------------------------------------------------
#
# Each grouping again per label: an attack counts in the scope of every label it carries. A
# label link's trigger adds (takes away) its attack's whole contribution in the link's scope;
# every other trigger applies its row's change in the scope of each label of the attacks it
# changes (``sl``: the link that puts an attack in a scope). The whole memory's triggers above
# stay as they were.


def _in_scopes(
    vendor: str,
    *,
    row: str,
    scope: str,
    sign: str,
    sources: list[str],
    where: list[str],
    grouped: bool,
    conversation: str | None = None,
    pairs: bool = True,
) -> list[str]:
    """What the attacks that ``sources`` and ``where`` select add (``sign`` 1) or take away
    (-1) in the label-scoped rollups.

    ``row`` is the attack (``NEW``, ``OLD`` or an alias in ``sources``), ``scope`` the label
    whose scope it counts in, ``conversation`` the attack's conversation id as an expression
    a nested subquery may use (SQLite cannot correlate into a subquery's ``FROM``). Without
    ``grouped`` each selected row is one (attack, scope), else the rows are counted with
    ``GROUP BY``. ``pairs`` adds the label pairs (a label link's own trigger counts those
    apart: it would read its own table).
    """
    n = f"{sign} * COUNT(*)" if grouped else sign
    outcome, human = f"{row}.outcome", _human(row)
    conversation = conversation or f"{row}.conversation_id"

    def upsert(
        rollup: Rollup, values: list[str], more_sources: tuple = (), more_where: tuple = ()
    ) -> str:
        values = [scope, *values]
        rest = (
            f"FROM {', '.join([*sources, *more_sources])} "
            f"WHERE {' AND '.join([*where, *more_where]) or 'true'}"
        )
        if grouped:
            rest += f" GROUP BY {_positions(values)}"
        return _upsert(rollup, values, n, rest)

    converters = _converter_set(vendor, _links_of(conversation))
    out = [
        upsert(LABEL_FACT, _fact_values(row)),
        upsert(LABEL_HOUR, [_hour(vendor, row), outcome, human]),
        upsert(LABEL_OBJECTIVE, [f"COALESCE({row}.objective_sha256, '')", outcome, human]),
        upsert(LABEL_HARMLIST, _harmlist_values(vendor, row, _class_of(row))),
        upsert(
            LABEL_HARM,
            ["hl.harmcategory_id", outcome, human],
            (f"{HARM_LINK} hl",),
            (f"hl.attackresult_id = {row}.id",),
        ),
        upsert(
            LABEL_HARM,
            ["0", outcome, human],
            (),
            (f"NOT EXISTS (SELECT 1 FROM {HARM_LINK} hl WHERE hl.attackresult_id = {row}.id)",),
        ),
        upsert(
            LABEL_CONVERTER,
            _converter_values(vendor, converters, outcome, human),
            (),
            (f"{converters} IS NOT NULL",),
        ),
    ]
    if pairs:
        out.append(
            upsert(
                LABEL_PAIR,
                ["pl.label_id", outcome, human],
                (f"{LABEL_LINK} pl",),
                (f"pl.attackresult_id = {row}.id",),
            )
        )
    return out


def _attack_row_in_scopes(vendor: str, row: str, sign: str) -> list[str]:
    """One attack row (``NEW`` / ``OLD``), in the scope of each of its labels."""
    return _in_scopes(
        vendor,
        row=row,
        scope="sl.label_id",
        sign=sign,
        sources=[f"{LABEL_LINK} sl"],
        where=[f"sl.attackresult_id = {row}.id"],
        grouped=False,
    )


def _attack_rows_in_scopes(vendor: str, rows: str, sign: str) -> list[str]:
    """PostgreSQL: the attacks of transition table ``rows``, at once."""
    return _in_scopes(
        vendor,
        row="t",
        scope="sl.label_id",
        sign=sign,
        sources=[f"{rows} t", f"{LABEL_LINK} sl"],
        where=["sl.attackresult_id = t.id"],
        grouped=True,
    )


def _label_links_in_scopes(vendor: str, rows: str | None, row: str, sign: str) -> list[str]:
    """A label link's attack, in the link's scope: the row ``row`` (SQLite, ``rows`` None) or
    the transition table ``rows`` (PostgreSQL)."""
    if rows is None:
        return _in_scopes(
            vendor,
            row="a",
            scope=f"{row}.label_id",
            sign=sign,
            sources=[f"{ATTACK} a"],
            where=[f"a.id = {row}.attackresult_id"],
            grouped=False,
            conversation=(
                f"(SELECT a2.conversation_id FROM {ATTACK} a2 WHERE a2.id = {row}.attackresult_id)"
            ),
            pairs=False,
        )
    return _in_scopes(
        vendor,
        row="a",
        scope="t.label_id",
        sign=sign,
        sources=[f"{rows} t", f"{ATTACK} a"],
        where=["a.id = t.attackresult_id"],
        grouped=True,
        pairs=False,
    )


def _label_pairs(new_rows: str, old_rows: str) -> str:
    """The label pairs of the attacks whose links changed: every pair of links now, less every
    pair before the change (the links now, without ``new_rows``, with ``old_rows``).

    ``new_rows`` / ``old_rows`` are row sources of (``attackresult_id``, ``label_id``): a
    statement's transition tables, or one row as a subquery. No ``WITH``: SQLite allows none in
    a trigger.
    """
    touched = (
        f"SELECT attackresult_id FROM {new_rows} n UNION SELECT attackresult_id FROM {old_rows} o"
    )
    now = (
        f"SELECT attackresult_id AS id, label_id FROM {LABEL_LINK} "
        f"WHERE attackresult_id IN ({touched})"
    )
    before = (
        f"{now} EXCEPT SELECT attackresult_id, label_id FROM {new_rows} n "
        f"UNION SELECT attackresult_id, label_id FROM {old_rows} o"
    )
    pairs = (
        f"SELECT x.id, x.label_id AS s, y.label_id AS l, 1 AS d FROM ({now}) x "
        f"JOIN ({now}) y ON y.id = x.id "
        f"UNION ALL SELECT x.id, x.label_id, y.label_id, -1 FROM ({before}) x "
        f"JOIN ({before}) y ON y.id = x.id"
    )
    return _upsert(
        LABEL_PAIR,
        ["p.s", "p.l", "a.outcome", _human("a")],
        "SUM(p.d)",
        f"FROM ({pairs}) p JOIN {ATTACK} a ON a.id = p.id WHERE true "
        "GROUP BY 1, 2, 3, 4 HAVING SUM(p.d) <> 0",
    )


def _label_pair_rows(op: str) -> list[str]:
    """SQLite's label pairs, row by row: an inserted link pairs its label with each label of
    its attack now (itself included), both ways; a deleted one the same, taken away. An
    update (no writer of Redline makes one) goes through :func:`_label_pairs`."""
    if op == "UPDATE":
        new = "(SELECT NEW.attackresult_id AS attackresult_id, NEW.label_id AS label_id)"
        old = "(SELECT OLD.attackresult_id AS attackresult_id, OLD.label_id AS label_id)"
        return [_label_pairs(new, old)]
    row, sign = ("NEW", "1") if op == "INSERT" else ("OLD", "-1")
    others = f"FROM {LABEL_LINK} x WHERE x.attackresult_id = {row}.attackresult_id"
    # After an insert the row is among its attack's links; after a delete it is not.
    itself = "" if op == "INSERT" else f"SELECT {row}.label_id AS s, {row}.label_id AS l UNION ALL "
    pairs = (
        f"{itself}SELECT {row}.label_id AS s, x.label_id AS l {others} "
        f"UNION ALL SELECT x.label_id, {row}.label_id {others} AND x.label_id <> {row}.label_id"
    )
    return [
        _upsert(
            LABEL_PAIR,
            ["p.s", "p.l", "a.outcome", _human("a")],
            sign,
            f"FROM ({pairs}) p, {ATTACK} a WHERE a.id = {row}.attackresult_id",
        )
    ]


def _moves_in_scopes(
    rollup: Rollup, where: str, terms: list[tuple[list[str], str]], source: str = ""
) -> list[str]:
    """The attacks that ``where`` selects (alias ``a``; ``source``: one more table to read,
    such as a transition table) leave one key (sign -1) for another (1), each key's
    ``values`` given with its sign, in the scope of each of their labels."""
    tables = ", ".join(t for t in (source, f"{ATTACK} a", f"{LABEL_LINK} sl") if t)
    return [
        _upsert(
            SCOPED_OF[rollup],
            ["sl.label_id", *values],
            f"{sign} * COUNT(*)",
            f"FROM {tables} WHERE sl.attackresult_id = a.id AND {where} "
            f"GROUP BY {_positions(['sl.label_id', *values])}",
        )
        for values, sign in terms
    ]


def _fact_moves_in_scopes(
    op: str, column: str, link: str, term: str, rows: str | None = None
) -> list[str]:
    """A row's change moves the attacks whose ``link`` column names it from one ``term`` of
    their fact key (``target`` or ``scorer``, the row's ``column``) to another, per label.
    With ``rows`` (PostgreSQL, an insert or a delete), the rows of that transition table."""
    old, new = f"COALESCE(OLD.{column}, 0)", f"COALESCE(NEW.{column}, 0)"
    row = "OLD" if op == "DELETE" else "NEW"
    if rows is not None:
        old = new = f"COALESCE(t.{column}, 0)"
        row = "t"
    before, after = {"INSERT": ("0", new), "DELETE": (old, "0"), "UPDATE": (old, new)}[op]
    return _moves_in_scopes(
        FACT,
        f"a.{link} = {row}.id",
        [
            (_fact_values("a", **{term: before}), "-1"),
            (_fact_values("a", **{term: after}), "1"),
        ],
        f"{rows} t" if rows is not None else "",
    )


def _conversation_in_scopes(op: str, rows: str | None = None) -> list[str]:
    """A conversation row's change: its attacks' objective target, per label."""
    return _fact_moves_in_scopes(op, "target_identifier_id", "conversation_id", "target", rows)


def _score_in_scopes(op: str, rows: str | None = None) -> list[str]:
    """A score row's change: the scorer of the attacks it is the last score of, per label."""
    return _fact_moves_in_scopes(op, "scorer_class_identifier_id", "last_score_id", "scorer", rows)


def _identifier_in_scopes(vendor: str, op: str) -> list[str]:
    """An identifier row's change: the attack class of the attacks it identifies, per label."""
    terms = {"INSERT": ("NULL", "NEW.class_name"), "DELETE": ("OLD.class_name", "NULL")}
    old, new = terms.get(op, ("OLD.class_name", "NEW.class_name"))
    row = "OLD" if op == "DELETE" else "NEW"
    return _moves_in_scopes(
        HARMLIST,
        f"a.attack_identifier_id = {row}.id",
        [
            (_harmlist_values(vendor, "a", old), "-1"),
            (_harmlist_values(vendor, "a", new), "1"),
        ],
    )


_EVENTS = ("INSERT", "DELETE", "UPDATE")


def _scoped_create_sql(vendor: str) -> list[str]:
    """The label-scoped rollups' triggers (:data:`SCOPED`)."""
    attack_update = _attack_row_in_scopes(vendor, "OLD", "-1") + _attack_row_in_scopes(
        vendor, "NEW", "1"
    )
    row_bodies = (
        {("conversation", op): _conversation_in_scopes(op) for op in _EVENTS}
        | {("score", op): _score_in_scopes(op) for op in _EVENTS}
        | {("identifier", op): _identifier_in_scopes(vendor, op) for op in _EVENTS}
    )
    whens = {
        "attack": _changed(vendor, _ATTACK_COLUMNS),
        "conversation": _changed(vendor, ("target_identifier_id",)),
        "score": _changed(vendor, _SCORE_COLUMNS),
        "identifier": _changed(vendor, ("class_name",)),
    }
    if vendor == "sqlite":
        bodies = dict(row_bodies)
        bodies[("attack", "INSERT")] = _attack_row_in_scopes(vendor, "NEW", "1")
        bodies[("attack", "DELETE")] = _attack_row_in_scopes(vendor, "OLD", "-1")
        bodies[("attack", "UPDATE")] = attack_update
        for op in _EVENTS:
            links = []
            if op in ("DELETE", "UPDATE"):
                links += _label_links_in_scopes(vendor, None, "OLD", "-1")
            if op in ("INSERT", "UPDATE"):
                links += _label_links_in_scopes(vendor, None, "NEW", "1")
            bodies[("label", op)] = links + _label_pair_rows(op)
            bodies[("harm", op)] = harm_link_row_statements(op, scoped=True)
            bodies[("converter", op)] = converter_link_row_statements(vendor, op, scoped=True)
        return [
            _sqlite_trigger(
                f"redline_rollup_scoped_{name}_{op.lower()}",
                op,
                _SCOPED_TABLES[name],
                body,
                whens.get(name, "") if op == "UPDATE" else "",
            )
            for (name, op), body in bodies.items()
        ]

    out = []

    def trigger(name: str, op: str, body: list[str], per: str, referencing: str = "") -> None:
        function = f"redline_rollup_scoped_{name}_{op.lower()}"
        when = f" WHEN ({whens[name]})" if per == "ROW" and op == "UPDATE" else ""
        out.append(_pg_function(function, _pg_block(body)))
        out.append(
            f"CREATE TRIGGER {function} AFTER {op} ON {_SCOPED_TABLES[name]}"
            f"{' REFERENCING ' + referencing if referencing else ''} FOR EACH {per}{when} "
            f"EXECUTE FUNCTION {function}()"
        )

    # Row triggers where a statement changes few rows, or the rows each read others of their
    # table; statement triggers over the transition tables where a bulk write lands.
    for (name, op), body in row_bodies.items():
        if name == "identifier" or op == "UPDATE":
            trigger(name, op, body, "ROW")
    # Conversations and scores arrive by the thousand per ingested batch: once per statement.
    for op, rows, referencing in (
        ("INSERT", "new_rows", "NEW TABLE AS new_rows"),
        ("DELETE", "old_rows", "OLD TABLE AS old_rows"),
    ):
        trigger("conversation", op, _conversation_in_scopes(op, rows), "STATEMENT", referencing)
        trigger("score", op, _score_in_scopes(op, rows), "STATEMENT", referencing)
    trigger(
        "attack",
        "INSERT",
        _attack_rows_in_scopes(vendor, "new_rows", "1"),
        "STATEMENT",
        "NEW TABLE AS new_rows",
    )
    trigger(
        "attack",
        "DELETE",
        _attack_rows_in_scopes(vendor, "old_rows", "-1"),
        "STATEMENT",
        "OLD TABLE AS old_rows",
    )
    trigger("attack", "UPDATE", attack_update, "ROW")
    empty = "(SELECT NULL::uuid AS attackresult_id, NULL::bigint AS label_id WHERE false)"
    for op, referencing in (
        ("INSERT", "NEW TABLE AS new_rows"),
        ("DELETE", "OLD TABLE AS old_rows"),
        ("UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows"),
    ):
        new_rows = "new_rows" if op in ("INSERT", "UPDATE") else empty
        old_rows = "old_rows" if op in ("DELETE", "UPDATE") else empty
        links = []
        if op in ("DELETE", "UPDATE"):
            links += _label_links_in_scopes(vendor, "old_rows", "t", "-1")
        if op in ("INSERT", "UPDATE"):
            links += _label_links_in_scopes(vendor, "new_rows", "t", "1")
        trigger("label", op, [*links, _label_pairs(new_rows, old_rows)], "STATEMENT", referencing)
        trigger(
            "harm", op, harm_link_statement_statements(op, scoped=True), "STATEMENT", referencing
        )
        trigger(
            "converter",
            op,
            converter_link_statement_statements(vendor, op, scoped=True),
            "STATEMENT",
            referencing,
        )
    return out


# --- the label volume: conversations, pieces and scores per label ------------------------------
#
# A label's scope holds the main and related conversations of the attacks that carry it.
# ``memory_rollup_label_conversation`` counts, per (conversation, label), the reasons it is
# there (attack rows with their link, related rows with their attack's link); the triggers
# below keep that count as the others keep theirs. When a count rises above 0 or falls to it,
# the trigger on that table adds or takes away the conversation, its pieces and its scores in
# the label's volume and score rollups; a score or a conversation's piece count that changes
# while its conversation is in scopes changes them there.

_IN_SCOPES = "lc.n > 0"


def _members(values: list[str], n: str, rest: str) -> str:
    """An upsert of (conversation, label) counts into the membership rollup."""
    return _upsert(LABEL_CONVERSATION, values, n, rest)


def _attack_members(row: str, sign: str) -> list[str]:
    """An attack row's main conversation, in the scope of each of its labels."""
    return [
        _members(
            [f"{row}.conversation_id", "sl.label_id"],
            sign,
            f"FROM {LABEL_LINK} sl WHERE sl.attackresult_id = {row}.id",
        )
    ]


def _attack_rows_members(rows: str, sign: str) -> list[str]:
    return [
        _members(
            ["t.conversation_id", "sl.label_id"],
            f"{sign} * COUNT(*)",
            f"FROM {rows} t JOIN {LABEL_LINK} sl ON sl.attackresult_id = t.id WHERE true "
            "GROUP BY 1, 2",
        )
    ]


def _label_members(rows: str, sign: str) -> list[str]:
    """Label links (``rows``: one row as a subquery, or a transition table): their attacks'
    main and related conversations, in the links' scopes. One grouped statement, so a
    (conversation, label) is written once however many reasons it has."""
    reasons = (
        f"SELECT a.conversation_id AS c, t.label_id AS l FROM {rows} t "
        f"JOIN {ATTACK} a ON a.id = t.attackresult_id "
        f"UNION ALL SELECT r.conversation_id, t.label_id FROM {rows} t "
        f"JOIN {RELATED} r ON r.attack_result_id = t.attackresult_id"
    )
    return [
        _members(
            ["m.c", "m.l"], f"{sign} * COUNT(*)", f"FROM ({reasons}) m WHERE true GROUP BY 1, 2"
        )
    ]


def _related_members(rows: str, sign: str) -> list[str]:
    """Related conversation rows: in the scope of each label of their attack."""
    return [
        _members(
            ["t.conversation_id", "sl.label_id"],
            f"{sign} * COUNT(*)",
            f"FROM {rows} t JOIN {LABEL_LINK} sl ON sl.attackresult_id = t.attack_result_id "
            "WHERE true GROUP BY 1, 2",
        )
    ]


def _member_change(vendor: str, row: str, sign: str) -> list[str]:
    """A conversation joins (``sign`` 1) or leaves (-1) a label's scope: its count, pieces and
    scores there."""
    return [
        _upsert(LABEL_COUNT, [f"{row}.scope", "'conversations'"], sign, "WHERE true"),
        _upsert(
            LABEL_COUNT,
            [f"{row}.scope", "'pieces'"],
            f"({sign}) * c.piece_count",
            f"FROM {CONVERSATION} c WHERE c.id = {row}.conversation",
        ),
        _upsert(
            LABEL_SCORES,
            [f"{row}.scope", *_score_key(vendor, "s")],
            f"({sign}) * COUNT(*)",
            f"FROM {SCORE} s WHERE s.conversation_id = {row}.conversation "
            "GROUP BY 1, 2, 3, 4, 5, 6",
        ),
    ]


def _score_in_members(vendor: str, rows: str, sign: str, row: str = "t") -> list[str]:
    """Scores (``rows`` with alias ``row``; on SQLite ``rows`` is empty and ``row`` the trigger
    row), in the scopes their conversation is in."""
    source = f"{rows} {row}, " if rows else ""
    return [
        _upsert(
            LABEL_SCORES,
            ["lc.scope", *_score_key(vendor, row)],
            f"{sign} * COUNT(*)",
            f"FROM {source}{LABEL_CONVERSATION.table} lc "
            f"WHERE lc.conversation = {row}.conversation_id AND {_IN_SCOPES} "
            "GROUP BY 1, 2, 3, 4, 5, 6",
        )
    ]


def _conversation_pieces(rows: str, sign: str, row: str = "t") -> list[str]:
    """Conversations (as :func:`_score_in_members`): their pieces, in the scopes they are in."""
    source = f"{rows} {row}, " if rows else ""
    return [
        _upsert(
            LABEL_COUNT,
            ["lc.scope", "'pieces'"],
            f"{sign} * SUM({row}.piece_count)",
            f"FROM {source}{LABEL_CONVERSATION.table} lc "
            f"WHERE lc.conversation = {row}.id AND {_IN_SCOPES} GROUP BY 1, 2",
        )
    ]


def _one(row: str, columns: str) -> str:
    """The trigger row ``row`` as a one-row subquery of ``columns`` (SQLite: no transition
    tables)."""
    return f"(SELECT {', '.join(f'{row}.{c} AS {c}' for c in columns.split())})"


def _volume_create_sql(vendor: str) -> list[str]:
    """The label volume's triggers (:data:`VOLUME`)."""
    whens = {
        "attack": _changed(vendor, ("conversation_id",)),
        "label": "",
        "related": _changed(vendor, ("attack_result_id", "conversation_id")),
        "score": _changed(vendor, (*_SCORE_COLUMNS, "conversation_id")),
        "conversation": _changed(vendor, ("piece_count",)),
        "member": "(OLD.n > 0) <> (NEW.n > 0)",
    }
    member = {
        "INSERT": ("NEW.n > 0", _member_change(vendor, "NEW", "1")),
        "DELETE": ("OLD.n > 0", _member_change(vendor, "OLD", "-1")),
        "UPDATE": (
            whens["member"],
            _member_change(vendor, "NEW", "CASE WHEN NEW.n > 0 THEN 1 ELSE -1 END"),
        ),
    }
    link = "attackresult_id label_id"
    related = "attack_result_id conversation_id"
    if vendor == "sqlite":
        bodies: dict[tuple[str, str], list[str]] = {}
        for op in _EVENTS:
            old = op in ("DELETE", "UPDATE")
            new = op in ("INSERT", "UPDATE")
            bodies[("attack", op)] = (_attack_members("OLD", "-1") if old else []) + (
                _attack_members("NEW", "1") if new else []
            )
            bodies[("label", op)] = (_label_members(_one("OLD", link), "-1") if old else []) + (
                _label_members(_one("NEW", link), "1") if new else []
            )
            bodies[("related", op)] = (
                _related_members(_one("OLD", related), "-1") if old else []
            ) + (_related_members(_one("NEW", related), "1") if new else [])
            bodies[("score", op)] = (_score_in_members(vendor, "", "-1", "OLD") if old else []) + (
                _score_in_members(vendor, "", "1", "NEW") if new else []
            )
            bodies[("conversation", op)] = (
                _conversation_pieces("", "-1", "OLD") if old else []
            ) + (_conversation_pieces("", "1", "NEW") if new else [])
        out = [
            _sqlite_trigger(
                f"redline_rollup_volume_{name}_{op.lower()}",
                op,
                _VOLUME_TABLES[name],
                body,
                whens[name] if op == "UPDATE" else "",
            )
            for (name, op), body in bodies.items()
        ]
        return out + [
            _sqlite_trigger(
                f"redline_rollup_volume_member_{op.lower()}",
                op,
                LABEL_CONVERSATION.table,
                body,
                when,
            )
            for op, (when, body) in member.items()
        ]

    out = []

    def trigger(name: str, op: str, body: list[str], when: str = "", per: str = "STATEMENT"):
        function = f"redline_rollup_volume_{name}_{op.lower()}"
        referencing = ""
        if per == "STATEMENT":
            referencing = {
                "INSERT": " REFERENCING NEW TABLE AS new_rows",
                "DELETE": " REFERENCING OLD TABLE AS old_rows",
                "UPDATE": " REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows",
            }[op]
        out.append(_pg_function(function, _pg_block(body)))
        out.append(
            f"CREATE TRIGGER {function} AFTER {op} ON {_VOLUME_TABLES[name]}{referencing} "
            f"FOR EACH {per}{f' WHEN ({when})' if when else ''} EXECUTE FUNCTION {function}()"
        )

    for op in _EVENTS:
        old = ["old_rows"] if op in ("DELETE", "UPDATE") else []
        new = ["new_rows"] if op in ("INSERT", "UPDATE") else []
        if op == "UPDATE":
            # Few rows, and only when a counted column changed.
            trigger(
                "attack",
                op,
                _attack_members("OLD", "-1") + _attack_members("NEW", "1"),
                whens["attack"],
                "ROW",
            )
            trigger(
                "score",
                op,
                _score_in_members(vendor, "", "-1", "OLD")
                + _score_in_members(vendor, "", "1", "NEW"),
                whens["score"],
                "ROW",
            )
            trigger(
                "conversation",
                op,
                _conversation_pieces("", "-1", "OLD") + _conversation_pieces("", "1", "NEW"),
                whens["conversation"],
                "ROW",
            )
        else:
            rows = (old + new)[0]
            sign = "-1" if op == "DELETE" else "1"
            trigger("attack", op, _attack_rows_members(rows, sign))
            trigger("score", op, _score_in_members(vendor, rows, sign))
            trigger("conversation", op, _conversation_pieces(rows, sign))
        trigger(
            "label",
            op,
            [s for rows in old for s in _label_members(rows, "-1")]
            + [s for rows in new for s in _label_members(rows, "1")],
        )
        trigger(
            "related",
            op,
            [s for rows in old for s in _related_members(rows, "-1")]
            + [s for rows in new for s in _related_members(rows, "1")],
        )
        when, body = member[op]
        trigger("member", op, body, when, "ROW")
    return out


_CONVERTER_ATTACK_COLUMNS = ("conversation_id", "outcome", "human_outcome")


def _count_create_sql(vendor: str) -> list[str]:
    if vendor == "sqlite":
        return [
            _sqlite_trigger(
                "redline_rollup_count_conversation_insert",
                "INSERT",
                CONVERSATION,
                [_count_statement("conversations", "1", "WHERE true")],
            ),
            _sqlite_trigger(
                "redline_rollup_count_conversation_delete",
                "DELETE",
                CONVERSATION,
                [_count_statement("conversations", "-1", "WHERE true")],
            ),
        ]
    out = []
    for name, table, noun in (
        ("conversation", CONVERSATION, "conversations"),
        ("piece", PIECE, "pieces"),
    ):
        for op, rows, sign in (("INSERT", "new_rows", "1"), ("DELETE", "old_rows", "-1")):
            trigger = f"redline_rollup_count_{name}_{op.lower()}"
            referencing = "NEW TABLE AS new_rows" if op == "INSERT" else "OLD TABLE AS old_rows"
            out.append(
                _pg_function(
                    trigger,
                    _pg_block(
                        [
                            _count_statement(
                                noun, f"{sign} * COUNT(*)", f"FROM {rows} HAVING COUNT(*) > 0"
                            )
                        ]
                    ),
                )
            )
            out.append(
                f"CREATE TRIGGER {trigger} AFTER {op} ON {table} REFERENCING {referencing} "
                f"FOR EACH STATEMENT EXECUTE FUNCTION {trigger}()"
            )
    return out


def _converter_create_sql(vendor: str) -> list[str]:
    changed = _changed(vendor, _CONVERTER_ATTACK_COLUMNS)
    if vendor == "sqlite":
        return [
            _sqlite_trigger(
                "redline_rollup_converter_attack_insert",
                "INSERT",
                ATTACK,
                converter_attack_row_statements(vendor, "NEW", "1"),
            ),
            _sqlite_trigger(
                "redline_rollup_converter_attack_delete",
                "DELETE",
                ATTACK,
                converter_attack_row_statements(vendor, "OLD", "-1"),
            ),
            _sqlite_trigger(
                "redline_rollup_converter_attack_update",
                "UPDATE",
                ATTACK,
                converter_attack_row_statements(vendor, "OLD", "-1")
                + converter_attack_row_statements(vendor, "NEW", "1"),
                changed,
            ),
            *(
                _sqlite_trigger(
                    f"redline_rollup_converter_link_{op.lower()}",
                    op,
                    CONVERTER_LINK,
                    converter_link_row_statements(vendor, op),
                )
                for op in ("INSERT", "DELETE", "UPDATE")
            ),
        ]
    out = []
    for op, rows, sign in (("INSERT", "new_rows", "1"), ("DELETE", "old_rows", "-1")):
        trigger = f"redline_rollup_converter_attack_{op.lower()}"
        referencing = "NEW TABLE AS new_rows" if op == "INSERT" else "OLD TABLE AS old_rows"
        out.append(
            _pg_function(
                trigger, _pg_block(converter_attack_statement_statements(vendor, rows, sign))
            )
        )
        out.append(
            f"CREATE TRIGGER {trigger} AFTER {op} ON {ATTACK} REFERENCING {referencing} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION {trigger}()"
        )
    # An update changes the set of few attacks (a verdict, an outcome): row by row, only when
    # a counted column changed.
    out.append(
        _pg_function(
            "redline_rollup_converter_attack_update",
            _pg_block(
                converter_attack_row_statements(vendor, "OLD", "-1")
                + converter_attack_row_statements(vendor, "NEW", "1")
            ),
        )
    )
    out.append(
        f"CREATE TRIGGER redline_rollup_converter_attack_update AFTER UPDATE ON {ATTACK} "
        f"FOR EACH ROW WHEN ({changed}) "
        "EXECUTE FUNCTION redline_rollup_converter_attack_update()"
    )
    for op, referencing in (
        ("INSERT", "NEW TABLE AS new_rows"),
        ("DELETE", "OLD TABLE AS old_rows"),
        ("UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows"),
    ):
        trigger = f"redline_rollup_converter_link_{op.lower()}"
        out.append(
            _pg_function(trigger, _pg_block(converter_link_statement_statements(vendor, op)))
        )
        out.append(
            f"CREATE TRIGGER {trigger} AFTER {op} ON {CONVERTER_LINK} REFERENCING {referencing} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION {trigger}()"
        )
    return out


def _pg_function(name: str, body: str) -> str:
    """A trigger function that takes the writers' lock, then runs ``body``.

    A trigger counts its row's change against the other tables of the join as its own
    transaction sees them. Two transactions that each wrote one half of a pair (one links an
    attack to a label, the other scores its conversation) would otherwise each see only their
    own half, and the pair would be counted by neither. With the lock, the second writer's
    trigger waits here until the first has committed; the queries after it then see the
    first writer's rows, because at READ COMMITTED (Django's, and so every Redline writer's,
    isolation level) each statement of a PL/pgSQL function reads a fresh snapshot. Taken in
    the trigger, it covers every writer, raw SQL included; taken again in a transaction that
    holds it already (every ingestion batch), it costs a lookup in the backend's own lock
    table. SQLite needs no lock: one connection writes at a time and holds the database's
    write lock until it commits (the project's IMMEDIATE transactions from BEGIN), so its
    triggers always read every committed write.
    """
    return (
        f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$\n"
        f"BEGIN\n  {LOCK_STATEMENT};\n{body}\nRETURN NULL;\nEND\n$$"
    )


def _pg_block(statements: list[str]) -> str:
    return "".join(f"  {s};\n" for s in statements)


_ATTACK_COLUMNS = (
    "attack_identifier_id",
    "atomic_attack_identifier_id",
    "conversation_id",
    "last_score_id",
    "outcome",
    "human_outcome",
    "timestamp",
    "objective_sha256",
    "targeted_harm_categories",
)
_SCORE_COLUMNS = ("scorer_class_identifier_id", "score_type", "numeric_value", "reviewer_id")


def _changed(vendor: str, columns: tuple[str, ...]) -> str:
    op = "IS DISTINCT FROM" if vendor == "postgresql" else "IS NOT"
    return " OR ".join(f"OLD.{c} {op} NEW.{c}" for c in columns)


def _sqlite_trigger(name: str, event: str, table: str, body: list[str], when: str = "") -> str:
    condition = f" WHEN {when}" if when else ""
    statements = "".join(f"  {s};\n" for s in body)
    return (
        f"CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW{condition}\n"
        f"BEGIN\n{statements}END"
    )


def create_sql(vendor: str, rollups: tuple[Rollup, ...] = ROLLUPS) -> list[str]:
    """The statements that create the triggers of ``rollups`` (and, on PostgreSQL, their
    functions)."""
    out = []
    if FACT in rollups:
        out += _first_create_sql(vendor)
    if COUNT in rollups:
        out += _count_create_sql(vendor)
    if CONVERTER in rollups:
        out += _converter_create_sql(vendor)
    if LABEL_FACT in rollups:
        out += _scoped_create_sql(vendor)
    if LABEL_CONVERSATION in rollups:
        out += _volume_create_sql(vendor)
    return out


def _first_create_sql(vendor: str) -> list[str]:
    """The triggers of the first rollups (:data:`FIRST`)."""
    if vendor == "sqlite":
        attack_new = attack_row_statements(vendor, "NEW", "1")
        attack_old = attack_row_statements(vendor, "OLD", "-1")
        return [
            _sqlite_trigger("redline_rollup_attack_insert", "INSERT", ATTACK, attack_new),
            _sqlite_trigger("redline_rollup_attack_delete", "DELETE", ATTACK, attack_old),
            _sqlite_trigger(
                "redline_rollup_attack_update",
                "UPDATE",
                ATTACK,
                attack_old + attack_new,
                _changed(vendor, _ATTACK_COLUMNS),
            ),
            *(
                _sqlite_trigger(
                    f"redline_rollup_conversation_{op.lower()}",
                    op,
                    CONVERSATION,
                    conversation_statements(op),
                    _changed(vendor, ("target_identifier_id",)) if op == "UPDATE" else "",
                )
                for op in ("INSERT", "DELETE", "UPDATE")
            ),
            *(
                _sqlite_trigger(
                    f"redline_rollup_score_{op.lower()}",
                    op,
                    SCORE,
                    score_statements(vendor, op),
                    _changed(vendor, _SCORE_COLUMNS) if op == "UPDATE" else "",
                )
                for op in ("INSERT", "DELETE", "UPDATE")
            ),
            *(
                _sqlite_trigger(
                    f"redline_rollup_identifier_{op.lower()}",
                    op,
                    IDENTIFIER,
                    identifier_statements(vendor, op),
                    _changed(vendor, ("class_name",)) if op == "UPDATE" else "",
                )
                for op in ("INSERT", "DELETE", "UPDATE")
            ),
            _sqlite_trigger(
                "redline_rollup_label_insert",
                "INSERT",
                LABEL_LINK,
                label_link_statements("NEW", "1"),
            ),
            _sqlite_trigger(
                "redline_rollup_label_delete",
                "DELETE",
                LABEL_LINK,
                label_link_statements("OLD", "-1"),
            ),
            _sqlite_trigger(
                "redline_rollup_label_update",
                "UPDATE",
                LABEL_LINK,
                label_link_statements("OLD", "-1") + label_link_statements("NEW", "1"),
            ),
            *(
                _sqlite_trigger(
                    f"redline_rollup_harm_{op.lower()}", op, HARM_LINK, harm_link_row_statements(op)
                )
                for op in ("INSERT", "DELETE", "UPDATE")
            ),
        ]

    function, block = _pg_function, _pg_block

    attack_body = (
        "IF TG_OP IN ('UPDATE', 'DELETE') THEN\n"
        + block(attack_row_statements(vendor, "OLD", "-1"))
        + "END IF;\nIF TG_OP IN ('INSERT', 'UPDATE') THEN\n"
        + block(attack_row_statements(vendor, "NEW", "1"))
        + "END IF;"
    )
    conversation_body = (
        "IF TG_OP = 'INSERT' THEN\n"
        + block(conversation_statements("INSERT"))
        + "ELSIF TG_OP = 'DELETE' THEN\n"
        + block(conversation_statements("DELETE"))
        + "ELSE\n"
        + block(conversation_statements("UPDATE"))
        + "END IF;"
    )
    score_body = (
        "IF TG_OP = 'INSERT' THEN\n"
        + block(score_statements(vendor, "INSERT"))
        + "ELSIF TG_OP = 'DELETE' THEN\n"
        + block(score_statements(vendor, "DELETE"))
        + "ELSE\n"
        + block(score_statements(vendor, "UPDATE"))
        + "END IF;"
    )
    identifier_body = (
        "IF TG_OP = 'INSERT' THEN\n"
        + block(identifier_statements(vendor, "INSERT"))
        + "ELSIF TG_OP = 'DELETE' THEN\n"
        + block(identifier_statements(vendor, "DELETE"))
        + "ELSE\n"
        + block(identifier_statements(vendor, "UPDATE"))
        + "END IF;"
    )
    label_body = (
        "IF TG_OP IN ('UPDATE', 'DELETE') THEN\n"
        + block(label_link_statements("OLD", "-1"))
        + "END IF;\nIF TG_OP IN ('INSERT', 'UPDATE') THEN\n"
        + block(label_link_statements("NEW", "1"))
        + "END IF;"
    )
    out = [
        function("redline_rollup_attack", attack_body),
        function("redline_rollup_conversation", conversation_body),
        function("redline_rollup_score", score_body),
        function("redline_rollup_label", label_body),
        function("redline_rollup_identifier", identifier_body),
        f"CREATE TRIGGER redline_rollup_identifier AFTER INSERT OR DELETE ON {IDENTIFIER} "
        "FOR EACH ROW EXECUTE FUNCTION redline_rollup_identifier()",
        f"CREATE TRIGGER redline_rollup_identifier_update AFTER UPDATE ON {IDENTIFIER} "
        f"FOR EACH ROW WHEN ({_changed(vendor, ('class_name',))}) "
        "EXECUTE FUNCTION redline_rollup_identifier()",
        f"CREATE TRIGGER redline_rollup_attack AFTER INSERT OR DELETE ON {ATTACK} "
        "FOR EACH ROW EXECUTE FUNCTION redline_rollup_attack()",
        f"CREATE TRIGGER redline_rollup_attack_update AFTER UPDATE ON {ATTACK} FOR EACH ROW "
        f"WHEN ({_changed(vendor, _ATTACK_COLUMNS)}) EXECUTE FUNCTION redline_rollup_attack()",
        f"CREATE TRIGGER redline_rollup_conversation AFTER INSERT OR DELETE ON {CONVERSATION} "
        "FOR EACH ROW EXECUTE FUNCTION redline_rollup_conversation()",
        f"CREATE TRIGGER redline_rollup_conversation_update AFTER UPDATE ON {CONVERSATION} "
        f"FOR EACH ROW WHEN ({_changed(vendor, ('target_identifier_id',))}) "
        "EXECUTE FUNCTION redline_rollup_conversation()",
        f"CREATE TRIGGER redline_rollup_score AFTER INSERT OR DELETE ON {SCORE} "
        "FOR EACH ROW EXECUTE FUNCTION redline_rollup_score()",
        f"CREATE TRIGGER redline_rollup_score_update AFTER UPDATE ON {SCORE} FOR EACH ROW "
        f"WHEN ({_changed(vendor, _SCORE_COLUMNS)}) EXECUTE FUNCTION redline_rollup_score()",
        f"CREATE TRIGGER redline_rollup_label AFTER INSERT OR DELETE OR UPDATE ON {LABEL_LINK} "
        "FOR EACH ROW EXECUTE FUNCTION redline_rollup_label()",
    ]
    for op, referencing in (
        ("INSERT", "NEW TABLE AS new_rows"),
        ("DELETE", "OLD TABLE AS old_rows"),
        ("UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows"),
    ):
        name = f"redline_rollup_harm_{op.lower()}"
        out.append(function(name, block(harm_link_statement_statements(op))))
        out.append(
            f"CREATE TRIGGER {name} AFTER {op} ON {HARM_LINK} REFERENCING {referencing} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION {name}()"
        )
    return out


def drop_sql(vendor: str, rollups: tuple[Rollup, ...] = ROLLUPS) -> list[str]:
    """The statements that remove the triggers (and functions) of ``rollups``."""
    if vendor == "sqlite":
        return [f"DROP TRIGGER IF EXISTS {name}" for name in triggers(vendor, rollups)]
    tables: dict[str, str] = {}
    functions: list[str] = []
    if FACT in rollups:
        tables |= {
            "redline_rollup_attack": ATTACK,
            "redline_rollup_attack_update": ATTACK,
            "redline_rollup_conversation": CONVERSATION,
            "redline_rollup_conversation_update": CONVERSATION,
            "redline_rollup_score": SCORE,
            "redline_rollup_score_update": SCORE,
            "redline_rollup_label": LABEL_LINK,
            "redline_rollup_identifier": IDENTIFIER,
            "redline_rollup_identifier_update": IDENTIFIER,
            "redline_rollup_harm_insert": HARM_LINK,
            "redline_rollup_harm_delete": HARM_LINK,
            "redline_rollup_harm_update": HARM_LINK,
        }
        functions += [
            "redline_rollup_attack",
            "redline_rollup_conversation",
            "redline_rollup_score",
            "redline_rollup_label",
            "redline_rollup_identifier",
            "redline_rollup_harm_insert",
            "redline_rollup_harm_delete",
            "redline_rollup_harm_update",
        ]
    # Each later trigger has a function of its own name.
    for rollup, named in (
        (COUNT, _COUNT_TRIGGERS),
        (CONVERTER, _CONVERTER_TRIGGERS),
        (LABEL_FACT, _SCOPED_TRIGGERS),
        (LABEL_CONVERSATION, _VOLUME_TRIGGERS),
    ):
        if rollup in rollups:
            tables |= named[vendor]
            functions += list(named[vendor])
    out = [f"DROP TRIGGER IF EXISTS {name} ON {table}" for name, table in tables.items()]
    out += [f"DROP FUNCTION IF EXISTS {name}()" for name in functions]
    return out


# --- rebuild and check ---------------------------------------------------------------------


def raw_groupings(vendor: str) -> dict[Rollup, str]:
    """Per rollup, the SELECT of its rows (key, extra columns, n) from the raw tables."""
    human = _human("a")
    return {
        FACT: (
            "SELECT COALESCE(a.attack_identifier_id, 0), "
            "COALESCE(a.atomic_attack_identifier_id, 0), "
            f"COALESCE(c.target_identifier_id, 0), COALESCE(s.scorer_class_identifier_id, 0), "
            f"a.outcome, {human}, COUNT(*) FROM {ATTACK} a "
            f"JOIN {CONVERSATION} c ON c.id = a.conversation_id "
            f"LEFT JOIN {SCORE} s ON s.id = a.last_score_id GROUP BY 1, 2, 3, 4, 5, 6"
        ),
        HOUR: (
            f"SELECT {_hour(vendor, 'a')}, a.outcome, {human}, COUNT(*) FROM {ATTACK} a "
            "GROUP BY 1, 2, 3"
        ),
        OBJECTIVE: (
            f"SELECT COALESCE(a.objective_sha256, ''), a.outcome, {human}, COUNT(*) "
            f"FROM {ATTACK} a GROUP BY 1, 2, 3"
        ),
        HARMLIST: (
            f"SELECT CASE WHEN ci.class_name IS NULL THEN 0 ELSE 1 END, "
            f"COALESCE(ci.class_name, ''), {_harms_key(vendor, 'a')}, a.outcome, {human}, "
            f"MIN({_harms(vendor, 'a')}), COUNT(*) FROM {ATTACK} a "
            f"LEFT JOIN {IDENTIFIER} ci ON ci.id = a.attack_identifier_id GROUP BY 1, 2, 3, 4, 5"
        ),
        LABEL: (
            f"SELECT l.label_id, a.outcome, {human}, COUNT(*) FROM {LABEL_LINK} l "
            f"JOIN {ATTACK} a ON a.id = l.attackresult_id GROUP BY 1, 2, 3"
        ),
        HARM: (
            f"SELECT l.harmcategory_id, a.outcome, {human}, COUNT(*) FROM {HARM_LINK} l "
            f"JOIN {ATTACK} a ON a.id = l.attackresult_id GROUP BY 1, 2, 3 "
            f"UNION ALL SELECT 0, a.outcome, {human}, COUNT(*) FROM {ATTACK} a "
            f"WHERE NOT EXISTS (SELECT 1 FROM {HARM_LINK} l WHERE l.attackresult_id = a.id) "
            "GROUP BY 2, 3"
        ),
        SCORES: (
            "SELECT s.scorer_class_identifier_id, s.score_type, "
            "CASE WHEN s.numeric_value IS NULL THEN 0 ELSE 1 END, "
            f"{score_bucket(vendor, 's')}, CASE WHEN s.reviewer_id IS NULL THEN 0 ELSE 1 END, "
            f"COUNT(*) FROM {SCORE} s GROUP BY 1, 2, 3, 4, 5"
        ),
        COUNT: f"SELECT 'conversations', COUNT(*) FROM {CONVERSATION}"
        + (f" UNION ALL SELECT 'pieces', COUNT(*) FROM {PIECE}" if vendor == "postgresql" else ""),
        CONVERTER: (
            f"SELECT {_converters_key(vendor, 'ch.ids')}, a.outcome, {human}, MIN(ch.ids), "
            f"COUNT(*) FROM ({converter_sets(vendor)}) ch "
            f"JOIN {ATTACK} a ON a.conversation_id = ch.conversation_id GROUP BY 1, 2, 3"
        ),
        **_scoped_groupings(vendor),
        **_volume_groupings(vendor),
    }


def _scoped_groupings(vendor: str) -> dict[Rollup, str]:
    """The label-scoped rollups' rows from the raw tables: each grouping over the attacks
    joined to their label links (``sl``), the link's label first."""
    human = _human("a")
    scoped = f"JOIN {LABEL_LINK} sl ON sl.attackresult_id = a.id"
    return {
        LABEL_FACT: (
            "SELECT sl.label_id, COALESCE(a.attack_identifier_id, 0), "
            "COALESCE(a.atomic_attack_identifier_id, 0), "
            f"COALESCE(c.target_identifier_id, 0), COALESCE(s.scorer_class_identifier_id, 0), "
            f"a.outcome, {human}, COUNT(*) FROM {ATTACK} a {scoped} "
            f"JOIN {CONVERSATION} c ON c.id = a.conversation_id "
            f"LEFT JOIN {SCORE} s ON s.id = a.last_score_id GROUP BY 1, 2, 3, 4, 5, 6, 7"
        ),
        LABEL_HOUR: (
            f"SELECT sl.label_id, {_hour(vendor, 'a')}, a.outcome, {human}, COUNT(*) "
            f"FROM {ATTACK} a {scoped} GROUP BY 1, 2, 3, 4"
        ),
        LABEL_OBJECTIVE: (
            f"SELECT sl.label_id, COALESCE(a.objective_sha256, ''), a.outcome, {human}, "
            f"COUNT(*) FROM {ATTACK} a {scoped} GROUP BY 1, 2, 3, 4"
        ),
        LABEL_HARMLIST: (
            "SELECT sl.label_id, CASE WHEN ci.class_name IS NULL THEN 0 ELSE 1 END, "
            f"COALESCE(ci.class_name, ''), {_harms_key(vendor, 'a')}, a.outcome, {human}, "
            f"MIN({_harms(vendor, 'a')}), COUNT(*) FROM {ATTACK} a {scoped} "
            f"LEFT JOIN {IDENTIFIER} ci ON ci.id = a.attack_identifier_id "
            "GROUP BY 1, 2, 3, 4, 5, 6"
        ),
        LABEL_PAIR: (
            f"SELECT sl.label_id, l.label_id, a.outcome, {human}, COUNT(*) FROM {ATTACK} a "
            f"{scoped} JOIN {LABEL_LINK} l ON l.attackresult_id = a.id GROUP BY 1, 2, 3, 4"
        ),
        LABEL_HARM: (
            f"SELECT sl.label_id, l.harmcategory_id, a.outcome, {human}, COUNT(*) "
            f"FROM {ATTACK} a {scoped} JOIN {HARM_LINK} l ON l.attackresult_id = a.id "
            f"GROUP BY 1, 2, 3, 4 UNION ALL SELECT sl.label_id, 0, a.outcome, {human}, COUNT(*) "
            f"FROM {ATTACK} a {scoped} WHERE NOT EXISTS "
            f"(SELECT 1 FROM {HARM_LINK} l WHERE l.attackresult_id = a.id) GROUP BY 1, 3, 4"
        ),
        LABEL_CONVERTER: (
            f"SELECT sl.label_id, {_converters_key(vendor, 'ch.ids')}, a.outcome, {human}, "
            f"MIN(ch.ids), COUNT(*) FROM ({converter_sets(vendor)}) ch "
            f"JOIN {ATTACK} a ON a.conversation_id = ch.conversation_id {scoped} "
            "GROUP BY 1, 2, 3, 4"
        ),
    }


def _volume_groupings(vendor: str) -> dict[Rollup, str]:
    """The label volume's rows from the raw tables. The membership counts come first: a
    rebuild rewrites them before the counts their trigger changes are recounted."""
    reasons = (
        f"SELECT a.id AS aid, a.conversation_id AS cid FROM {ATTACK} a UNION ALL "
        f"SELECT r.attack_result_id, r.conversation_id FROM {RELATED} r"
    )
    members = (
        f"SELECT m.cid, sl.label_id AS scope FROM ({reasons}) m "
        f"JOIN {LABEL_LINK} sl ON sl.attackresult_id = m.aid"
    )
    distinct = f"SELECT DISTINCT x.cid, x.scope FROM ({members}) x"
    return {
        LABEL_CONVERSATION: f"SELECT x.cid, x.scope, COUNT(*) FROM ({members}) x GROUP BY 1, 2",
        LABEL_SCORES: (
            f"SELECT d.scope, {', '.join(_score_key(vendor, 's'))}, COUNT(*) "
            f"FROM ({distinct}) d JOIN {SCORE} s ON s.conversation_id = d.cid "
            "GROUP BY 1, 2, 3, 4, 5, 6"
        ),
        LABEL_COUNT: (
            f"SELECT d.scope, 'conversations', COUNT(*) FROM ({distinct}) d GROUP BY 1 "
            f"UNION ALL SELECT d.scope, 'pieces', SUM(c.piece_count) FROM ({distinct}) d "
            f"JOIN {CONVERSATION} c ON c.id = d.cid GROUP BY 1"
        ),
    }


def converter_sets(vendor: str) -> str:
    """Every conversation's converter set (``conversation_id``, ``ids``), as the triggers
    write it: ascending ids, comma-separated."""
    if vendor == "postgresql":
        ids = "string_agg(x.componentidentifier_id::text, ',' ORDER BY x.componentidentifier_id)"
        return f"SELECT x.conversation_id, {ids} AS ids FROM {CONVERTER_LINK} x GROUP BY 1"
    return (
        "SELECT x.conversation_id, group_concat(x.componentidentifier_id) AS ids FROM "
        f"(SELECT conversation_id, componentidentifier_id FROM {CONVERTER_LINK} "
        "ORDER BY conversation_id, componentidentifier_id) x GROUP BY 1"
    )


def rebuild(connection: Any, rollups: tuple[Rollup, ...] = ROLLUPS) -> dict[str, int]:
    """Recompute ``rollups`` from the raw tables (in the caller's transaction); returns the
    rows written per table."""
    written = {}
    vendor = connection.vendor
    with connection.cursor() as cursor:
        for rollup, select in raw_groupings(vendor).items():
            if rollup not in rollups:
                continue
            columns = ", ".join((*rollup.keys, *rollup.extra, "n"))
            # The membership counts' own triggers would add every conversation's volume one
            # by one (on PostgreSQL updating the same rows again and again in one transaction,
            # minutes at 100,000 attacks), and the counts they change are recounted next.
            members = rollup == LABEL_CONVERSATION
            if members:
                for statement in _member_triggers(vendor, drop=True):
                    cursor.execute(statement)
            cursor.execute(f"DELETE FROM {rollup.table}")
            cursor.execute(f"INSERT INTO {rollup.table} ({columns}) {select}")
            written[rollup.table] = cursor.rowcount
            if members:
                for statement in _member_triggers(vendor, drop=False):
                    cursor.execute(statement)
    return written


def _member_triggers(vendor: str, *, drop: bool) -> list[str]:
    """The statements that remove (``drop``) or create the membership counts' triggers."""
    names = [f"redline_rollup_volume_member_{op}" for op in ("insert", "delete", "update")]
    if drop:
        on = f" ON {LABEL_CONVERSATION.table}" if vendor == "postgresql" else ""
        return [f"DROP TRIGGER IF EXISTS {name}{on}" for name in names]
    return [
        statement
        for statement in _volume_create_sql(vendor)
        if any(f" {name}" in statement or f"TRIGGER {name} " in statement for name in names)
    ]


def _rows(cursor: Any, sql: str, width: int) -> dict[tuple, int]:
    cursor.execute(sql)
    out: dict[tuple, int] = {}
    for row in cursor.fetchall():
        key = tuple(row[:width])
        out[key] = out.get(key, 0) + int(row[-1])
    return {k: v for k, v in out.items() if v}


def check(connection: Any) -> list[str]:
    """Every difference between the rollups and the raw tables, and every missing trigger,
    as sentences (empty: the rollups are exact)."""
    problems = []
    vendor = connection.vendor
    with connection.cursor() as cursor:
        if vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        else:
            cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        present = {row[0] for row in cursor.fetchall()}
        for name in TRIGGERS[vendor]:
            if name not in present:
                problems.append(f"trigger {name} is missing")
        if vendor == "postgresql":
            # Functions made before the lock (a backup's) keep counting, but can drift.
            cursor.execute(
                "SELECT DISTINCT p.proname FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid "
                "WHERE NOT t.tgisinternal AND t.tgname LIKE 'redline_rollup%%' "
                "AND strpos(p.prosrc, %s) = 0 ORDER BY 1",
                [LOCK_STATEMENT],
            )
            problems += [
                f"trigger function {name} does not take the writers' lock"
                for (name,) in cursor.fetchall()
            ]
        for rollup, select in raw_groupings(vendor).items():
            width = len(rollup.keys)
            raw = _rows(cursor, select, width)  # extra columns sit between key and n
            kept = _rows(cursor, f"SELECT {', '.join(rollup.keys)}, n FROM {rollup.table}", width)
            for key in sorted(set(raw) | set(kept), key=repr):
                if raw.get(key, 0) != kept.get(key, 0):
                    problems.append(
                        f"{rollup.table} {key}: {kept.get(key, 0)} kept, {raw.get(key, 0)} counted"
                    )
    return problems


def rollups_at(apps: Any) -> tuple[Rollup, ...]:
    """The rollups whose tables exist in a migration's state ``apps``: a migration creates
    (and recounts) the triggers of those only."""
    tables = {model._meta.db_table for model in apps.get_app_config("memory").get_models()}
    return tuple(rollup for rollup in ROLLUPS if rollup.table in tables)


def triggers_create_and_recount(apps: Any, schema_editor: Any) -> None:
    """Migration step: (re-)create the triggers of the rollups the state ``apps`` has, then
    recount those rollups."""
    connection = schema_editor.connection
    rollups = rollups_at(apps)
    with connection.cursor() as cursor:
        for statement in drop_sql(connection.vendor):
            cursor.execute(statement)
        for statement in create_sql(connection.vendor, rollups):
            cursor.execute(statement)
    rebuild(connection, rollups)


def functions_replace(apps: Any, schema_editor: Any) -> None:
    """Migration step: on PostgreSQL, re-create the trigger functions of the rollups the state
    ``apps`` has as this module writes them (the triggers and the counts stay: nothing to
    recount). SQLite's triggers hold their statements themselves."""
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for statement in create_sql(connection.vendor, rollups_at(apps)):
            if statement.startswith("CREATE OR REPLACE FUNCTION"):
                cursor.execute(statement)


def triggers_add(*rollups: Rollup) -> tuple[Any, Any]:
    """The migration steps (forwards, backwards) of a migration that adds ``rollups``: create
    their triggers and count them; going back, drop their triggers (the tables go after)."""

    def forwards(apps: Any, schema_editor: Any) -> None:
        connection = schema_editor.connection
        with connection.cursor() as cursor:
            for statement in create_sql(connection.vendor, rollups):
                cursor.execute(statement)
        rebuild(connection, rollups)

    def backwards(apps: Any, schema_editor: Any) -> None:
        with schema_editor.connection.cursor() as cursor:
            for statement in drop_sql(schema_editor.connection.vendor, rollups):
                cursor.execute(statement)

    return forwards, backwards


def triggers_drop(apps: Any, schema_editor: Any) -> None:
    """Migration step: remove the rollup triggers (the rollups then go stale until recounted)."""
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        for statement in drop_sql(connection.vendor):
            cursor.execute(statement)


def without_triggers(*operations: Any) -> list[Any]:
    """``operations`` with the rollup triggers removed around them, in both directions.

    A migration that rebuilds one of the counted tables on SQLite (Django copies it into a new
    table, drops the old one and renames the copy) must use it: SQLite refuses the rename while
    a trigger on another table names the dropped one ("error in trigger …: no such table"),
    and a rebuilt table loses its own triggers. The rollups are recounted afterwards, so data
    the operations change is counted too.
    """
    from django.db import migrations

    return [
        migrations.RunPython(triggers_drop, triggers_create_and_recount),
        *operations,
        migrations.RunPython(triggers_create_and_recount, triggers_drop),
    ]
