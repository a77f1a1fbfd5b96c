"""A finding's ``harm_categories`` and ``framework_tags`` are capped
(``HARM_CATEGORIES_MAX_ITEMS``): a longer list is a 400 naming the field, API and form."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.models import Finding
from redteam.core.lengths import HARM_CATEGORIES_MAX_ITEMS
from tests.conftest import logged_in

pytestmark = pytest.mark.django_db

FLOOD = [f"harm-{n}" for n in range(100_000)]
MOST = [f"harm-{n}" for n in range(HARM_CATEGORIES_MAX_ITEMS)]
MESSAGE = f"has 100,000 items; at most {HARM_CATEGORIES_MAX_ITEMS:,} are accepted"


@pytest.mark.parametrize("field", ["harm_categories", "framework_tags"])
def test_a_finding_with_100000_items_is_a_400_naming_the_field(build, reviewer, field):
    built = build()
    response = logged_in(reviewer).post(
        "/api/v1/findings/",
        {
            "title": "Flood",
            field: FLOOD,
            "evidence": [{"kind": "attack", "ref": str(built.attack.pk)}],
        },
        content_type="application/json",
    )

    assert response.status_code == 400
    assert str(HARM_CATEGORIES_MAX_ITEMS) in response.json()[field][0]
    assert Finding.objects.count() == 0


def test_a_finding_update_with_too_many_harm_categories_is_a_400(build, reviewer):
    built = build()
    client = logged_in(reviewer)
    created = client.post(
        "/api/v1/findings/",
        {"title": "Ok", "evidence": [{"kind": "attack", "ref": str(built.attack.pk)}]},
        content_type="application/json",
    )
    assert created.status_code == 201

    response = client.patch(
        f"/api/v1/findings/{created.json()['id']}/",
        {"harm_categories": [*MOST, "one-too-many"]},
        content_type="application/json",
    )

    assert response.status_code == 400
    [problem] = response.json()["problems"]
    assert problem["path"] == "harm_categories"
    assert "101 items" in problem["message"]
    assert Finding.objects.get().harm_categories == []


def test_the_finding_form_refuses_too_many_harm_categories(build, reviewer):
    built = build()
    response = logged_in(reviewer).post(
        reverse("finding-create") + f"?evidence=attack:{built.attack.pk}",
        {"title": "Flood", "severity": "high", "harm_categories": "\n".join(FLOOD)},
    )

    assert Finding.objects.count() == 0
    assert MESSAGE in response.content.decode()
