"""docs/api.md quotes the push example file whole; CI runs that file against real PyRIT."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from django.conf import settings

DOCS = Path(settings.BASE_DIR) / "docs"
EXAMPLE = DOCS / "examples" / "push_pyrit_memory.py"


def _quoted(name: str) -> str:
    text = (DOCS / "api.md").read_text()
    found = re.search(rf"<!-- example: {re.escape(name)} -->\n```python\n(.*?)```\n", text, re.S)
    assert found, f"docs/api.md does not quote {name}"
    return found.group(1)


def test_the_docs_quote_the_push_example_file_unchanged():
    assert _quoted("docs/examples/push_pyrit_memory.py") == EXAMPLE.read_text()


def test_the_push_example_asks_pyrit_1_1_for_every_score():
    """PyRIT 1.1.0's get_scores() without a filter returns no score at all (issue 19)."""
    tree = ast.parse(EXAMPLE.read_text())
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get_scores"
    ]
    assert calls
    assert all(call.args or call.keywords for call in calls)
    sent = {
        key.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict)
        for key in node.keys
        if isinstance(key, ast.Constant)
    }
    assert {"conversations", "scores", "scorable_contents", "attack_results"} <= sent
    assert {"scenario_results", "seed_groups", "seeds"} <= sent
