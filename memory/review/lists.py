"""Attack and conversation lists, and the global search.

The lists filter through the shared filtersets (``memory.storage.filters``), so
``/attacks/?<params>`` means exactly what ``/api/v1/attack-results/?<params>`` means and a
dashboard drill-down lists the attacks it counted. The filter state lives in the query string:
the side panel is a GET form, sorting and paging are links. With htmx the form and the links
swap only the results (the named partial ``results`` of the page template) and push the URL;
without JavaScript the same URLs render the whole page.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import django_filters
from django.contrib.auth.decorators import login_required, permission_required
from django.db.models import F, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import escape
from django.utils.http import urlencode
from django.utils.safestring import mark_safe

from memory.models import AttackResult, Conversation
from memory.review.forms import QUEUE_CREATE_PERMISSION, VERDICT_PERMISSION
from memory.review.rendering import highlight_snippet
from memory.storage import selectors
from memory.storage.attack_table import TABLE_FORMATS, attack_table
from memory.storage.filters import (
    ATTACK_DEFAULT_SORT,
    ATTACK_SORTS,
    AttackResultFilter,
    ConversationFilter,
)
from memory.storage.human_labels import (
    HumanLabelError,
    harm_labels,
    human_labels_csv,
    objective_labels,
)
from memory.storage.queues import (
    attacks_seen_by,
    attacks_with_visible_verdicts,
    blind_hidden_attacks,
    with_seen_human_outcome,
)
from redteam.core.choices import AttackOutcome, ConversationType
from redteam.core.downloads import as_attachment, file_stamp, streaming_download
from redteam.core.filters import ordering
from redteam.core.forms import datetime_input_value
from redteam.core.htmx import wants_fragment
from redteam.core.pagination import Page, paginate
from redteam.models import SavedView

#: Rows per page.
PER_PAGE = 50

CONVERSATION_SORTS: dict[str, tuple[Any, bool]] = {
    "started": (F("started_at"), True),
    "id": (F("conversation_id"), False),
}
CONVERSATION_DEFAULT_SORT = "-started"

#: Query parameters that are not filters: kept across filter changes, never shown as chips.
_NOT_FILTERS = {"sort", "page", "count", "format"}
#: The attack list's download format besides the tables: PyRIT's human-label CSV.
HUMAN_LABELS = "human-labels"


# --- small helpers ------------------------------------------------------------------------------


def query_with(params: QueryDict, **changes: str | list[str] | None) -> str:
    """``?query`` of ``params`` with ``changes`` applied (None removes a parameter).

    Empty values and ``page=1`` are dropped, so equal states have equal, short URLs.
    """
    query = QueryDict(mutable=True)
    for key, values in params.lists():
        kept = [value for value in values if value != ""]
        if kept:
            query.setlist(key, kept)
    for key, value in changes.items():
        if value is None or value == [] or value == "":
            query.pop(key, None)
        else:
            query.setlist(key, value if isinstance(value, list) else [value])
    if query.get("page") == "1":
        query.pop("page")
    encoded = query.urlencode()
    return f"?{encoded}" if encoded else "?"


def canonical_url(request: HttpRequest) -> str:
    """The request's path with the canonical query string (see :func:`query_with`)."""
    query = query_with(request.GET)
    return request.path if query == "?" else f"{request.path}{query}"


def format_duration(ms: int | None) -> str:
    """A human duration: ``850 ms``, ``12.3 s``, ``4 m 05 s``, ``1 h 02 m``."""
    if ms is None:
        return ""
    if ms < 1000:
        return f"{ms} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} m {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} m"


_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def camel_wrap(name: str | None) -> str:
    """A class name with ``<wbr>`` at its camel-case joints, so narrow columns wrap it whole.

    ``TreeOfAttacksWithPruningAttack`` would otherwise break mid-word or widen the table.
    """
    if not name:
        return ""
    return mark_safe("<wbr>".join(escape(part) for part in _CAMEL_BOUNDARY.split(name)))


def shorten(text: str | None, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (templates' ``truncatechars`` costs
    ~0.2 ms a call, a tenth of a 50-row page's render)."""
    text = text or ""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass(frozen=True)
class When:
    """A moment as list rows show it: ISO for ``<time datetime>``, date and clock in UTC."""

    iso: str
    date: str
    clock: str
    title: str

    @classmethod
    def of(cls, moment: datetime | None) -> When | None:
        """The display strings of ``moment`` (None stays None)."""
        if moment is None:
            return None
        utc = moment.astimezone(UTC)
        return cls(
            iso=utc.isoformat(),
            date=utc.strftime("%Y-%m-%d"),
            clock=utc.strftime("%H:%M"),
            title=utc.strftime("%Y-%m-%d %H:%M:%S UTC"),
        )


#: Matches counted exactly before a list says "more than"; ``?count=all`` lifts the cap.
COUNT_CAP = 1000


def page_links(params: QueryDict, page: Page) -> list[dict[str, Any]]:
    """Numbered links: first, last (when known) and two either side of the current page."""
    last = page.num_pages or (page.number + 1 if page.has_next else page.number)
    wanted = {1, last, *range(page.number - 2, page.number + 3)}
    numbers = sorted(n for n in wanted if 1 <= n <= last)
    links: list[dict[str, Any]] = []
    previous = 0
    for number in numbers:
        if number - previous > 1:
            links.append({"gap": True})
        links.append(
            {
                "number": number,
                "url": query_with(params, page=str(number)),
                "current": number == page.number,
            }
        )
        previous = number
    if page.num_pages is None and page.has_next:
        links.append({"gap": True})
    return links


def pagination_context(params: QueryDict, page: Page) -> dict[str, Any]:
    """Everything ``list_parts/pagination.html`` and ``summary.html`` show."""
    return {
        "page": page,
        "page_links": page_links(params, page),
        "prev_url": query_with(params, page=str(page.number - 1)) if page.number > 1 else "",
        "next_url": query_with(params, page=str(page.number + 1)) if page.has_next else "",
        "count_all_url": "" if page.exact else query_with(params, count="all", page=None),
        "first_url": query_with(params, page=None),
    }


@dataclass(frozen=True)
class Column:
    """A list table column: its header, and the sort keys its header links to.

    ``sorts`` holds ``(key, label, first click descends)``; a column with two (turns and
    duration share one) shows two links, stacked.
    """

    label: str
    css: str = ""
    sorts: tuple[tuple[str, str, bool], ...] = ()


def sort_columns(params: QueryDict, current: str, columns: Iterable[Column]) -> list[dict]:
    """Header state per column: its sort links (clicking the current key reverses it) and
    ``aria_sort`` on the column sorted by."""
    headers = []
    for column in columns:
        links = []
        aria_sort = ""
        for key, label, descending_first in column.sorts:
            active = current.lstrip("-") == key
            if active:
                target = key if current.startswith("-") else f"-{key}"
                aria_sort = "descending" if current.startswith("-") else "ascending"
            else:
                target = f"-{key}" if descending_first else key
            links.append(
                {
                    "key": key,
                    "label": label,
                    "url": query_with(params, sort=target, page=None),
                    "sorted": aria_sort if active else "",
                }
            )
        headers.append(
            {"label": column.label, "css": column.css, "links": links, "aria_sort": aria_sort}
        )
    return headers


#: Display names of filter parameters (active-filter chips and error messages).
FILTER_LABELS = {
    "q": "Text",
    "outcome": "Automated outcome",
    "effective_outcome": "Outcome",
    "has_human_verdict": "Human verdict",
    "attack_class": "Attack",
    "target_class": "Target class",
    "target_model": "Target model",
    "target_hash": "Target",
    "converter_class": "Converter",
    "scorer_class": "Scorer",
    "scorer_hash": "Scorer",
    "labels": "Label",
    "harm_category": "Harm category",
    "framework": "Framework",
    "dataset": "Dataset",
    "identifier": "Identifier",
    "eval_hash": "Eval hash",
    "timestamp_after": "From",
    "timestamp_before": "Until",
    "conversation_id": "Conversation",
    "related_type": "Related as",
    "has_attack_result": "Has attack result",
}

#: Filters whose values are 64-hex hashes, shown shortened.
_HASH_FILTERS = {"target_hash", "scorer_hash", "identifier", "eval_hash"}


def active_filters(params: QueryDict, filterset: django_filters.FilterSet) -> list[dict[str, str]]:
    """One removable chip per filter value in the URL (known filters only)."""
    chips = []
    for key, values in params.lists():
        if key in _NOT_FILTERS or key not in filterset.filters:
            continue
        for value in values:
            if value == "":
                continue
            shown = value[:8] + "…" if key in _HASH_FILTERS and len(value) > 12 else value
            if key == "has_human_verdict":
                shown = {"true": "yes", "false": "no"}.get(value.lower(), value)
            remaining = [v for v in values if v != value]
            chips.append(
                {
                    "label": FILTER_LABELS.get(key, key),
                    "value": shown,
                    "full": value,
                    "remove_url": query_with(params, **{key: remaining, "page": None}),
                }
            )
    return chips


def filter_errors(filterset: django_filters.FilterSet) -> list[str]:
    """The filterset's validation errors as sentences naming the filter."""
    messages = []
    for key, errors in filterset.errors.items():
        for error in errors:
            messages.append(f"{FILTER_LABELS.get(key, key)} ({key}): {error}")
    return messages


def with_current(options: list[str], current: Iterable[str]) -> list[str]:
    """``options`` plus any currently selected value missing from them (kept selectable)."""
    extra = [value for value in current if value and value not in options]
    return [*options, *extra]


def filter_panel(
    request: HttpRequest,
    filterset: Any,
    options: dict[str, list[str]],
    keyed: Iterable[tuple[str, str]],
    advanced: Iterable[str],
) -> dict[str, Any]:
    """What a list's side panel shows: the options (each keyed list also holding the values in
    the URL, so a shared link keeps its filter), the chosen values, the date range, and whether
    the advanced section starts open (any of ``advanced`` is set)."""
    get = request.GET
    for key, option_key in keyed:
        options[option_key] = with_current(options[option_key], get.getlist(key))
    cleaned = filterset.form.cleaned_data if filterset.form.is_bound else {}
    return {
        "options": options,
        "selected": {key: get.getlist(key) for key in filterset.filters},
        "one": {key: get.get(key, "") for key in filterset.filters},
        "time_after": datetime_input_value(cleaned.get("timestamp_after")),
        "time_before": datetime_input_value(cleaned.get("timestamp_before")),
        "advanced_open": any(get.get(key) for key in advanced),
    }


def _list_response(
    request: HttpRequest,
    template: str,
    context: dict[str, Any],
    *,
    status: int,
    count: str | None,
) -> HttpResponse:
    """The whole page, or its ``results`` partial for htmx (with the URL to push)."""
    if wants_fragment(request):
        response = render(request, f"{template}#results", context, status=status)
        response["HX-Push-Url"] = canonical_url(request)
    else:
        response = render(request, template, context, status=status)
    if count is not None:
        # Lets the benchmark and tests read the number of matches without parsing HTML.
        response["X-Result-Count"] = count
    response["Vary"] = "HX-Request"
    return response


def run_list(
    request: HttpRequest,
    *,
    filterset_class: type[django_filters.FilterSet],
    base: QuerySet,
    sorts: dict[str, Any],
    default_sort: str,
    load: Callable[[list[Any]], Iterable[Any]],
) -> tuple[django_filters.FilterSet, Page | None, str, list[str]]:
    """Filter, sort and paginate; returns (filterset, page or None if invalid, sort, errors)."""
    filterset = filterset_class(request.GET, queryset=base, request=request)
    sort, order = ordering(sorts, request.GET.get("sort", ""), default_sort)
    if not filterset.is_valid():
        return filterset, None, sort, filter_errors(filterset)
    page = paginate(
        filterset.qs.order_by(*order),
        page=request.GET.get("page"),
        load=load,
        per_page=PER_PAGE,
        cap=COUNT_CAP,
        count_all=request.GET.get("count") == "all",
    )
    return filterset, page, sort, []


def needs_cleanup(request: HttpRequest) -> bool:
    """The query string carries empty values (a submitted GET form): redirect to the short URL."""
    return not wants_fragment(request) and any(
        value == "" for _, values in request.GET.lists() for value in values
    )


# --- attack list --------------------------------------------------------------------------------

#: Columns every attack list shows.
FIXED_ATTACK_COLUMNS = [
    Column("Outcome", "col-outcome", (("outcome", "Outcome", False),)),
    Column("Objective", "col-objective", (("objective", "Objective", False),)),
]
#: Columns a user may show or hide (Preferences stores the keys), in display order.
OPTIONAL_ATTACK_COLUMNS: dict[str, Column] = {
    "attack": Column("Attack", "col-attack", (("attack", "Attack", False),)),
    "target": Column("Target", "col-target"),
    "operator": Column("Operator", "col-operator"),
    "scenario": Column("Scenario", "col-scenario"),
    "converters": Column("Converters", "col-converters"),
    "messages": Column("Messages", "num col-messages"),
    "turns": Column(
        "Turns", "num col-turns", (("turns", "Turns", True), ("duration", "Duration", True))
    ),
    "score": Column("Last score", "col-score", (("score", "Last score", True),)),
    "time": Column("Time", "col-time", (("time", "Time", True),)),
}
DEFAULT_ATTACK_COLUMNS = ("attack", "target", "turns", "score", "time")
ATTACK_COLUMNS = [
    *FIXED_ATTACK_COLUMNS,
    *(OPTIONAL_ATTACK_COLUMNS[key] for key in DEFAULT_ATTACK_COLUMNS),
]


def _extra_columns(rows: list[AttackResult], shown: list[str]) -> None:
    """What the optional columns that need a query of their own show (one query each, only
    when the column is shown)."""
    conversation_pks = [row.conversation_id for row in rows]
    if "converters" in shown:
        chains = selectors.converter_chains(conversation_pks=conversation_pks)
        for row in rows:
            row.converter_chain = chains.get(row.conversation_id, [])
    if "messages" in shown:
        counts = selectors.message_counts(conversation_pks=conversation_pks)
        for row in rows:
            row.message_count = counts.get(row.conversation_id, 0)


def shown_attack_columns(user) -> list[str]:
    """The optional attack-list columns ``user`` shows (their preference, else the default),
    read from the preference the login loaded with the user: no query."""
    preference = getattr(user, "preference", None) if user.is_authenticated else None
    chosen = getattr(preference, "attack_columns", None)
    if not isinstance(chosen, list):
        return list(DEFAULT_ATTACK_COLUMNS)
    return [key for key in OPTIONAL_ATTACK_COLUMNS if key in chosen]


#: The attack list's first column for reviewers: tick rows for a bulk verdict.
SELECT_COLUMN = Column("Select", "col-select")


def _attack_filter_panel(request: HttpRequest, filterset: AttackResultFilter) -> dict[str, Any]:
    """Options and current values of the attack list's side panel."""
    panel = filter_panel(
        request,
        filterset,
        selectors.attack_filter_options(),
        keyed=(
            ("attack_class", "attack_classes"),
            ("target_class", "target_classes"),
            ("target_model", "target_models"),
            ("scorer_class", "scorer_classes"),
            ("converter_class", "converter_classes"),
            ("dataset", "datasets"),
            ("harm_category", "harm_categories"),
        ),
        advanced=("outcome", "identifier", "eval_hash", "target_hash", "scorer_hash"),
    )
    return {**panel, "outcome_choices": AttackOutcome.choices}


@login_required
@permission_required("memory.view_attackresult", raise_exception=True)
def attack_list(request: HttpRequest) -> HttpResponse:
    """Attack results, one row each, filtered by the shared ``AttackResultFilter``.

    Queries: session and user, the filter panel's options (5), the count and the page.
    ``?format=csv`` / ``?format=json`` download every matching attack instead (streamed).
    """
    if "format" in request.GET:
        return _attack_table(request)
    if needs_cleanup(request):
        return HttpResponseRedirect(canonical_url(request))
    # Blind review: attacks whose verdicts are hidden from this user read as not reviewed, in
    # the filters, the count and the rows alike.
    hidden = blind_hidden_attacks(user=request.user)
    filterset, page, sort, errors = run_list(
        request,
        filterset_class=AttackResultFilter,
        base=with_seen_human_outcome(attacks=AttackResult.objects.all(), hidden=hidden),
        sorts=ATTACK_SORTS,
        default_sort=ATTACK_DEFAULT_SORT,
        load=lambda pks: with_seen_human_outcome(
            attacks=selectors.attack_list_queryset().filter(pk__in=pks), hidden=hidden
        ),
    )
    if page is not None:
        for row in page.rows:
            row.objective_short = shorten(row.objective, 280)
            row.objective_title = shorten(row.objective, 400)
            row.when = When.of(row.timestamp)
            row.duration_display = format_duration(row.execution_time_ms)
            row.attack_class_display = camel_wrap(
                row.attack_identifier.class_name if row.attack_identifier else ""
            )
            target = row.conversation.target_identifier
            row.target_class_display = camel_wrap(target.class_name if target else "")
            score = row.last_score
            row.scorer_class_display = camel_wrap(
                score.scorer_class_identifier.class_name if score else ""
            )
            # PyRIT 1.2's column, else the label earlier versions used for it.
            labels = row.labels if isinstance(row.labels, dict) else {}
            row.operator_display = (
                row.operator or labels.get("operator") or labels.get("username", "")
            )
    params = request.GET
    can_bulk = request.user.has_perm(VERDICT_PERMISSION)
    shown = shown_attack_columns(request.user)
    if page is not None and page.rows:
        _extra_columns(page.rows, shown)
    columns = [*FIXED_ATTACK_COLUMNS, *(OPTIONAL_ATTACK_COLUMNS[key] for key in shown)]
    if can_bulk:
        columns = [SELECT_COLUMN, *columns]
    context: dict[str, Any] = {
        "filterset": filterset,
        "page": page,
        "errors": errors,
        "sort": sort,
        "columns": sort_columns(params, sort, columns),
        "shown": shown,
        "column_choices": [(key, col.label) for key, col in OPTIONAL_ATTACK_COLUMNS.items()],
        # Reviewers tick rows and record one verdict on all of them; leads make a queue.
        "can_bulk": can_bulk,
        "bulk_next": canonical_url(request),
        "new_queue_url": (
            reverse("queue-create")
            + "?"
            + urlencode({"filter": query_with(params, page=None, count=None)[1:]})
            if request.user.has_perm(QUEUE_CREATE_PERMISSION)
            else ""
        ),
        "chips": active_filters(params, filterset),
        "clear_url": reverse("attack-list") + (f"?sort={sort}" if "sort" in params else ""),
        "attack_list_url": reverse("attack-list"),
        # Every match, not the page: the filters and the sort order of this view.
        "downloads": [
            *(
                (fmt.upper(), query_with(params, format=fmt, page=None, count=None))
                for fmt in TABLE_FORMATS
            ),
            (
                "PyRIT human labels",
                query_with(params, format=HUMAN_LABELS, page=None, count=None),
            ),
        ],
    }
    if page is not None:
        context.update(pagination_context(params, page))
    if not wants_fragment(request):
        context.update(_attack_filter_panel(request, filterset))
        context["saved_views"] = list(
            SavedView.objects.filter(user=request.user, page="attack-list")
        )
        context["view_query"] = query_with(params, page=None, count=None)[1:]
    return _list_response(
        request,
        "review/attack_list.html",
        context,
        status=400 if errors else 200,
        count=page.count_display.replace(",", "") if page else None,
    )


def _plain_400(message: str) -> HttpResponse:
    return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")


def _attack_table(request: HttpRequest) -> HttpResponse:
    """The whole filtered, sorted attack list as a CSV or JSON download, or its reviewers'
    verdicts as a PyRIT ``HumanLabeledDataset`` CSV (``format=human-labels``)."""
    fmt = request.GET["format"]
    if fmt not in TABLE_FORMATS and fmt != HUMAN_LABELS:
        return _plain_400(
            f"format: {fmt!r} is not a download format; use csv, json or {HUMAN_LABELS}"
        )
    params = request.GET.copy()
    for key, values in request.GET.lists():
        # A submitted filter form sends its empty fields; they mean "no filter".
        params.setlist(key, [value for value in values if value != ""])
    filterset = AttackResultFilter(
        params,
        queryset=attacks_seen_by(user=request.user, attacks=AttackResult.objects.all()),
        request=request,
    )
    if not filterset.is_valid():
        return _plain_400("\n".join(filter_errors(filterset)))
    if fmt == HUMAN_LABELS:
        # Reviewers' verdicts, one per reviewer: none that a blind queue hides from this user.
        return _human_labels(
            params, attacks_with_visible_verdicts(user=request.user, attacks=filterset.qs)
        )
    _, order = ordering(ATTACK_SORTS, params.get("sort", ""), ATTACK_DEFAULT_SORT)
    table = attack_table(
        queryset=filterset.qs.order_by(*order),
        fmt=fmt,
        link=lambda pk: request.build_absolute_uri(reverse("attack-detail", args=[pk])),
    )
    return streaming_download(
        table.chunks,
        content_type=table.content_type,
        filename=f"redline-attacks-{file_stamp()}.{table.suffix}",
    )


def _human_labels(params: QueryDict, attacks: QuerySet[AttackResult]) -> HttpResponse:
    """The reviewed attacks among ``attacks`` as a PyRIT human-label file: ``kind`` objective
    (default) or harm (with ``harm``), ``raters``, ``dataset_version`` (default 1.0),
    ``harm_definition``, ``harm_definition_version``."""
    kind = params.get("kind", "objective")
    try:
        raters = int(params.get("raters", "1"))
    except ValueError:
        return _plain_400(f"raters: {params.get('raters')!r} is not a whole number")
    try:
        if kind == "objective":
            labels = objective_labels(attacks=attacks, raters=raters)
        elif kind == "harm":
            labels = harm_labels(
                attacks=attacks, harm_category=params.get("harm", ""), raters=raters
            )
        else:
            return _plain_400(f"kind: {kind!r} is not objective or harm")
        lines = list(
            human_labels_csv(
                labels,
                dataset_version=params.get("dataset_version", "1.0"),
                harm_definition=params.get("harm_definition", ""),
                harm_definition_version=params.get("harm_definition_version", ""),
            )
        )
    except HumanLabelError as exc:
        return _plain_400(str(exc))
    response = HttpResponse("".join(lines), content_type="text/csv; charset=utf-8")
    response["X-Redline-Rows"] = str(len(labels.rows))
    response["X-Redline-Skipped"] = (
        f"fewer-raters={labels.skipped_raters}; not-text={labels.skipped_media}"
    )
    return as_attachment(response, f"redline-human-labels-{kind}-{file_stamp()}.csv")


# --- conversation list --------------------------------------------------------------------------

CONVERSATION_COLUMNS = [
    Column("Conversation", "col-conversation", (("id", "Conversation", False),)),
    Column("Target", "col-target"),
    Column("Messages", "num col-messages"),
    Column("Related to", "col-related"),
    Column("Started", "col-time", (("started", "Started", True),)),
]


@login_required
@permission_required("memory.view_conversation", raise_exception=True)
def conversation_list(request: HttpRequest) -> HttpResponse:
    """Conversations that are no attack's main conversation (standalone runs, helper chats).

    Queries: session and user, the filter panel's options (3), the count, the page and its
    summaries (3: message counts, first messages, attack links).
    """
    if needs_cleanup(request):
        return HttpResponseRedirect(canonical_url(request))
    filterset, page, sort, errors = run_list(
        request,
        filterset_class=ConversationFilter,
        base=selectors.conversations_without_attack(),
        sorts=CONVERSATION_SORTS,
        default_sort=CONVERSATION_DEFAULT_SORT,
        load=lambda pks: Conversation.objects.filter(pk__in=pks).select_related(
            "target_identifier"
        ),
    )
    if page is not None:
        summaries = selectors.conversation_summaries(conversations=page.rows)
        for row in page.rows:
            row.summary = summaries[row.pk]
            row.when = When.of(row.started_at)
            target = row.target_identifier
            row.target_class_display = camel_wrap(target.class_name if target else "")
    params = request.GET
    context: dict[str, Any] = {
        "filterset": filterset,
        "page": page,
        "errors": errors,
        "sort": sort,
        "columns": sort_columns(params, sort, CONVERSATION_COLUMNS),
        "chips": active_filters(params, filterset),
        "clear_url": reverse("conversation-list"),
        "attack_list_url": reverse("attack-list"),
        # Every match, not the page: the filters and the sort order of this view.
        "downloads": [
            *(
                (fmt.upper(), query_with(params, format=fmt, page=None, count=None))
                for fmt in TABLE_FORMATS
            ),
            (
                "PyRIT human labels",
                query_with(params, format=HUMAN_LABELS, page=None, count=None),
            ),
        ],
    }
    if page is not None:
        context.update(pagination_context(params, page))
    if not wants_fragment(request):
        panel = filter_panel(
            request,
            filterset,
            selectors.conversation_filter_options(),
            keyed=(
                ("target_class", "target_classes"),
                ("target_model", "target_models"),
                ("harm_category", "harm_categories"),
            ),
            advanced=("identifier", "conversation_id"),
        )
        context.update({**panel, "related_choices": ConversationType.choices})
    return _list_response(
        request,
        "review/conversation_list.html",
        context,
        status=400 if errors else 200,
        count=page.count_display.replace(",", "") if page else None,
    )


# --- search -------------------------------------------------------------------------------------


@login_required
@permission_required(["memory.view_attackresult", "memory.view_conversation"], raise_exception=True)
def search(request: HttpRequest) -> HttpResponse:
    """Global search: exact ids first (attack result, conversation, piece), then objectives and
    piece text (bounded substring scans; see ``selectors.memory_search``)."""
    query = request.GET.get("q", "").strip()
    results = selectors.memory_search(query=query)
    # Escaped by highlight_snippet, which marks every match in the part shown.
    for attack in results.attacks_by_objective:
        attack.snippet = mark_safe(highlight_snippet(attack.objective, query))
    for piece in results.pieces_by_text:
        text = piece.converted_value if query.lower() in piece.converted_value.lower() else ""
        piece.snippet = mark_safe(highlight_snippet(text or piece.original_value, query))
        piece.matched_original = not text
    context = {
        "query": query,
        "results": results,
        "min_text": selectors.SEARCH_MIN_TEXT,
        "piece_scan": f"{selectors.SEARCH_PIECE_SCAN:,}",
        "group_limit": selectors.SEARCH_GROUP_LIMIT,
        "count_cap": selectors.SEARCH_COUNT_CAP,
        "count_cap_text": f"{selectors.SEARCH_COUNT_CAP:,}",
    }
    response = render(request, "review/search.html", context)
    response["X-Result-Count"] = str(results.total)
    return response
