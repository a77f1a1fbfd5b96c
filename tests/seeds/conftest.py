"""The curator's session for the seed admin (users: tests/conftest.py; shipped-group members
are staff, as the admin requires)."""

from __future__ import annotations

import pytest

from tests.conftest import logged_in


@pytest.fixture
def curator_client(curator):
    return logged_in(curator)
