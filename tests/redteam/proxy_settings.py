"""Settings of the gunicorn server that ``test_proxy_lockout`` starts: the project's own, with
the tests' fast password hasher (the test writes the user's password with it)."""

from redteam.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
