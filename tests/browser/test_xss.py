"""Stored content never runs in the browser.

A corpus of XSS payloads is stored through the ingestion service as piece values (original
and converted), score rationales and categories, labels, objectives, outcome reasons,
identifier params, related conversation ids, verdict reasons and human-score rationales.
Each page is opened in Chromium with every disclosure opened and every toggle flipped; the
test then asserts that no dialog opened, no payload flag was set, and the DOM holds no
injected element: no marked element, no event-handler attribute, no ``javascript:`` URL, no
script other than our static files, no svg/iframe/object/embed/form from the payloads.

The CSP would block inline script anyway; these checks look at the DOM so that they fail on
an escaping bug even when the CSP hides it.
"""

from __future__ import annotations

import uuid
from urllib.parse import quote

import pytest

from memory.models import AttackResult, MessagePiece
from memory.storage.services import human_score_add, human_verdict_record
from memory.transfer.ingest.service import ingest

pytestmark = pytest.mark.django_db(transaction=True)

# Every payload that could create an element marks it with data-xss; script payloads set
# window.__xss as well as calling alert.
PAYLOADS = [
    "<script>window.__xss=1;alert('script')</script>",
    '<img data-xss src=x onerror="window.__xss=1;alert(1)">',
    "<svg data-xss onload=alert(1)><script>window.__xss=1</script></svg>",
    '"><img data-xss src=x onerror=alert(1)>',
    "'><svg data-xss onload=alert(1)>",
    "--><img data-xss src=x onerror=alert(1)><!--",
    "</textarea></pre></code><img data-xss src=x onerror=alert(1)>",
    "[click me](javascript:alert(1))",
    "[click me](JAVASCRIPT:window.__xss=1)",
    "![pic](javascript:alert(1))",
    '![pic" data-xss onerror="alert(1)](https://example.invalid/p.png)',
    '[t](https://example.invalid "x\\" data-xss onmouseover=\\"alert(1)")',
    '<a data-xss href="javascript:alert(1)">link</a>',
    '<iframe data-xss src="javascript:alert(1)"></iframe>',
    '<details data-xss open ontoggle="alert(1)">x</details>',
    "{{ 7*7 }} {% debug %} ${alert(1)}",
]
MIXED = "\n\n".join(PAYLOADS)
# Without "/" so it fits in a URL path segment: it becomes a related conversation id.
ID_PAYLOAD = '"><img data-xss src=x onerror=alert(1)>'


def _identifier(class_name: str, **params) -> dict:
    return {"class_name": class_name, "class_module": "pyrit.xss", **params}


def store_corpus(reviewer) -> dict[str, str]:
    """Write the corpus through the ingestion service; returns the ids to open."""
    main = str(uuid.uuid4())
    related = ID_PAYLOAD
    target = _identifier("OpenAIChatTarget", model_name=PAYLOADS[1], endpoint=PAYLOADS[3])
    converter = _identifier("XssConverter", template=PAYLOADS[0])
    scorer = _identifier("XssScorer", system_prompt=PAYLOADS[2])
    pieces, scores = [], []

    def piece(conversation_id, sequence, role, original, converted, data_type="text"):
        piece_id = str(uuid.uuid4())
        pieces.append(
            {
                "id": piece_id,
                "role": role,
                "conversation_id": conversation_id,
                "sequence": sequence,
                "timestamp": "2026-11-21T12:00:00Z",
                "labels": {"operator": PAYLOADS[4], PAYLOADS[5]: "x"},
                "targeted_harm_categories": [PAYLOADS[6]],
                "prompt_metadata": {"note": PAYLOADS[1], "structured_refusal": PAYLOADS[0]},
                "converter_identifiers": [converter] if original != converted else [],
                "prompt_target_identifier": target,
                "original_value_data_type": data_type,
                "original_value": original,
                "converted_value_data_type": data_type,
                "converted_value": converted,
                "response_error": "blocked" if data_type == "error" else "none",
                "original_prompt_id": piece_id,
            }
        )
        return piece_id

    piece(main, 0, "system", MIXED, MIXED)
    for n, payload in enumerate(PAYLOADS):
        prompt = piece(main, 2 * n + 1, "user", payload, f"converted {payload} end")
        answer = piece(main, 2 * n + 2, "assistant", f"**answer** {payload}", MIXED)
        for piece_id, score_type, value in (
            (prompt, "true_false", "true"),
            (answer, "float_scale", "0.5"),
        ):
            scores.append(
                {
                    "id": str(uuid.uuid4()),
                    "score_value": value,
                    "score_type": score_type,
                    "score_category": [payload],
                    "score_rationale": f"Because {payload}",
                    "score_value_description": payload,
                    "score_metadata": {},
                    "scorer_class_identifier": scorer,
                    "message_piece_id": piece_id,
                    "timestamp": "2026-11-21T12:00:01Z",
                    "objective": payload,
                }
            )
    piece(main, 2 * len(PAYLOADS) + 1, "assistant", PAYLOADS[2], PAYLOADS[2], data_type="error")
    piece(related, 0, "assistant", MIXED, MIXED)
    attack_id = str(uuid.uuid4())
    payload = {
        "message_pieces": pieces,
        "scores": scores,
        "attack_results": [
            {
                "attack_result_id": attack_id,
                "conversation_id": main,
                "objective": MIXED,
                "attack_identifier": _identifier(
                    "XssAttack", adversarial_system_prompt=PAYLOADS[0], note=PAYLOADS[12]
                ),
                "executed_turns": 1,
                "execution_time_ms": 10,
                "outcome": "error",
                "outcome_reason": PAYLOADS[1],
                "error_type": PAYLOADS[3],
                "error_message": PAYLOADS[4],
                "error_traceback": MIXED,
                "related_conversations": [
                    {"conversation_id": related, "conversation_type": "adversarial",
                     "description": PAYLOADS[5]}
                ],
                "metadata": {PAYLOADS[1]: PAYLOADS[2]},
                "labels": {"operation": PAYLOADS[1], PAYLOADS[3]: PAYLOADS[0]},
                "targeted_harm_categories": [PAYLOADS[2], PAYLOADS[7]],
                "timestamp": "2026-11-21T12:30:00Z",
            }
        ],
    }  # fmt: skip
    report = ingest(payload=payload)
    assert not report.errors, report.errors[:3]
    attack = AttackResult.objects.get(pk=attack_id)
    human_verdict_record(attack_result=attack, outcome="success", reason=MIXED, reviewer=reviewer)
    answer = MessagePiece.objects.filter(
        message__conversation__conversation_id=main, message__role="assistant"
    ).first()
    human_score_add(
        piece=answer,
        score_type="true_false",
        value="true",
        rationale=MIXED,
        categories=[PAYLOADS[1]],
        reviewer=reviewer,
    )
    return {"attack": attack_id, "main": main, "related": related, "answer": str(answer.pk)}


CHECK = """() => {
  const found = [];
  const urlAttrs = ['href', 'src', 'action', 'formaction', 'xlink:href', 'data'];
  for (const el of document.querySelectorAll('*')) {
    if (el.hasAttribute('data-xss')) found.push('marked ' + el.tagName);
    for (const attr of el.attributes) {
      const name = attr.name.toLowerCase();
      if (name.startsWith('on')) found.push('handler ' + name + ' on ' + el.tagName);
      if (urlAttrs.includes(name) && /^\\s*(javascript|vbscript|data:text)/i.test(attr.value)) {
        found.push('url ' + attr.value);
      }
    }
  }
  for (const s of document.querySelectorAll('script')) {
    const src = s.getAttribute('src') || '';
    if (!src.startsWith('/static/')) found.push('script ' + s.outerHTML.slice(0, 80));
  }
  for (const tag of ['svg', 'iframe', 'object', 'embed', 'math', 'base', 'meta[http-equiv]']) {
    if (document.querySelector(tag)) found.push('element ' + tag);
  }
  if (window.__xss) found.push('window.__xss set');
  return found;
}"""

# Open every disclosure and flip every toggle, so lazily shown content is live too.
EXPAND = """() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  document.querySelectorAll('input.fmt-w, input.vs-o, input.vs-d, input.fold-t, input.unblur')
    .forEach(i => i.click());
}"""


def _assert_clean(page, dialogs, shot, name):
    page.evaluate(EXPAND)
    # Let what the expansion queued (toggle events, image loads and errors) run.
    page.wait_for_load_state("networkidle")
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))")
    problems = page.evaluate(CHECK)
    shot(page, name)
    assert dialogs == []
    assert problems == []


def test_xss_corpus_on_the_review_pages(login_page, live_server, reviewer, shot):
    ids = store_corpus(reviewer)
    page = login_page(reviewer)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    base = live_server.url
    related = quote(ids["related"], safe="")
    urls = {
        "xss-attack": f"{base}/attacks/{ids['attack']}/",
        "xss-attack-side": f"{base}/attacks/{ids['attack']}/?side={related}",
        "xss-conversation": f"{base}/conversations/{ids['main']}/",
        "xss-related-conversation": f"{base}/conversations/{related}/",
        "xss-human-score-page": f"{base}/pieces/{ids['answer']}/human-score/",
    }
    for name, url in urls.items():
        response = page.goto(url)
        assert response.status == 200, url
        _assert_clean(page, dialogs, shot, name)
    # The payloads are on the page, as text.
    page.goto(urls["xss-attack"])
    text = page.locator("main").inner_text()
    assert "<script>window.__xss=1;alert('script')</script>" in text
    assert "[click me](javascript:alert(1))" in text

    # The htmx paths: the human-score form and a recorded verdict swap stored text in.
    page.locator(f"#piece-{ids['answer']} a.add-score").click()
    form = page.locator("form.human-score-form")
    form.wait_for()
    form.locator("input[name=bool_value][value=true]").check()
    form.locator("textarea[name=rationale]").fill(PAYLOADS[1])
    form.locator("button[type=submit]").click()
    page.locator(f"#piece-{ids['answer']} .score-human").first.wait_for()
    verdict = page.locator("form.verdict-form")
    verdict.locator("label.choice-failure").click()
    verdict.locator("textarea[name=reason]").fill(PAYLOADS[3])
    verdict.locator("button[type=submit]").click()
    page.locator("#verdicts .notice").wait_for()
    _assert_clean(page, dialogs, shot, "xss-after-htmx")


def test_xss_corpus_on_the_lists(login_page, live_server, reviewer, shot):
    """The attack and conversation lists and the search show the same stored content."""
    ids = store_corpus(reviewer)
    page = login_page(reviewer)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    base = live_server.url
    for name, url in {
        "xss-attack-list": f"{base}/attacks/",
        "xss-attack-list-filtered": f"{base}/attacks/?q={quote(PAYLOADS[0])}",
        "xss-conversation-list": f"{base}/conversations/",
        "xss-search": f"{base}/search/?q={quote(PAYLOADS[1])}",
    }.items():
        response = page.goto(url)
        assert response.status == 200, url
        _assert_clean(page, dialogs, shot, name)
    assert ids["attack"]
