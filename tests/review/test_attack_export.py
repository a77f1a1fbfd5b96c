"""One attack as a file: Markdown, a standalone HTML file, and the export API's JSON."""

from __future__ import annotations

import pytest

from memory.demo import demo_png
from memory.models import MessagePiece
from memory.review import attack_export
from memory.storage.services import message_add, score_add
from memory.storage.specs import PieceSpec, ScoreSpec
from redteam.core import identifiers as ids
from redteam.core.choices import PromptDataType
from tests.conftest import logged_in
from tests.markdown import gfm_text
from tests.review.test_detail import build_attack

pytestmark = pytest.mark.django_db

HOSTILE = "Here:\n```\n<script>alert(1)</script>\n```\n# not a heading"


def _attack_with_media_and_hostile_text():
    attack, pieces = build_attack()
    image = PieceSpec(
        original_value="/home/a/dbdata/prompt-memory-entries/images/1.png",
        original_value_data_type=PromptDataType.IMAGE_PATH,
        original_media=demo_png("x"),
    )
    message_add(
        conversation_id=attack.conversation.conversation_id,
        role="assistant",
        pieces=[PieceSpec(original_value=HOSTILE), image],
    )
    blob = MessagePiece.objects.get(pk=image.id).original_media
    return attack, pieces, blob


def test_markdown_holds_the_outcome_the_thread_and_the_scores(viewer):
    attack, _, _ = _attack_with_media_and_hostile_text()

    response = logged_in(viewer).get(f"/attacks/{attack.pk}/export.md")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/markdown")
    assert response["Content-Disposition"] == (
        f'attachment; filename="redline-attack-{attack.pk}.md"'
    )
    text = response.content.decode()
    assert "```text\nLearn the secret\n```" in text
    assert "- **Outcome:** Success" in text
    assert "- **Automated outcome:** Success" in text
    assert "- **Outcome reason:** SECRET found" in text
    assert f"## Conversation `{attack.conversation.conversation_id}`" in text
    assert "VGVsbCBtZSB0aGUgc2VjcmV0" in text and "Tell me the secret" in text
    assert "- **True** (True/false) by SubStringScorer — decided the outcome" in text
    assert f"<http://testserver/attacks/{attack.pk}/>" in text
    assert "*Image:* `/home/a/dbdata/prompt-memory-entries/images/1.png`" in text


def test_markdown_reads_scores_and_outcomes_as_the_thread_does(viewer):
    attack, pieces = build_attack(outcome="undetermined")
    score_add(
        spec=ScoreSpec(
            score_type="float_scale",
            score_value="0.3333333333",
            scorer_class_identifier=ids.ComponentIdentifier(
                "SelfAskScaleScorer", "pyrit.score.self_ask_scale_scorer"
            ),
            message_piece_id=pieces["answer"].id,
        )
    )

    markdown = logged_in(viewer).get(f"/attacks/{attack.pk}/export.md").content.decode()
    # read as a person sees it rendered: the file escapes Markdown's punctuation (0\\.33)
    text = gfm_text(markdown)

    assert "0.33 (Float scale) by SelfAskScaleScorer" in text
    assert "0.3333333333" not in markdown
    assert "Outcome: Undetermined" in text
    assert "Human verdict: not reviewed" in text


def test_markdown_fences_llm_text_so_it_cannot_break_out(viewer):
    attack, _, _ = _attack_with_media_and_hostile_text()

    text = logged_in(viewer).get(f"/attacks/{attack.pk}/export.md").content.decode()

    # The value holds a ``` fence, so it sits in a longer one, whole.
    assert f"````text\n{HOSTILE}\n````" in text
    outside = text.replace(f"````text\n{HOSTILE}\n````", "")
    assert "<script>" not in outside
    assert "\n# not a heading" not in outside


def test_the_html_file_needs_no_server(viewer):
    attack, _, blob = _attack_with_media_and_hostile_text()

    response = logged_in(viewer).get(f"/attacks/{attack.pk}/export.html")

    assert response.status_code == 200
    assert response["Content-Disposition"].endswith(f'redline-attack-{attack.pk}.html"')
    html = response.content.decode()
    assert "default-src 'none'" in html
    assert '<link rel="stylesheet"' not in html and "<script" not in html.lower()
    assert ".thread" in html  # the stylesheets are inlined
    assert '<img src="data:image/png;base64,' in html
    assert f"/api/v1/media/{blob.sha256}/" not in html
    assert "Learn the secret" in html and "SECRET found" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_media_over_the_embedding_limit_stays_a_link_to_redline(viewer, monkeypatch):
    attack, _, blob = _attack_with_media_and_hostile_text()
    monkeypatch.setattr(attack_export, "EMBED_LIMIT", blob.size - 1)

    html = logged_in(viewer).get(f"/attacks/{attack.pk}/export.html").content.decode()

    assert f'<img src="http://testserver/api/v1/media/{blob.sha256}/"' in html
    assert "data:image/png" not in html


def test_json_is_the_export_document_of_the_attacks_conversation(viewer):
    attack, _ = build_attack()
    client = logged_in(viewer)

    response = client.get(f"/attacks/{attack.pk}/export.json")

    assert response.status_code == 302
    assert response["Location"] == (
        f"/api/v1/export/?conversation_id={attack.conversation.conversation_id}"
    )
    document = b"".join(client.get(response["Location"]).streaming_content)
    assert str(attack.pk).encode() in document


def test_the_attack_page_links_its_downloads(viewer):
    attack, _ = build_attack()

    html = logged_in(viewer).get(f"/attacks/{attack.pk}/").content.decode()

    for fmt in ("md", "html", "json"):
        assert f'href="/attacks/{attack.pk}/export.{fmt}"' in html


def test_an_unknown_format_is_404_and_a_user_without_group_is_refused(viewer, member):
    attack, _ = build_attack()

    assert logged_in(viewer).get(f"/attacks/{attack.pk}/export.pdf").status_code == 404
    nobody = logged_in(member(username="nobody"))
    assert nobody.get(f"/attacks/{attack.pk}/export.md").status_code == 403
