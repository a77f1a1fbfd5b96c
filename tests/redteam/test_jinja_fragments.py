"""``{% jinja_fragment %}``: Jinja2 fragments inside Django templates, escaped and strict."""

from __future__ import annotations

import jinja2
import pytest
from django.template import Context, Template

from redteam.jinja import fixed


def _render(source: str, **context: object) -> str:
    return Template("{% load fragments %}" + source).render(Context(context))


def test_a_fragment_escapes_what_it_is_given_and_the_page_keeps_it_as_is():
    from memory.dashboards.tables import Cell, Table

    table = Table("t", "<b>title</b>", ["a&b"], [[Cell("x", "<script>x</script>", "/a?b=1&c=2")]])
    html = _render('{% jinja_fragment "dashboards/table.html" table=table %}', table=table)
    assert "<script>" not in html and "<b>" not in html
    assert "&lt;script&gt;x&lt;/script&gt;" in html
    assert 'href="/a?b=1&amp;c=2"' in html
    assert '<th scope="col">a&amp;b</th>' in html
    # The fragment's own markup reaches the page unescaped (not as &lt;table…).
    assert '<table class="data compact">' in html


def test_a_name_the_fragment_uses_but_is_not_given_is_an_error():
    with pytest.raises(jinja2.UndefinedError):
        _render('{% jinja_fragment "dashboards/table.html" table=table %}', table=object())


def test_fixed_shows_a_coordinate_with_the_asked_decimals():
    assert fixed(190) == "190.0"
    assert fixed(44.94) == "44.9"
    assert fixed(-0.1234, 3) == "-0.123"
