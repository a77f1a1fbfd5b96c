"""Every download a reviewer can take from the browser, clicked in Chromium and read back."""

from __future__ import annotations

import csv
import io
import json

import pytest

from memory.models.reviews import HumanOutcome
from memory.storage.services import human_verdict_record
from tests.review.test_detail import build_attack

pytestmark = pytest.mark.django_db(transaction=True)


def _download(page, link) -> tuple[str, bytes]:
    with page.expect_download() as info:
        link.click()
    download = info.value
    with open(download.path(), "rb") as handle:
        return download.suggested_filename, handle.read()


def test_the_attack_list_and_an_attack_download_in_every_format(login_page, live_server, reviewer):
    attack, _ = build_attack()
    human_verdict_record(
        attack_result=attack, outcome=HumanOutcome.SUCCESS, reason="found it", reviewer=reviewer
    )
    page = login_page(reviewer)

    page.goto(f"{live_server.url}/attacks/?outcome=success")
    name, body = _download(page, page.locator(".list-downloads a", has_text="CSV"))
    assert name.endswith(".csv")
    [row] = list(csv.DictReader(io.StringIO(body.decode())))
    assert row["attack_result_id"] == str(attack.pk) and row["human_outcome"] == "success"
    name, body = _download(page, page.locator(".list-downloads a", has_text="JSON"))
    assert [r["attack_result_id"] for r in json.loads(body)] == [str(attack.pk)]
    name, body = _download(page, page.locator(".list-downloads a", has_text="PyRIT human labels"))
    lines = body.decode().splitlines()
    assert lines[0] == "# dataset_version=1.0" and '"Learn the secret","1"' in lines[2]

    page.goto(f"{live_server.url}/attacks/{attack.pk}/")
    downloads = page.locator(".downloads")
    name, body = _download(page, downloads.get_by_role("link", name="Markdown"))
    assert name == f"redline-attack-{attack.pk}.md" and b"Learn the secret" in body
    name, body = _download(page, downloads.get_by_role("link", name="HTML"))
    assert name == f"redline-attack-{attack.pk}.html" and b"default-src 'none'" in body
    name, body = _download(page, downloads.get_by_role("link", name="JSON"))
    document = json.loads(body)
    assert [a["attack_result_id"] for a in document["attack_results"]] == [str(attack.pk)]
