"""The client's pieces that need no server: retries and their waits, batch splitting."""

from __future__ import annotations

import pytest
import requests

from redline_push.api import Api, Fatal
from redline_push.push import _shift, count_items, split


class FakeResponse:
    def __init__(self, status: int, headers: dict | None = None, body: dict | None = None):
        self.status_code = status
        self.headers = headers or {}
        self._body = body or {}
        self.text = ""

    def json(self):
        return self._body


class Script:
    """A session whose answers are scripted; records the waits between attempts."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.calls = 0

    def request(self, method, url, **kwargs):
        self.calls += 1
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def api_with(answers, monkeypatch, retries=5):
    api = Api("http://redline.test", "rl_x", retries=retries)
    api.session = Script(answers)
    waits = []
    monkeypatch.setattr(api.stop, "wait", lambda seconds: waits.append(seconds) or False)
    return api, waits


def test_5xx_429_and_connection_errors_are_retried_honouring_retry_after(monkeypatch):
    ok = FakeResponse(200, body={"written": True, "counts": {}, "errors": []})
    api, waits = api_with(
        [
            FakeResponse(503),
            FakeResponse(429, {"Retry-After": "7"}),
            requests.ConnectionError("refused"),
            ok,
        ],
        monkeypatch,
    )
    assert api.ingest(b"{}")["written"] is True
    assert api.session.calls == 4
    assert waits[1] == 7.0  # Retry-After, not the backoff
    assert waits[0] < waits[2] <= 30


def test_gives_up_after_the_retries_with_one_line(monkeypatch):
    api, _ = api_with([FakeResponse(502)] * 4, monkeypatch, retries=3)
    with pytest.raises(Fatal, match=r"failed 4 times \(HTTP 502\); giving up"):
        api.ingest(b"{}")


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_token_is_not_retried(monkeypatch, status):
    api, waits = api_with([FakeResponse(status, body={"detail": "no"})], monkeypatch)
    with pytest.raises(Fatal, match=f"HTTP {status}"):
        api.ingest(b"{}")
    assert waits == []


def test_a_server_without_the_features_is_too_old(monkeypatch):
    old = FakeResponse(200, body={"max_body_bytes": 1, "max_items": 1, "max_media_bytes": 1})
    api, _ = api_with([old], monkeypatch)
    with pytest.raises(Fatal, match="too old"):
        api.limits()
    api, _ = api_with([FakeResponse(404)], monkeypatch)
    with pytest.raises(Fatal, match="too old"):
        api.limits()


def test_split_halves_a_payload_and_error_paths_map_back():
    payload = {"message_pieces": list(range(10))}
    (first, a), (second, b) = split(payload)
    assert first["message_pieces"] == list(range(5)) and a == {}
    assert second["message_pieces"] == list(range(5, 10)) and b == {"message_pieces": 5}
    assert _shift("message_pieces[2].role", b) == "message_pieces[7].role"
    two = {"conversations": [1], "message_pieces": [2, 3]}
    assert [list(part) for part, _ in split(two)] == [["conversations"], ["message_pieces"]]
    assert count_items({"seed_groups": [{"seeds": [1, 2]}], "seeds": [3]}) == 4
