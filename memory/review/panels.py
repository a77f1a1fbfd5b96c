"""Context of page parts that render both inside a page and alone (an htmx swap)."""

from __future__ import annotations

from django.http import HttpRequest

from memory.models import AttackResult
from memory.review.forms import VERDICT_PERMISSION, VerdictForm


def verdict_context(
    request: HttpRequest,
    attack: AttackResult,
    form: VerdictForm | None,
    *,
    recorded: bool = False,
    oob: bool = False,
    verdicts: list | None = None,
) -> dict:
    """Context of the verdict panel: automated vs human outcome, history and the form.

    ``verdicts`` is the history when the caller has already read it.
    """
    can_review = request.user.has_perm(VERDICT_PERMISSION)
    if verdicts is None:
        verdicts = list(attack.human_verdicts.select_related("reviewer").order_by("-created_at"))
    return {
        "attack": attack,
        "verdicts": verdicts,
        "can_review": can_review,
        "verdict_form": (form or VerdictForm()) if can_review else None,
        "recorded": recorded,
        "oob": oob,
    }
