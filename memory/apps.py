from django.apps import AppConfig


class MemoryConfig(AppConfig):
    """PyRIT memory: conversations, message pieces, scores, attack results, identifiers."""

    name = "memory"
    verbose_name = "PyRIT memory"
