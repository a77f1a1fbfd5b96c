"""What the read endpoints return can be ingested again unchanged (issue 3, item 5)."""

import pytest

from tests.ingest.conftest import EXPORT_012, EXPORT_110, load, post_json

pytestmark = pytest.mark.django_db


def _all(client, url):
    """Every item of a list endpoint, following cursor or offset pagination."""
    items = []
    while url:
        body = client.get(url).json()
        items.extend(body["results"])
        url = body.get("next")
    return items


@pytest.mark.parametrize("export", [EXPORT_110, EXPORT_012], ids=["1.1.0", "0.12.1"])
def test_read_output_reingests_unchanged(ingest_client, export):
    assert post_json(ingest_client, load(export)).status_code == 200
    conversations = [
        ingest_client.get(f"/api/v1/conversations/{c['conversation_id']}/").json()
        for c in _all(ingest_client, "/api/v1/conversations/?limit=100")
    ]
    payload = {
        "conversations": conversations,
        "scores": _all(ingest_client, "/api/v1/scores/?limit=100"),
        "attack_results": _all(ingest_client, "/api/v1/attack-results/?limit=100"),
        "seeds": _all(ingest_client, "/api/v1/seeds/?limit=100"),
        "seed_groups": _all(ingest_client, "/api/v1/seed-groups/?limit=100"),
    }
    response = post_json(ingest_client, payload)
    assert response.status_code == 200, response.json()["errors"][:5]
    counts = response.json()["counts"]
    assert {kind: c["created"] + c["updated"] for kind, c in counts.items()} == dict.fromkeys(
        counts, 0
    )
    assert counts["message_pieces"]["unchanged"] > 0
    assert counts["attack_results"]["unchanged"] == len(payload["attack_results"])
