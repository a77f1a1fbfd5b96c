"""The view model of the attack and conversation pages, built from one ordered query per table.

A page shows one or two conversations (the main one, and a related one side by side when
asked). Everything a thread needs is read with a fixed number of queries, however many
pieces it has: the pieces (message and media joined), their converter links, the scores
joined on ``original_prompt_id`` (contract §6.4), and every identifier row the page names in one
query, plus one query per level of their child trees. The result is plain dataclasses with
the display decisions made (which renderer, which media element, which score is decisive).

The thread itself (every message, piece and score) is rendered by :func:`render_thread` with
Jinja2's sandboxed environment from ``templates/review/parts/thread.jinja``: with 1,000
pieces and 2,000 scores the Django template engine alone took over a second, the compiled
Jinja2 template takes a few tens of milliseconds (figures in docs/performance.md). The rest of
each page is an ordinary Django template.
"""

from __future__ import annotations

import gc
import json
import re
import uuid
from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from functools import cache
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.db.models import Count, OuterRef, Subquery
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from memory.models import (
    AttackResult,
    ComponentIdentifier,
    Conversation,
    HumanVerdict,
    Message,
    MessagePiece,
    PieceConverter,
    RelatedConversation,
    Score,
)
from memory.models.media_links import media_values_differing
from memory.review.decoders import Decoded, own_decoding, trial_decodings
from memory.review.rendering import Diff, has_markup, is_long, render_markdown, text_diff
from memory.review.score_signals import ScoreReading, ScorerShape, ScoreSignal, read_score
from redteam.core.choices import (
    ChatMessageRole,
    ConversationType,
    PromptDataType,
    PromptResponseError,
    ScoreType,
    choice_label,
    is_media_value,
    readable_value,
)

#: Structured types shown as pretty-printed JSON when they parse.
JSON_TYPES = frozenset(
    {PromptDataType.FUNCTION_CALL, PromptDataType.TOOL_CALL, PromptDataType.FUNCTION_CALL_OUTPUT}
)
_MEDIA_KIND = {
    PromptDataType.IMAGE_PATH: "image",
    PromptDataType.AUDIO_PATH: "audio",
    PromptDataType.VIDEO_PATH: "video",
}
RESPONSE_ERROR_TEXT = {
    PromptResponseError.BLOCKED: "Blocked by a content filter",
    PromptResponseError.PROCESSING: "Processing error (unrelated to the content)",
    PromptResponseError.EMPTY: "Empty response: the target answered nothing",
    PromptResponseError.UNKNOWN: "Unknown error",
}
_ROLE_LABELS = dict(ChatMessageRole.choices)
_SCORE_TYPE_LABELS = dict(ScoreType.choices)
_ZERO = uuid.UUID(int=0)


def _local(moment: datetime | None, tz: tzinfo) -> str:
    """``YYYY-MM-DD HH:MM:SS`` in ``tz`` (isoformat: strftime is 10x slower).

    Callers look the current time zone up once per page: ``timezone.localtime`` does it per
    call through a context-local, which cost 0.15 ms each (2,500 calls on a big page).
    """
    return moment.astimezone(tz).isoformat(sep=" ")[:19] if moment else ""


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a page's view model is built.

    Building a 1,000-piece thread allocates tens of thousands of small, acyclic objects;
    each allocation burst triggered full collections that walked every live object, a third
    of the page's CPU time (measured: 415 ms → 305 ms for a first view). Reference counting
    still frees everything; the collector resumes afterwards. The switch is process-wide:
    a thread that saw it off leaves it to the one that turned it off.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# --- identifiers ----------------------------------------------------------------------------


@dataclass
class IdentNode:
    """One identifier with its child tree, ready to display (class, short hash, params)."""

    row: ComponentIdentifier
    children: list[tuple[str, list[IdentNode]]] = field(default_factory=list)
    missing_children: list[str] = field(default_factory=list)

    @property
    def params(self) -> list[tuple[str, str]]:
        """Params as display strings, non-string values as compact JSON."""
        return [
            (key, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
            for key, value in self.row.params.items()
        ]


def identifier_rows(*, roots: Iterable[ComponentIdentifier | None]) -> dict[str, IdentNode]:
    """Trees of the given identifier rows, keyed by hash: one query per tree level below them.

    Children are rows of the same table named by hash in the parent's ``children`` JSON.
    A child that was never stored is listed by hash in ``missing_children`` instead.
    """
    rows: dict[str, ComponentIdentifier] = {r.hash: r for r in roots if r is not None}
    wanted = _child_hashes(rows.values()) - rows.keys()
    while wanted:
        found = ComponentIdentifier.objects.by_hash(sorted(wanted))
        rows.update(found)
        wanted = _child_hashes(found.values()) - rows.keys()
    nodes: dict[str, IdentNode] = {digest: IdentNode(row=row) for digest, row in rows.items()}
    for node in nodes.values():
        for name, value in node.row.children.items():
            hashes = value if isinstance(value, list) else [value]
            node.children.append((name, [nodes[h] for h in hashes if h in nodes]))
            node.missing_children += [f"{name}: {h[:8]}" for h in hashes if h not in nodes]
    return nodes


def _child_hashes(rows: Iterable[ComponentIdentifier]) -> set[str]:
    return {
        digest
        for row in rows
        for value in row.children.values()
        for digest in (value if isinstance(value, list) else [value])
    }


# --- values, pieces, messages ---------------------------------------------------------------


@dataclass
class ValueView:
    """One side (original or converted) of a piece, with how to show it.

    ``kind``: ``text`` (Markdown), ``json``, ``error``, ``link`` (http(s) URL, never fetched),
    ``image`` / ``audio`` / ``video`` / ``file`` (stored bytes), ``missing`` (media not
    uploaded; ``differs`` when the file under its name arrived with other bytes than the
    ``expected_sha256`` PyRIT recorded: overwritten, contract §13).
    """

    data_type: str
    value: str
    kind: str
    html: SafeString | None = None
    markup: bool = False
    long: bool = False
    url: str = ""
    content_type: str = ""
    expected_sha256: str = ""
    differs: bool = False

    @property
    def media_label(self) -> str:
        """``Image`` / ``Audio`` / ``Text`` / …: the data type for people."""
        return choice_label(PromptDataType, self.data_type)


def value_view(
    data_type: str,
    value: str,
    media_sha256: str | None,
    content_type: str | None,
    media_prefix: str,
    *,
    expected_sha256: str | None = None,
    differs: bool = False,
) -> ValueView:
    """Decide how one stored value is displayed; text is rendered (sanitised) here.

    ``media_sha256`` / ``content_type`` describe the stored bytes of a media value (None
    when they were never uploaded); ``media_prefix`` is the media URL up to the SHA-256;
    ``expected_sha256`` is the hash PyRIT recorded, ``differs`` that a file of that name
    arrived with other bytes.
    """
    if is_media_value(data_type, value):
        if media_sha256 is None:
            return ValueView(
                data_type=data_type,
                value=value,
                kind="missing",
                expected_sha256=expected_sha256 or "",
                differs=differs and bool(expected_sha256),
            )
        content_type = content_type or ""
        kind = _MEDIA_KIND.get(data_type, "file")
        # Bytes are typed by sniffing at upload; show inline only what they really are.
        if kind != "file" and not content_type.startswith(f"{kind}/"):
            kind = "file"
        return ValueView(
            data_type=data_type,
            value=value,
            kind=kind,
            url=f"{media_prefix}{media_sha256}/",
            content_type=content_type,
        )
    if data_type == PromptDataType.URL:
        return ValueView(data_type=data_type, value=value, kind="link", long=is_long(value))
    if data_type == PromptDataType.ERROR:
        return ValueView(data_type=data_type, value=_pretty_json(value), kind="error")
    if data_type in JSON_TYPES:
        return ValueView(data_type=data_type, value=_pretty_json(value), kind="json")
    pretty = json_text(value)
    if pretty is not None:
        # An adversarial chat's JSON reply: indented, with the exact text behind *Raw*.
        return ValueView(
            data_type=data_type,
            value=value,
            kind="text",
            html=format_html('<pre class="json">{}</pre>', pretty),
            markup=True,
            long=is_long(pretty),
        )
    return ValueView(
        data_type=data_type,
        value=value,
        kind="text",
        # render_markdown returns nh3-sanitised HTML (see memory.review.rendering).
        html=mark_safe(render_markdown(value)),
        markup=has_markup(value),
        long=is_long(value),
    )


def _pretty_json(value: str) -> str:
    """Indent JSON values (PyRIT's error pieces are JSON strings); other text unchanged."""
    try:
        parsed = json.loads(value)
    except ValueError:
        return value
    if isinstance(parsed, str):
        # PyRIT nests JSON inside a JSON string ("message": "{\"error\": …}").
        return _pretty_json(parsed) if parsed.strip().startswith(("{", "[")) else parsed
    if isinstance(parsed, dict):
        parsed = {k: (_maybe_json(v) if isinstance(v, str) else v) for k, v in parsed.items()}
    return json.dumps(parsed, indent=2, ensure_ascii=False)


_FENCED_JSON = re.compile(r"\A\s*```(?:json)?\s*\n(.*)\n\s*```\s*\Z", re.S)


def json_text(text: str) -> str | None:
    """``text`` indented when it is a JSON object or array (bare or in a ```json fence, as
    adversarial chats answer), else None."""
    fenced = _FENCED_JSON.match(text)
    body = (fenced.group(1) if fenced else text).strip()
    if not body.startswith(("{", "[")):
        return None
    try:
        parsed = json.loads(body)
    except ValueError:
        return None
    if not isinstance(parsed, dict | list) or not parsed:
        return None
    return json.dumps(parsed, indent=2, ensure_ascii=False)


def _maybe_json(text: str) -> Any:
    if text.strip().startswith(("{", "[")):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


#: The score columns a thread shows: read as plain rows, not models (2,000 scores per page).
SCORE_FIELDS = (
    "id",
    "score_value",
    "numeric_value",
    "score_type",
    "score_category",
    "score_rationale",
    "score_value_description",
    "objective",
    "timestamp",
    "message_piece_id",
    "scorer_class_identifier_id",
    "reviewer_id",
    "reviewer__username",
)


@dataclass(slots=True)
class ScoreView:
    """A score under its piece, with its value prepared for a badge or a 0–1 bar."""

    id: uuid.UUID
    scorer: ComponentIdentifier
    score_type: str
    score_value: str | None
    numeric_value: float | None
    categories: list[str]
    rationale: str
    description: str
    objective: str
    timestamp: datetime
    reviewer_name: str = ""
    reviewer_id: int | None = None
    is_last: bool = False
    is_human: bool = False
    bool_value: bool | None = None
    percent: float | None = None
    objective_differs: bool = False
    time_text: str = ""
    #: What the score says about the attack (the chip's colour) and why (its tooltip).
    signal: str = ScoreSignal.NEUTRAL.value
    signal_reason: str = ""

    @property
    def type_label(self) -> str:
        """``True/false``, ``Float scale``, ``Unknown``."""
        return _SCORE_TYPE_LABELS.get(self.score_type, self.score_type)


def _categories(value: Any) -> list[str]:
    """``score_category`` as a list (0.9 stored one plain string)."""
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)] if value else []


def score_view(
    row: dict[str, Any],
    *,
    scorer: ComponentIdentifier,
    last_score_id: uuid.UUID | None,
    objective: str,
    tz: tzinfo,
    reading: ScoreReading | None = None,
) -> ScoreView:
    """Prepare one score (a row of :data:`SCORE_FIELDS`); ``last_score_id`` is the attack's
    decisive score, if any, ``objective`` the page's, and ``reading`` what the score says
    about the attack (:func:`score_readings`)."""
    value = row["score_value"]
    view = ScoreView(
        id=row["id"],
        scorer=scorer,
        score_type=row["score_type"],
        score_value=value,
        numeric_value=row["numeric_value"],
        categories=_categories(row["score_category"]),
        rationale=row["score_rationale"] or "",
        description=row["score_value_description"] or "",
        objective=row["objective"] or "",
        timestamp=row["timestamp"],
        reviewer_name=row["reviewer__username"] or "",
        reviewer_id=row["reviewer_id"],
        is_last=last_score_id is not None and row["id"] == last_score_id,
        is_human=row["reviewer_id"] is not None,
        objective_differs=bool(row["objective"]) and row["objective"] != objective,
        time_text=_local(row["timestamp"], tz)[:16],
    )
    if reading is not None:
        view.signal, view.signal_reason = reading.signal.value, reading.reason
    if value is not None:
        if view.score_type == ScoreType.TRUE_FALSE:
            view.bool_value = value.lower() == "true"
        elif view.score_type == ScoreType.FLOAT_SCALE and view.numeric_value is not None:
            view.percent = round(view.numeric_value * 100, 1)
    return view


#: The identifier child naming the scorers a scorer wraps: composites and inverters nest
#: ``"children": {"sub_scorers": [...]}`` (contract §9).
SUB_SCORERS_CHILD = "sub_scorers"
#: The attack identifier's child naming its objective scorer (contract §10).
OBJECTIVE_SCORER_CHILD = "objective_scorer"


def scorer_shape(node: IdentNode) -> ScorerShape:
    """The scorer tree under ``node`` as :func:`read_score` needs it (class names only)."""
    return ScorerShape(
        class_name=node.row.class_name,
        sub_scorers=tuple(
            scorer_shape(child)
            for name, children in node.children
            if name == SUB_SCORERS_CHILD
            for child in children
        ),
    )


def objective_scorer_hashes(
    *, attack_trees: Iterable[IdentNode | None], last_scorer: ComponentIdentifier | None
) -> frozenset[str]:
    """The attack's objective scorer: the ``objective_scorer`` child anywhere in its attack
    (or atomic attack) identifier tree, and the scorer of its ``last_score``."""
    found: set[str] = {last_scorer.hash} if last_scorer is not None else set()
    stack = [tree for tree in attack_trees if tree is not None]
    while stack:
        node = stack.pop()
        named = node.row.children.get(OBJECTIVE_SCORER_CHILD)
        found.update(named if isinstance(named, list) else [named] if named else [])
        stack.extend(child for _, children in node.children for child in children)
    return frozenset(found)


class ScoreReader:
    """Reads scores for their colour: what each says about the attack, per scorer role."""

    def __init__(self, *, nodes: dict[str, IdentNode], objective_hashes: frozenset[str]):
        self._nodes = nodes
        self._objective = objective_hashes
        self._shapes: dict[str, ScorerShape] = {}

    def __call__(self, row: dict[str, Any], scorer: ComponentIdentifier) -> ScoreReading:
        shape = self._shapes.get(scorer.hash)
        if shape is None:
            node = self._nodes.get(scorer.hash)
            shape = scorer_shape(node) if node else ScorerShape(class_name=scorer.class_name)
            self._shapes[scorer.hash] = shape
        return read_score(
            score_type=row["score_type"],
            score_value=row["score_value"],
            scorer=shape,
            is_objective=scorer.hash in self._objective,
        )


#: The piece columns a thread shows, in :class:`PieceRow` order.
PIECE_FIELDS = (
    "id",
    "message_id",
    "message__sequence",
    "message__role",
    "message__conversation_id",
    "timestamp",
    "labels",
    "prompt_metadata",
    "targeted_harm_categories",
    "prompt_target_identifier_id",
    "attack_identifier_id",
    "original_value",
    "original_value_data_type",
    "original_value_sha256",
    "original_media__sha256",
    "original_media__content_type",
    "converted_value",
    "converted_value_data_type",
    "converted_value_sha256",
    "converted_media__sha256",
    "converted_media__content_type",
    "response_error",
    "original_prompt_id",
)


@dataclass(slots=True)
class PieceRow:
    """One piece as read for a thread: the columns of :data:`PIECE_FIELDS`, no model.

    A 1,000-piece page built 2,000 model instances (piece and message) per request; plain
    rows skip building them.
    """

    id: uuid.UUID
    message_id: int
    sequence: int
    role: str
    conversation_pk: int
    timestamp: datetime
    labels: dict[str, Any]
    prompt_metadata: dict[str, Any]
    targeted_harm_categories: list[str]
    prompt_target_identifier_id: int | None
    attack_identifier_id: int | None
    original_value: str
    original_value_data_type: str
    original_value_sha256: str | None
    original_media_sha256: str | None
    original_media_content_type: str | None
    converted_value: str
    converted_value_data_type: str
    converted_value_sha256: str | None
    converted_media_sha256: str | None
    converted_media_content_type: str | None
    response_error: str
    original_prompt_id: uuid.UUID


@dataclass
class PieceView:
    """One piece: what the target received (converted), the original where it differs,
    the converter chain, the scores, and error markers."""

    piece: PieceRow
    id: str
    converted: ValueView
    original: ValueView | None = None
    diff: Diff | None = None
    cross_type: bool = False
    converters: list[ComponentIdentifier] = field(default_factory=list)
    scores: list[ScoreView] = field(default_factory=list)
    harm_categories: list[str] = field(default_factory=list)
    own_labels: dict[str, Any] = field(default_factory=dict)
    blur: bool = False
    score_url: str = ""
    #: The converted value with the piece's own converter chain undone (see ``decoders``).
    decoded: Decoded | None = None
    #: Decodings offered on demand for a text no converter touched (see ``decoders``).
    trials: list[Decoded] = field(default_factory=list)

    @property
    def type_text(self) -> str:
        """The data type for people, ``Text → Image`` when the converters changed it."""
        original = choice_label(PromptDataType, self.piece.original_value_data_type)
        if not self.cross_type:
            return original
        return f"{original} → {choice_label(PromptDataType, self.piece.converted_value_data_type)}"

    @property
    def error_text(self) -> str:
        """The ``response_error`` marker's text, empty when the response is normal."""
        return RESPONSE_ERROR_TEXT.get(self.piece.response_error, "")

    @property
    def refusal(self) -> str:
        """PyRIT 1.1.0's ``structured_refusal`` metadata of a blocked response."""
        value = self.piece.prompt_metadata.get("structured_refusal")
        return value if isinstance(value, str) else ""

    @property
    def metadata(self) -> list[tuple[str, str]]:
        """``prompt_metadata`` as display strings."""
        return [
            (k, v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))
            for k, v in self.piece.prompt_metadata.items()
        ]

    @property
    def similarity(self) -> int:
        """The diff's similarity in percent."""
        return round(self.diff.ratio * 100) if self.diff else 100


@dataclass
class MessageView:
    """One turn: role (``simulated_assistant`` kept distinct), time, pieces in stored order."""

    pk: int
    sequence: int
    role: str
    pieces: list[PieceView]
    time_iso: str = ""
    time_text: str = ""

    @property
    def role_label(self) -> str:
        """The role for people."""
        return _ROLE_LABELS.get(self.role, self.role)

    @property
    def is_system(self) -> bool:
        """System and developer prompts are collapsed by default."""
        return self.role in (ChatMessageRole.SYSTEM, ChatMessageRole.DEVELOPER)


@dataclass
class ThreadView:
    """A conversation as a thread of messages in sequence order."""

    conversation: Conversation
    messages: list[MessageView]
    piece_count: int = 0
    score_count: int = 0
    html: SafeString = field(default_factory=lambda: mark_safe(""))


@dataclass
class ThreadContext:
    """What the thread builder needs to know about the page it is building for."""

    objective: str = ""
    last_score_id: uuid.UUID | None = None
    blur_harmful_media: bool = True
    objective_scorer_hashes: frozenset[str] = frozenset()


@dataclass
class _Rows:
    """The raw rows of some conversations, as read by :func:`_read_rows`."""

    pieces: list[PieceRow]
    chains: dict[uuid.UUID, list[int]]
    scores: dict[uuid.UUID, list[dict[str, Any]]]
    # (value, recorded SHA-256) of media values whose file arrived with other bytes.
    differing: set[tuple[str, str]] = field(default_factory=set)

    @property
    def identifier_pks(self) -> set[int]:
        pks = {pk for chain in self.chains.values() for pk in chain}
        pks |= {s["scorer_class_identifier_id"] for ss in self.scores.values() for s in ss}
        for piece in self.pieces:
            pks.add(piece.prompt_target_identifier_id)
            pks.add(piece.attack_identifier_id)
        pks.discard(None)
        return pks


def _read_rows(conversation_pks: Sequence[int]) -> _Rows:
    """Three queries for any number of pieces: pieces, converter links, scores (a fourth
    when media with a recorded hash is missing: whether its file arrived with other bytes).

    Identifiers are not joined here: a page names a handful of distinct ones, and joining
    them onto 1,000 pieces and 2,000 scores built (and JSON-decoded) thousands of copies.
    """
    pieces = [
        PieceRow(*row)
        for row in MessagePiece.objects.filter(message__conversation_id__in=conversation_pks)
        .order_by("message__conversation_id", "message__sequence", "position")
        .values_list(*PIECE_FIELDS)
    ]
    chains: dict[uuid.UUID, list[int]] = defaultdict(list)
    links = (
        PieceConverter.objects.filter(piece__message__conversation_id__in=conversation_pks)
        .order_by("piece_id", "position")
        .values_list("piece_id", "identifier_id")
    )
    for piece_id, identifier_id in links:
        chains[piece_id].append(identifier_id)
    scores: dict[uuid.UUID, list[dict[str, Any]]] = defaultdict(list)
    scored = MessagePiece.objects.filter(message__conversation_id__in=conversation_pks).values(
        "original_prompt_id"
    )
    for score in (
        Score.objects.filter(message_piece_id__in=scored)
        .order_by("timestamp", "id")
        # Only human scores have a reviewer: the LEFT JOIN costs nothing for the others.
        .values(*SCORE_FIELDS)
    ):
        scores[score["message_piece_id"]].append(score)
    waiting = [
        (value, sha)
        for p in pieces
        for value, sha, blob in (
            (p.original_value, p.original_value_sha256, p.original_media_sha256),
            (p.converted_value, p.converted_value_sha256, p.converted_media_sha256),
        )
        if sha and blob is None
    ]
    differing = media_values_differing(waiting) if waiting else set()
    return _Rows(pieces=pieces, chains=chains, scores=scores, differing=differing)


@dataclass
class _Identifiers:
    """Every identifier row a page names, by pk, and their trees by hash."""

    by_pk: dict[int, ComponentIdentifier]
    nodes: dict[str, IdentNode]


def _load_identifiers(
    *, pks: set[int], known: Iterable[ComponentIdentifier | None]
) -> _Identifiers:
    """One query for the rows not already loaded, then one per child-tree level."""
    by_pk = {row.pk: row for row in known if row is not None}
    missing = pks - by_pk.keys()
    if missing:
        by_pk.update({row.pk: row for row in ComponentIdentifier.objects.filter(pk__in=missing)})
    return _Identifiers(by_pk=by_pk, nodes=identifier_rows(roots=by_pk.values()))


def _build_threads(
    *,
    conversations: Sequence[Conversation],
    rows: _Rows,
    identifiers: _Identifiers,
    context: ThreadContext,
) -> dict[int, ThreadView]:
    """Group the rows into threads of messages (no queries)."""
    media_prefix = reverse("api-media-detail", args=["0"])[: -len("0/")]
    score_url = reverse("piece-human-score", args=[_ZERO])
    tz = timezone.get_current_timezone()
    threads = {c.pk: ThreadView(conversation=c, messages=[]) for c in conversations}
    by_pk = identifiers.by_pk
    read = ScoreReader(nodes=identifiers.nodes, objective_hashes=context.objective_scorer_hashes)
    current: MessageView | None = None
    # The converter chain of each conversation's latest prompt: answers often come back in it.
    request_chains: dict[int, list[tuple[str, dict[str, Any]]]] = {}
    for piece in rows.pieces:
        thread = threads[piece.conversation_pk]
        view = piece_view(
            piece,
            conversation=thread.conversation,
            converters=[by_pk[pk] for pk in rows.chains.get(piece.id, ())],
            scores=[
                score_view(
                    s,
                    scorer=by_pk[s["scorer_class_identifier_id"]],
                    last_score_id=context.last_score_id,
                    objective=context.objective,
                    tz=tz,
                    reading=read(s, by_pk[s["scorer_class_identifier_id"]]),
                )
                for s in rows.scores.get(piece.original_prompt_id, ())
            ],
            context=context,
            media_prefix=media_prefix,
            differing=rows.differing,
        )
        view.score_url = score_url.replace(str(_ZERO), view.id)
        if view.converted.kind == "text":
            _offer_decodings(view, request_chains.get(piece.conversation_pk))
        if piece.role == ChatMessageRole.USER and view.converters:
            request_chains[piece.conversation_pk] = [
                (c.class_name, c.params) for c in view.converters
            ]
        if current is None or current.pk != piece.message_id:
            current = MessageView(
                pk=piece.message_id,
                sequence=piece.sequence,
                role=piece.role,
                pieces=[],
                time_iso=piece.timestamp.isoformat(),
                time_text=_local(piece.timestamp, tz),
            )
            thread.messages.append(current)
        current.pieces.append(view)
        thread.piece_count += 1
        thread.score_count += len(view.scores)
    return threads


#: Roles whose text may come back in the encoding of the prompt before it.
_ANSWER_ROLES = {ChatMessageRole.ASSISTANT, ChatMessageRole.SIMULATED_ASSISTANT}


def _offer_decodings(view: PieceView, request_chain: list[tuple[str, dict[str, Any]]] | None):
    """Decodings of a text piece, as PyRIT's memory supports them (issue 34): its own
    converter chain undone, or, when no converter touched it, the common encodings tried on
    demand, the prompt's chain first for an answer. An answer's text is never decoded with
    the prompt's converters as if they were its own: PyRIT records the answer unconverted."""
    text = view.piece.converted_value
    if view.converters:
        view.decoded = own_decoding(text, [(c.class_name, c.params) for c in view.converters])
        return
    hint = request_chain if view.piece.role in _ANSWER_ROLES and request_chain else ()
    view.trials = trial_decodings(text, hint=hint)


def piece_view(
    piece: PieceRow,
    *,
    conversation: Conversation,
    converters: list[ComponentIdentifier],
    scores: list[ScoreView],
    context: ThreadContext,
    media_prefix: str,
    differing: Collection[tuple[str, str]] = frozenset(),
) -> PieceView:
    """Prepare one piece for display (see :class:`PieceView`); ``differing``: the
    ``(value, recorded SHA-256)`` pairs whose file arrived with other bytes."""
    converted = value_view(
        piece.converted_value_data_type,
        piece.converted_value,
        piece.converted_media_sha256,
        piece.converted_media_content_type,
        media_prefix,
        expected_sha256=piece.converted_value_sha256,
        differs=(piece.converted_value, piece.converted_value_sha256) in differing,
    )
    view = PieceView(
        piece=piece, id=str(piece.id), converted=converted, converters=converters, scores=scores
    )
    same = (
        piece.original_value == piece.converted_value
        and piece.original_value_data_type == piece.converted_value_data_type
    )
    if not same:
        view.original = value_view(
            piece.original_value_data_type,
            piece.original_value,
            piece.original_media_sha256,
            piece.original_media_content_type,
            media_prefix,
            expected_sha256=piece.original_value_sha256,
            differs=(piece.original_value, piece.original_value_sha256) in differing,
        )
        view.cross_type = piece.original_value_data_type != piece.converted_value_data_type
        if not view.cross_type and converted.kind == "text" and view.original.kind == "text":
            view.diff = text_diff(piece.original_value, piece.converted_value)
    view.harm_categories = list(
        piece.targeted_harm_categories or conversation.targeted_harm_categories or []
    )
    # PyRIT 0.x copies the operator's labels onto every piece: show only what differs.
    if piece.labels and piece.labels != conversation.labels:
        view.own_labels = piece.labels
    view.blur = context.blur_harmful_media and bool(view.harm_categories)
    return view


def thread_scores(thread: ThreadView) -> Iterable[ScoreView]:
    """Every score shown in ``thread``, in display order."""
    for message in thread.messages:
        for piece in message.pieces:
            yield from piece.scores


# --- rendering ------------------------------------------------------------------------------


@cache
def _jinja() -> Environment:
    """The autoescaping Jinja2 environment of Redline's own ``templates/review/parts/*.jinja``.

    Not the sandbox on purpose: the sandbox protects against untrusted *templates* (seed
    values are rendered only in it, see ``seeds.templating``); this environment only ever
    loads template files from the repository, and stored content reaches it as data, which
    autoescaping escapes. The sandbox's per-attribute checks tripled the render time of a
    1,000-piece thread (measured: 235 ms against 85 ms CPU).
    """
    env = Environment(
        loader=FileSystemLoader(settings.BASE_DIR / "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=settings.DEBUG,
    )
    env.filters["readable"] = readable_value
    return env


def render_thread(thread: ThreadView, *, can_score: bool, attack_list_url: str) -> SafeString:
    """The HTML of a thread (every message, piece and score); autoescaped by Jinja2."""
    template = _jinja().get_template("review/parts/thread.jinja")
    return mark_safe(
        template.render(thread=thread, can_score=can_score, attack_list_url=attack_list_url)
    )


def render_scores(
    *, piece_id: str, scores: list[ScoreView], attack_list_url: str, clear_form: bool = False
) -> SafeString:
    """The score list of one piece (the htmx answer after a human score is added)."""
    module = _jinja().get_template("review/parts/thread_macros.jinja").module
    return mark_safe(
        str(
            module.scores(
                piece_id=piece_id,
                scores=scores,
                attack_list_url=attack_list_url,
                clear_form=clear_form,
            )
        )
    )


# --- pages ----------------------------------------------------------------------------------


@dataclass
class InspectorEntry:
    """An identifier named on the page, with the attack-list filters it links to."""

    role: str
    node: IdentNode
    links: list[tuple[str, str]]
    #: The identifier-hash column PyRIT stored beside the JSON (kept in the object's
    #: ``extra``, docs/import.md), when the page's object has one: it may differ from the
    #: JSON's hash (PyRIT 1.1.0's scenario attacks).
    stored_hash: str | None = None

    @property
    def stored_hash_differs(self) -> bool:
        """Whether PyRIT's stored column names another hash than the identifier's own."""
        return bool(self.stored_hash) and self.stored_hash != self.node.row.hash


@dataclass
class RelatedView:
    """A related conversation of an attack, with its size."""

    related: RelatedConversation
    message_count: int

    @property
    def is_adversarial(self) -> bool:
        """Adversarial chats are the usual thing to read beside the main conversation."""
        return self.related.conversation_type == ConversationType.ADVERSARIAL


@dataclass
class AttackPage:
    """Everything the attack page shows."""

    attack: AttackResult
    thread: ThreadView
    side: ThreadView | None
    side_related: RelatedConversation | None
    related: list[RelatedView]
    verdicts: list[HumanVerdict]
    attack_tree: IdentNode | None
    atomic_tree: IdentNode | None
    target: IdentNode | None
    inspector: list[InspectorEntry]

    @property
    def execution_time(self) -> str:
        """``execution_time_ms`` for people: ``850 ms``, ``12.4 s``, ``3 min 05 s``."""
        ms = self.attack.execution_time_ms
        if ms < 1000:
            return f"{ms} ms"
        if ms < 60_000:
            return f"{ms / 1000:.1f} s"
        minutes, seconds = divmod(round(ms / 1000), 60)
        return f"{minutes} min {seconds:02d} s"

    @property
    def metadata(self) -> dict[str, str]:
        """The attack's metadata as display strings (JSON for non-strings)."""
        return _display_dict(self.attack.metadata)

    @property
    def attribution(self) -> dict[str, str]:
        """The attack's attribution data as display strings."""
        return _display_dict(self.attack.attribution_data or {})


@dataclass
class ConversationPage:
    """Everything the conversation page shows."""

    conversation: Conversation
    thread: ThreadView
    target: IdentNode | None
    main_of: list[AttackResult]
    related_to: list[RelatedConversation]
    inspector: list[InspectorEntry]


def _display_dict(data: dict) -> dict[str, str]:
    return {
        str(k): v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
        for k, v in data.items()
    }


def _query(**params: str) -> str:
    """A query string for the attack list; every value is URL-encoded (they are stored data)."""
    return urlencode(params)


def _attack_links(row: ComponentIdentifier) -> list[tuple[str, str]]:
    links = [
        ("All attacks with this identifier", _query(identifier=row.hash)),
        (f"All {row.class_name} attacks", _query(attack_class=row.class_name)),
    ]
    if row.eval_hash:
        links.append(("Same eval hash", _query(eval_hash=row.eval_hash)))
    return links


def _target_links(row: ComponentIdentifier) -> list[tuple[str, str]]:
    links = [("All attacks against this target", _query(target_hash=row.hash))]
    model = row.params.get("model_name")
    if isinstance(model, str) and model:
        links.append((f"All attacks on {model}", _query(target_model=model)))
    return links


def _scorer_links(row: ComponentIdentifier) -> list[tuple[str, str]]:
    return [
        ("Attacks this scorer decided", _query(scorer_hash=row.hash)),
        (f"Attacks decided by any {row.class_name}", _query(scorer_class=row.class_name)),
    ]


def _converter_links(row: ComponentIdentifier) -> list[tuple[str, str]]:
    return [(f"All attacks using {row.class_name}", _query(converter_class=row.class_name))]


def _inspector(
    *,
    nodes: dict[str, IdentNode],
    attack_rows: Sequence[tuple[str, ComponentIdentifier | None]],
    target_rows: Iterable[ComponentIdentifier],
    threads: Iterable[ThreadView],
    stored: dict[str, str | None] | None = None,
) -> list[InspectorEntry]:
    """Every identifier on the page, once, with its filter links (attack list contract).
    ``stored``: role → the hash column PyRIT stored for the identifier of that role."""
    entries: list[InspectorEntry] = []
    seen: set[str] = set()
    stored = stored or {}

    def add(role: str, row: ComponentIdentifier | None, links) -> None:
        if row is None or row.hash in seen or row.hash not in nodes:
            return
        seen.add(row.hash)
        column = stored.get(role)
        entries.append(
            InspectorEntry(
                role=role,
                node=nodes[row.hash],
                links=links(row),
                stored_hash=column if isinstance(column, str) else None,
            )
        )

    for role, row in attack_rows:
        add(role, row, _attack_links)
    for row in target_rows:
        add("Target", row, _target_links)
    for thread in threads:
        for message in thread.messages:
            for piece in message.pieces:
                for converter in piece.converters:
                    add("Converter", converter, _converter_links)
        for score in thread_scores(thread):
            add("Human scorer" if score.is_human else "Scorer", score.scorer, _scorer_links)
    return entries


def _targets(
    conversation: Conversation, rows: _Rows, by_pk: dict[int, ComponentIdentifier]
) -> list[ComponentIdentifier]:
    """The conversation's target first, then any other target its pieces name."""
    targets = [conversation.target_identifier] if conversation.target_identifier else []
    for pk in dict.fromkeys(p.prompt_target_identifier_id for p in rows.pieces):
        row = by_pk.get(pk) if pk else None
        if row is not None and row not in targets:
            targets.append(row)
    return targets


def _last_scorer(
    rows: _Rows, by_pk: dict[int, ComponentIdentifier], last_score_id: uuid.UUID | None
) -> ComponentIdentifier | None:
    """The scorer of the attack's ``last_score``, when the page shows that score."""
    if last_score_id is None:
        return None
    for scores in rows.scores.values():
        for score in scores:
            if score["id"] == last_score_id:
                return by_pk.get(score["scorer_class_identifier_id"])
    return None


def _related_views(attack: AttackResult) -> list[RelatedView]:
    message_counts = (
        Message.objects.filter(conversation_id=OuterRef("conversation_id"))
        .values("conversation_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    rows = (
        RelatedConversation.objects.filter(attack_result=attack)
        .select_related("conversation")
        .annotate(message_count=Subquery(message_counts))
        .order_by("conversation_type", "conversation__started_at", "conversation__conversation_id")
    )
    return [RelatedView(related=r, message_count=r.message_count or 0) for r in rows]


def attack_queryset():
    """Attack results with everything the page header joins (one query)."""
    return AttackResult.objects.select_related(
        "conversation__target_identifier",
        "attack_identifier",
        "atomic_attack_identifier",
        "attribution_parent",
        "push_source",
    )


def attack_page(
    *,
    attack: AttackResult,
    side: str | None,
    blur_harmful_media: bool,
    can_score: bool = False,
    attack_list_url: str = "",
) -> AttackPage:
    """The attack page: main conversation, optionally a related one side by side.

    ``attack`` must come from :func:`attack_queryset`. ``side`` is a related conversation id;
    anything else is ignored.
    """
    related = _related_views(attack)
    side_related = next(
        (r.related for r in related if side and r.related.conversation.conversation_id == side),
        None,
    )
    conversations = [attack.conversation]
    if side_related is not None:
        conversations.append(side_related.conversation)
    rows = _read_rows([c.pk for c in conversations])
    known = (
        attack.attack_identifier,
        attack.atomic_attack_identifier,
        attack.conversation.target_identifier,
    )
    identifiers = _load_identifiers(pks=rows.identifier_pks, known=known)
    context = ThreadContext(
        objective=attack.objective,
        last_score_id=attack.last_score_id,
        blur_harmful_media=blur_harmful_media,
        objective_scorer_hashes=objective_scorer_hashes(
            attack_trees=[
                identifiers.nodes.get(row.hash)
                for row in (attack.attack_identifier, attack.atomic_attack_identifier)
                if row is not None
            ],
            last_scorer=_last_scorer(rows, identifiers.by_pk, attack.last_score_id),
        ),
    )
    threads = _build_threads(
        conversations=conversations, rows=rows, identifiers=identifiers, context=context
    )
    for thread in threads.values():
        thread.html = render_thread(thread, can_score=can_score, attack_list_url=attack_list_url)
    verdicts = list(attack.human_verdicts.select_related("reviewer").order_by("-created_at"))
    nodes = identifiers.nodes
    target_rows = _targets(attack.conversation, rows, identifiers.by_pk)
    return AttackPage(
        attack=attack,
        thread=threads[attack.conversation.pk],
        side=threads[side_related.conversation.pk] if side_related else None,
        side_related=side_related,
        related=related,
        verdicts=verdicts,
        attack_tree=nodes.get(attack.attack_identifier.hash) if attack.attack_identifier else None,
        atomic_tree=(
            nodes.get(attack.atomic_attack_identifier.hash)
            if attack.atomic_attack_identifier
            else None
        ),
        target=nodes.get(target_rows[0].hash) if target_rows else None,
        inspector=_inspector(
            nodes=nodes,
            attack_rows=[
                ("Attack", attack.attack_identifier),
                ("Atomic attack", attack.atomic_attack_identifier),
            ],
            target_rows=target_rows,
            threads=threads.values(),
            stored={
                "Atomic attack": attack.extra.get("atomic_attack_identifier_hash"),
                "Target": attack.conversation.extra.get("target_identifier_hash"),
            },
        ),
    )


def conversation_page(
    *,
    conversation: Conversation,
    blur_harmful_media: bool,
    can_score: bool = False,
    attack_list_url: str = "",
) -> ConversationPage:
    """The conversation page: the thread, and the attacks it belongs to (main or related)."""
    main_of = list(
        AttackResult.objects.filter(conversation=conversation)
        .select_related("attack_identifier")
        .order_by("-timestamp")
    )
    related_to = list(
        RelatedConversation.objects.filter(conversation=conversation)
        .select_related("attack_result")
        .order_by("-attack_result__timestamp")
    )
    first = main_of[0] if main_of else None
    rows = _read_rows([conversation.pk])
    attack_rows = [a.attack_identifier for a in main_of if a.attack_identifier]
    identifiers = _load_identifiers(
        pks=rows.identifier_pks, known=[conversation.target_identifier, *attack_rows]
    )
    context = ThreadContext(
        objective=first.objective if first else "",
        last_score_id=first.last_score_id if first else None,
        blur_harmful_media=blur_harmful_media,
        objective_scorer_hashes=objective_scorer_hashes(
            attack_trees=[
                identifiers.nodes.get(first.attack_identifier.hash)
                if first and first.attack_identifier
                else None
            ],
            last_scorer=_last_scorer(
                rows, identifiers.by_pk, first.last_score_id if first else None
            ),
        ),
    )
    thread = _build_threads(
        conversations=[conversation], rows=rows, identifiers=identifiers, context=context
    )[conversation.pk]
    thread.html = render_thread(thread, can_score=can_score, attack_list_url=attack_list_url)
    target_rows = _targets(conversation, rows, identifiers.by_pk)
    return ConversationPage(
        conversation=conversation,
        thread=thread,
        target=identifiers.nodes.get(target_rows[0].hash) if target_rows else None,
        main_of=main_of,
        related_to=related_to,
        inspector=_inspector(
            nodes=identifiers.nodes,
            attack_rows=[("Attack", row) for row in attack_rows],
            target_rows=target_rows,
            threads=[thread],
            stored={"Target": conversation.extra.get("target_identifier_hash")},
        ),
    )


def piece_scores(*, piece: MessagePiece) -> list[ScoreView]:
    """The scores shown under one piece, for the htmx update after a human score is added.

    The attack whose main conversation holds the piece decides which score is ``last_score``
    and which scorer is its objective scorer.
    """
    attack = (
        AttackResult.objects.filter(conversation_id=piece.message.conversation_id)
        .select_related("attack_identifier")
        .order_by("-timestamp")
        .first()
    )
    rows = list(
        Score.objects.filter(message_piece_id=piece.original_prompt_id)
        .order_by("timestamp", "id")
        .values(*SCORE_FIELDS)
    )
    scorers = ComponentIdentifier.objects.in_bulk({r["scorer_class_identifier_id"] for r in rows})
    attack_row = attack.attack_identifier if attack else None
    nodes = identifier_rows(roots=[*scorers.values(), attack_row])
    last_score_id = attack.last_score_id if attack else None
    last_scorer = next(
        (scorers[r["scorer_class_identifier_id"]] for r in rows if r["id"] == last_score_id),
        None,
    )
    read = ScoreReader(
        nodes=nodes,
        objective_hashes=objective_scorer_hashes(
            attack_trees=[nodes.get(attack_row.hash) if attack_row else None],
            last_scorer=last_scorer,
        ),
    )
    tz = timezone.get_current_timezone()
    return [
        score_view(
            s,
            scorer=scorers[s["scorer_class_identifier_id"]],
            last_score_id=last_score_id,
            objective=attack.objective if attack else "",
            tz=tz,
            reading=read(s, scorers[s["scorer_class_identifier_id"]]),
        )
        for s in rows
    ]
