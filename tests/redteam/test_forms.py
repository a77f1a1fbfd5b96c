"""redteam.core.forms: a browser round trip never changes a stored value the user did not change."""

from __future__ import annotations

import datetime as dt

import pytest
from django import forms
from django.contrib.auth.models import User

from redteam.core.forms import (
    StoredValuesForm,
    StoredValuesModelForm,
    normalize_newlines,
    unchanged_by_browser,
)
from seeds.models import Seed
from tests.factories import make_seed

WHEN = dt.datetime(2025, 3, 4, 5, 6, 7, 123456, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("text", "like", "expected"),
    [
        ("a\r\nb\r\n", None, "a\nb\n"),
        ("a\rb", None, "a\nb"),
        ("a\r\nb", "x\ny", "a\nb"),
        ("a\r\nb\nc", "x\r\ny", "a\r\nb\r\nc"),
        # Mixed stored endings: LF, the convention.
        ("a\r\nb", "x\r\ny\nz", "a\nb"),
    ],
)
def test_normalize_newlines(text, like, expected):
    assert normalize_newlines(text, like=like) == expected


@pytest.mark.parametrize(
    ("field", "submitted", "stored", "same"),
    [
        (forms.CharField(), "a\r\nb", "a\nb", True),
        (forms.CharField(), "a\r\nb", "a\r\nb", True),
        (forms.CharField(), "a b", "a\nb", False),
        (forms.CharField(), "a", "a\n", True),  # Django strips the box
        (forms.CharField(strip=False), "a", "a\n", False),
        (forms.CharField(required=False), "", None, True),
        (forms.CharField(required=False), None, "", True),
        (forms.JSONField(), {"a": 1.0}, {"a": 1.0}, True),
        (forms.JSONField(), [1], [True], False),
        (forms.JSONField(), {"b": 1, "a": 2}, {"a": 2, "b": 1}, False),
        (forms.DateTimeField(), WHEN.replace(microsecond=0), WHEN, True),
        (forms.DateTimeField(), WHEN.replace(microsecond=0, second=8), WHEN, False),
        (forms.DateTimeField(), WHEN, WHEN.replace(microsecond=5), False),
        (forms.TimeField(), dt.time(1, 2, 3), dt.time(1, 2, 3, 99), True),
        (forms.IntegerField(), 3, 3, True),
    ],
)
def test_unchanged_by_browser(field, submitted, stored, same):
    assert unchanged_by_browser(field, submitted=submitted, stored=stored) is same


class SeedForm(StoredValuesModelForm):
    class Meta:
        model = Seed
        fields = ["value", "description", "date_added", "metadata", "source"]


def _post(instance: Seed, **changes) -> SeedForm:
    """What a browser posts for ``instance``: CRLF boxes, whole seconds, then ``changes``."""
    data = {
        "value": instance.value.replace("\n", "\r\n"),
        "description": instance.description or "",
        "date_added": instance.date_added.replace(microsecond=0).isoformat(),
        "metadata": '{"k": "v"}' if instance.metadata else "{}",
        "source": instance.source or "",
        **changes,
    }
    return SeedForm(data, instance=instance)


@pytest.mark.django_db
def test_an_untouched_model_form_saves_exactly_what_was_stored():
    seed = make_seed("one\ntwo\n", description=None, date_added=WHEN, metadata={"k": "v"})
    form = _post(seed)
    assert form.is_valid(), form.errors
    assert form.changed_data == []
    form.save()
    seed.refresh_from_db()
    assert (seed.value, seed.description, seed.date_added, seed.source) == (
        "one\ntwo\n",
        None,
        WHEN,
        None,
    )


@pytest.mark.django_db
def test_a_changed_text_keeps_the_stored_line_endings_and_emptied_boxes_become_null():
    seed = make_seed("one\r\ntwo", description="old", date_added=WHEN, source="src")
    form = _post(seed, value="one\r\ntwo\r\nthree", description="", source="src")
    assert form.is_valid(), form.errors
    assert sorted(form.changed_data) == ["description", "value"]
    form.save()
    seed.refresh_from_db()
    assert seed.value == "one\r\ntwo\r\nthree"
    assert seed.description is None
    assert seed.date_added == WHEN


@pytest.mark.django_db
def test_a_new_objects_text_gets_lf():
    form = SeedForm(
        {
            "value": "a\r\nb",
            "description": "c\r\nd",
            "date_added": WHEN.isoformat(),
            "metadata": "{}",
            "source": "",
        }
    )
    assert form.is_valid(), form.errors
    assert (form.cleaned_data["value"], form.cleaned_data["description"]) == ("a\nb", "c\nd")
    assert form.cleaned_data["source"] is None


def test_a_plain_forms_text_gets_lf():
    class Reason(StoredValuesForm):
        reason = forms.CharField(widget=forms.Textarea)

    form = Reason({"reason": "first\r\nsecond"})
    assert form.is_valid()
    assert form.cleaned_data["reason"] == "first\nsecond"


@pytest.mark.django_db
def test_saving_a_user_in_the_admin_keeps_the_microseconds_of_its_dates(admin_client):
    user = User.objects.create_user("tess", date_joined=WHEN, last_login=WHEN)
    page = admin_client.get(f"/admin/auth/user/{user.pk}/change/")
    form = page.context["adminform"].form
    data = {}
    for field in form:
        value = field.value()
        if isinstance(value, list):  # the split date-time widget: one box each
            for index, part in enumerate(value):
                data[f"{field.html_name}_{index}"] = part
        elif value not in (None, False):
            data[field.html_name] = value
    data["date_joined_0"], data["date_joined_1"] = "2025-03-04", "05:06:07"
    data["last_login_0"], data["last_login_1"] = "2025-03-04", "05:06:07"
    data["first_name"] = "Tess"
    response = admin_client.post(f"/admin/auth/user/{user.pk}/change/", data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    user.refresh_from_db()
    assert (user.first_name, user.date_joined, user.last_login) == ("Tess", WHEN, WHEN)
