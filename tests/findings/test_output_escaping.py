"""Red-team memory is hostile: every output format escapes it for its destination (Markdown
files pasted into GitHub/Jira, the report PDF, the static HTML bundle)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest
from django.urls import reverse

from memory.findings.pdf_fetcher import RefusedURL, report_url_fetcher, static_resource
from memory.findings.reports import render_pdf
from memory.findings.services import EvidenceSpec, finding_create, operation_save, report_create
from tests.conftest import logged_in
from tests.markdown import gfm_html

#: Text a target might answer with (and a red-teamer might paste into a finding).
HOSTILE = (
    "</script></title><img src=x onerror=alert(1)> [click](javascript:alert(1)) "
    '![px](http://127.0.0.1:9/x.png) <a href="javascript:alert(2)">a</a> '
    '<img src="file:///etc/passwd"> <script>alert(3)</script> ``` ` '
    "<iframe src=http://127.0.0.1:9/></iframe> http://127.0.0.1:9/track www.evil.example"
)
MULTILINE = "```\n" + HOSTILE + "\n````\n# heading\n<details open ontoggle=alert(4)>"


@pytest.fixture
def hostile(build, reviewer):
    """An attack, operation, finding and report whose every free text is :data:`HOSTILE`."""
    built = build(text=MULTILINE, objective=HOSTILE, operation=HOSTILE[:120])
    operation = operation_save(
        actor=reviewer,
        name="Op " + HOSTILE[:80],
        description=MULTILINE,
        pyrit_operation=HOSTILE[:120],
    )
    finding = finding_create(
        actor=reviewer,
        title="F " + HOSTILE[:200],
        description=MULTILINE,
        reproduction_steps=MULTILINE,
        remediation=MULTILINE,
        operation=operation,
        harm_categories=[HOSTILE[:60]],
        evidence=[EvidenceSpec("attack", str(built.attack.pk))],
    )
    report = report_create(actor=reviewer, title="R " + HOSTILE[:200], operation=operation)
    return built, finding, report


def _assert_inert(markdown: str) -> None:
    rendered = gfm_html(markdown).lower()
    for element in ("<script", "<img", "<iframe", "<details", "<title", "</title"):
        assert element not in rendered, element
    assert 'href="javascript:' not in rendered
    assert "<a " not in rendered.replace('<a href="http://testserver/', "")
    # The text is still there, as text.
    assert "onerror=alert(1)" in rendered


def test_report_markdown_renders_no_html_link_or_image_from_memory(hostile, reviewer):
    _, _, report = hostile
    body = logged_in(reviewer).get(reverse("report-download", args=[report.pk, "md"]))
    _assert_inert(body.content.decode())


def test_issue_markdown_renders_no_html_link_or_image_from_the_finding(hostile, reviewer):
    _, finding, _ = hostile
    body = logged_in(reviewer).get(reverse("finding-issue", args=[finding.pk]))
    text = body.content.decode()
    _assert_inert(text)
    # The evidence links to Redline's own attack page, nowhere else.
    assert f'<a href="http://testserver/attacks/{hostile[0].attack.pk}/' in gfm_html(text)


def test_attack_markdown_renders_no_html_link_or_image_from_the_thread(hostile, reviewer):
    built, _, _ = hostile
    body = logged_in(reviewer).get(f"/attacks/{built.attack.pk}/export.md")
    _assert_inert(body.content.decode())


# --- PDF ----------------------------------------------------------------------------------------


@pytest.fixture
def loopback() -> Iterator[tuple[int, list[str]]]:
    """A tiny HTTP server on 127.0.0.1: its port and the paths it was asked for."""
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], hits
    server.shutdown()
    server.server_close()


def test_the_pdf_fetches_nothing_a_report_names(build, reviewer, loopback, monkeypatch):
    port, hits = loopback
    remote = f'<img src="http://127.0.0.1:{port}/img"> <link rel=stylesheet href="http://127.0.0.1:{port}/css">'
    build(text=remote + ' <img src="file:///etc/passwd">', objective=remote)
    finding_create(actor=reviewer, title=remote[:200], description=remote)
    report = report_create(actor=reviewer, title="pdf")

    # Were any of it markup (a template bug), WeasyPrint must still not fetch it: lay out the
    # report with the memory's text spliced in raw.
    import memory.findings.reports as reports

    real = reports.render_html
    monkeypatch.setattr(reports, "render_html", lambda doc, pdf=False: real(doc, pdf=pdf) + remote)
    pdf = render_pdf(report.snapshot)

    assert pdf.startswith(b"%PDF")
    assert hits == []


def test_the_pdf_fetcher_refuses_all_but_data_and_static_files(loopback, settings, tmp_path):
    port, hits = loopback
    settings.STATIC_ROOT = tmp_path / "static"
    (tmp_path / "static" / "redteam").mkdir(parents=True)
    (tmp_path / "static" / "redteam" / "a.css").write_text("p{}")
    (tmp_path / "secret.txt").write_text("no")
    for url in (
        f"http://127.0.0.1:{port}/",
        f"https://127.0.0.1:{port}/",
        "file:///etc/passwd",
        "file:///static/../etc/passwd",
        "http://127.0.0.1:9/static/%2e%2e/secret.txt",
        "/static/../secret.txt",
        "/static/redteam/..%2f..%2fsecret.txt",
        "ftp://127.0.0.1/x",
    ):
        with pytest.raises(RefusedURL):
            static_resource(url)
        with pytest.raises(ValueError):
            report_url_fetcher().fetch(url)
    assert hits == []
    assert report_url_fetcher().fetch("data:text/plain;base64,aGk=").read() == b"hi"
    assert static_resource("/static/redteam/a.css") == (b"p{}", "text/css")
    assert report_url_fetcher().fetch("file:///static/redteam/a.css").read() == b"p{}"
