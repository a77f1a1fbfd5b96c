from django.apps import AppConfig


class MemoryConfig(AppConfig):
    """PyRIT memory: conversations, message pieces, scores, attack results, identifiers."""

    name = "memory"
    verbose_name = "PyRIT memory"

    def ready(self) -> None:
        # The findings capability registers its admin and notification receivers itself;
        # ``memory.admin`` (the memory models' admin) is its sibling and cannot import it.
        from memory.findings import admin as findings_admin  # noqa: F401
        from memory.findings import checks  # noqa: F401
        from memory.findings.webhooks import admin as webhooks_admin  # noqa: F401
        from memory.findings.webhooks import receivers

        receivers.connect()
