"""Forms that give back exactly what was stored when the user did not change it.

A browser round trip is lossy in three ways, and each one silently rewrites data nobody touched:

* **Line endings.** Browsers submit every ``<textarea>`` with CRLF line endings (HTML's form
  submission rules), and Django's ``CharField`` strips surrounding whitespace by default. A
  multi-line seed saved unchanged came back with ``\\r\\n`` everywhere: a new value, a new
  ``value_sha256``, an export full of ``\\r\\n``.
* **Null.** A nullable ``TextField`` renders ``None`` as an empty box, and Django's form field
  turns the empty box into ``""``.
* **Precision.** The admin's date-time widget shows whole seconds, so the microseconds PyRIT
  stored were lost on every save.

:class:`StoredValuesMixin` fixes all three in one place, after the fields are cleaned: a value
that differs from the stored one only by what the browser does to it *is* the stored value, and
a changed text gets the stored text's line endings back (LF for new text). Every admin and app
form that edits stored data uses it (``StoredValuesModelForm``, ``StoredValuesAdminMixin``).
"""

from __future__ import annotations

import json
from datetime import datetime, time
from typing import Any

from django import forms
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.utils import timezone

#: The stored value of a field that has none: a new object's, or any field of a plain form.
_UNSET = object()


def normalize_newlines(text: str, *, like: str | None = None) -> str:
    """``text`` with the line endings of ``like``: CRLF when ``like`` uses only CRLF, else LF.

    New text (``like`` is None) gets LF, the convention of PyRIT's YAML and of every export.
    """
    lf = text.replace("\r\n", "\n").replace("\r", "\n")
    if like and "\r\n" in like and "\n" not in like.replace("\r\n", ""):
        return lf.replace("\n", "\r\n")
    return lf


def _text_form(value: Any, *, strip: bool) -> str:
    """A text as a browser gives it back: ``None`` as an empty box, any newline the same."""
    text = "" if value is None else str(value)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.strip() if strip else text


def _json_form(value: Any) -> str | None:
    """JSON as the form shows it; None when it cannot be shown (never equal to anything)."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return None


def unchanged_by_browser(field: forms.Field, *, submitted: Any, stored: Any) -> bool:
    """Whether ``submitted`` is ``stored`` after a browser round trip through ``field``.

    Text: the same after line-ending normalisation (and the field's stripping), ``None`` and
    ``""`` alike. JSON: the same JSON text. Date-times and times: the same instant at the
    widget's whole-second precision. Anything else: equal.
    """
    if isinstance(field, forms.JSONField):
        return _json_form(submitted) is not None and _json_form(submitted) == _json_form(stored)
    if isinstance(field, forms.CharField):
        if not isinstance(stored, str | type(None)) or not isinstance(submitted, str | None):
            return False
        strip = getattr(field, "strip", False)
        return _text_form(submitted, strip=strip) == _text_form(stored, strip=strip)
    if isinstance(stored, datetime) and isinstance(submitted, datetime):
        return submitted.microsecond == 0 and stored.replace(microsecond=0) == submitted
    if isinstance(stored, time) and isinstance(submitted, time):
        return submitted.microsecond == 0 and stored.replace(microsecond=0) == submitted
    return submitted == stored


class StoredValuesMixin:
    """Keep stored values a browser round trip would change; give new text LF line endings.

    Works on plain forms (no stored values: text gets LF) and on model forms, where the stored
    values are the instance's as loaded from the database. Runs after each field's own
    cleaning (``clean_<field>``) and before the form's ``clean()``.
    """

    def _clean_fields(self) -> None:
        super()._clean_fields()  # type: ignore[misc]
        #: Fields whose submitted value was the stored one (not "changed", see changed_data).
        self.kept_stored: set[str] = set()
        for name, field in self.fields.items():  # type: ignore[attr-defined]
            if field.disabled or name not in self.cleaned_data:  # type: ignore[attr-defined]
                continue
            submitted = self.cleaned_data[name]  # type: ignore[attr-defined]
            stored = self._stored_value(name)
            if stored is not _UNSET and unchanged_by_browser(
                field, submitted=submitted, stored=stored
            ):
                self.cleaned_data[name] = stored  # type: ignore[attr-defined]
                self.kept_stored.add(name)
            elif isinstance(submitted, str):
                like = stored if isinstance(stored, str) else None
                submitted = normalize_newlines(submitted, like=like)
                # An emptied box of a nullable column is PyRIT's "absent", not "".
                self.cleaned_data[name] = (  # type: ignore[attr-defined]
                    None if submitted == "" and self._nullable(name) else submitted
                )

    @property
    def changed_data(self) -> list[str]:
        """Django's changed fields, without those whose stored value was kept.

        Django compares the raw submission with the initial value, so a CRLF text or a
        date-time without its microseconds would count as changed (the admin's log entry, and
        code that acts on changed fields, would be wrong).
        """
        changed = super().changed_data  # type: ignore[misc]
        kept = getattr(self, "kept_stored", set())
        return [name for name in changed if name not in kept]

    def _model_field(self, name: str) -> models.Field | None:
        meta = getattr(self, "_meta", None)
        model = getattr(meta, "model", None)
        if model is None:
            return None
        try:
            field = model._meta.get_field(name)
        except FieldDoesNotExist:
            return None
        return field if getattr(field, "concrete", False) and not field.is_relation else None

    def _nullable(self, name: str) -> bool:
        field = self._model_field(name)
        return field is not None and field.null

    def _stored_value(self, name: str) -> Any:
        """The instance's stored value of ``name``, or ``_UNSET`` for a new or plain form."""
        instance = getattr(self, "instance", None)
        if instance is None or instance._state.adding or self._model_field(name) is None:
            return _UNSET
        return getattr(instance, name)


class StoredValuesModelForm(StoredValuesMixin, forms.ModelForm):
    """A model form that changes only what the user changed (see the module docstring)."""


class StoredValuesForm(StoredValuesMixin, forms.Form):
    """A plain form whose text arrives with LF line endings, whatever the browser sent."""


class StoredValuesAdminMixin:
    """For ``ModelAdmin`` and inlines: every form they build keeps unchanged stored values.

    The admin's own form (``form`` or one passed to ``get_form``) is wrapped, so admins with
    custom forms get the behaviour too.
    """

    form = StoredValuesModelForm

    def get_form(self, request: Any, obj: Any = None, **kwargs: Any) -> Any:
        return keep_stored_values(super().get_form(request, obj, **kwargs))  # type: ignore[misc]

    def get_formset(self, request: Any, obj: Any = None, **kwargs: Any) -> Any:
        formset = super().get_formset(request, obj, **kwargs)  # type: ignore[misc]
        formset.form = keep_stored_values(formset.form)
        return formset


def keep_stored_values(form_class: type[forms.BaseForm]) -> type[forms.BaseForm]:
    """``form_class`` with :class:`StoredValuesMixin` mixed in (itself when it has it)."""
    if issubclass(form_class, StoredValuesMixin):
        return form_class
    return type(form_class.__name__, (StoredValuesMixin, form_class), {})


def datetime_input_value(value: datetime | str | None) -> str:
    """``value`` as an ``<input type=datetime-local>`` value, in the current time zone.

    The input has no offset: the browser sends back what it shows, and forms read a time
    without an offset in the current time zone (``TIME_ZONE``). So an aware value is shown in
    that zone, a naive one as it is; seconds only when there are any. An ISO string is parsed
    first; one that does not parse, or that the zone cannot show, gives an empty input.
    """
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return ""
    if value is None:
        return ""
    if timezone.is_aware(value):
        try:
            value = timezone.localtime(value)
        except OverflowError:  # outside the years 1-9999 there: the filter refuses it anyway
            return ""
    return value.strftime("%Y-%m-%dT%H:%M:%S" if value.second else "%Y-%m-%dT%H:%M")
