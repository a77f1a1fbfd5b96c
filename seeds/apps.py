from django.apps import AppConfig


class SeedsConfig(AppConfig):
    """Seed prompts, objectives, groups and datasets."""

    name = "seeds"
    verbose_name = "Seeds"
