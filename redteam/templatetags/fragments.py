"""``{% jinja_fragment "name.html" key=value … %}``: a Jinja2 template from ``templates/jinja2/``
rendered into a Django template (see :mod:`redteam.jinja` for which fragments and why); and
``|choice_label``, an enum value's label for people."""

from __future__ import annotations

from typing import Any

from django import template
from django.template import engines
from django.utils.safestring import SafeString, mark_safe

from redteam.core import choices as choices_module

register = template.Library()


@register.simple_tag
def jinja_fragment(name: str, **context: Any) -> SafeString:
    """Render the Jinja2 template ``name`` with ``context``; its output is escaped by Jinja2's
    autoescaping, so it goes into the page as it is."""
    return mark_safe(engines["jinja2"].get_template(name).render(context))


@register.filter
def choice_label(value: object, choices: str) -> str:
    """``{{ attack.outcome|choice_label:"AttackOutcome" }}``: an enum value's label for
    people, from the Choices class of that name in :mod:`redteam.core.choices`
    (see :func:`redteam.core.choices.choice_label`)."""
    return choices_module.choice_label(choices, value)


@register.filter
def readable(value: object) -> str:
    """``{{ value|readable }}``: a stored JSON value without Python's repr
    (see :func:`redteam.core.choices.readable_value`)."""
    return choices_module.readable_value(value)
