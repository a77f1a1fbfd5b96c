"""A report title over 255 characters is refused with a 400 naming ``title``, never cut."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.findings.services import report_create
from memory.models import Report
from redteam.core.errors import InvalidMemory
from tests.conftest import logged_in

pytestmark = pytest.mark.django_db

TOO_LONG = "T" * 256
LONGEST = "T" * 255


def test_the_api_refuses_a_long_title(reviewer):
    response = logged_in(reviewer).post(
        "/api/v1/reports/", {"title": TOO_LONG}, content_type="application/json"
    )

    assert response.status_code == 400
    assert "255" in response.json()["title"][0]
    assert Report.objects.count() == 0


def test_the_form_refuses_a_long_title_naming_the_field(reviewer):
    response = logged_in(reviewer).post(reverse("report-create"), {"title": TOO_LONG})

    assert response.status_code == 400
    page = response.content.decode()
    assert "Title: Ensure this value has at most 255 characters (it has 256)." in page
    # The form comes back as it was sent.
    assert f'value="{TOO_LONG}"' in page
    assert Report.objects.count() == 0


def test_the_service_refuses_a_long_title(reviewer):
    with pytest.raises(InvalidMemory) as refused:
        report_create(actor=reviewer, title=TOO_LONG)

    assert [(p.path, p.message) for p in refused.value.problems] == [
        ("title", "must be at most 255 characters")
    ]
    assert Report.objects.count() == 0


def test_a_title_of_255_characters_is_kept_whole(reviewer):
    response = logged_in(reviewer).post(
        "/api/v1/reports/", {"title": f"  {LONGEST}  "}, content_type="application/json"
    )

    assert response.status_code == 201
    report = Report.objects.get()
    assert report.title == LONGEST
    assert report.snapshot["title"] == LONGEST
