"""The login backend: Django's, reading the user's preferences in the same query.

Every page's ``<html>`` carries the user's theme (``redteam.context.theme``); loading the
preference row with the user (a LEFT JOIN on the session's user query) keeps that from costing
each page a query of its own.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend


class PreferenceModelBackend(ModelBackend):
    """:class:`ModelBackend` whose ``get_user`` also loads ``user.preference``."""

    def get_user(self, user_id):
        user_model = get_user_model()
        try:
            user = user_model._default_manager.select_related("preference").get(pk=user_id)
        except user_model.DoesNotExist:
            return None
        return user if self.user_can_authenticate(user) else None
