"""The Jinja2 environment of the page fragments rendered by Jinja2 rather than Django's
template language (``templates/jinja2/``, included with ``{% jinja_fragment %}``).

Those are the fragments that repeat a few elements thousands of times per page — the
dashboard's tables and SVG charts, about 4,000 cells with a drill-down link each at 100,000
attacks — where Django's template language spent more CPU than building the figures
(docs/performance.md → Dashboards). Autoescaping is on, as in every Django template.
"""

from __future__ import annotations

from typing import Any

import jinja2


def fixed(value: float, digits: int = 1) -> str:
    """``value`` with ``digits`` decimals, as ``floatformat:digits`` shows a coordinate."""
    return f"{value:.{digits}f}"


def environment(**options: Any) -> jinja2.Environment:
    """The environment Django's Jinja2 backend renders with (``TEMPLATES`` in settings).

    A name the template uses that its context lacks is an error, not an empty string: the
    fragments' tests then catch a misspelt attribute."""
    env = jinja2.Environment(**{**options, "undefined": jinja2.StrictUndefined})
    env.filters["fixed"] = fixed
    return env
