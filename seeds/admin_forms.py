"""Forms of the seed admin. Validation calls the same service checks the saves use, so a rule
broken in the admin is a form error next to its field, never a database error.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django import forms
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db import models
from django.forms.models import BaseInlineFormSet
from django.utils.html import format_html

from redteam.core.admin import admin_change_url
from redteam.core.forms import StoredValuesForm, StoredValuesModelForm
from seeds import yaml_io
from seeds.choices import SeedType
from seeds.models import (
    Seed,
    SeedDataset,
    SeedObjective,
    SeedPrompt,
    SeedSimulatedConversation,
)
from seeds.rules import group_problems
from seeds.services import seed_check, spec_from_seed
from seeds.specs import SeedSpec

#: The seed type each proxy model stands for.
PROXY_SEED_TYPES: dict[type[Seed], str] = {
    SeedPrompt: SeedType.PROMPT,
    SeedObjective: SeedType.OBJECTIVE,
    SeedSimulatedConversation: SeedType.SIMULATED_CONVERSATION,
}

#: Largest media file the admin accepts, bytes.
MAX_MEDIA_BYTES = 50 * 1024 * 1024


class JSONDefaultsForm(StoredValuesModelForm):
    """A model form where an emptied JSON box means the field's default, not SQL NULL.

    Django turns an empty JSON input into ``None``, which a ``NOT NULL`` JSON column with a
    default (``[]``, ``{}``) rejects with an integrity error instead of a form error.
    """

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        for name in self.fields:
            try:
                model_field = self._meta.model._meta.get_field(name)
            except FieldDoesNotExist:
                continue
            if (
                isinstance(model_field, models.JSONField)
                and not model_field.null
                and name in cleaned
                and cleaned[name] is None
            ):
                cleaned[name] = model_field.get_default()
        return cleaned


def duplicate_error(existing: Seed) -> ValidationError:
    """ "Already in the dataset", with a link to the stored seed."""
    return ValidationError(
        format_html(
            'This seed already exists in dataset “{}”: <a href="{}">open the existing seed</a>.',
            existing.dataset_name or "",
            admin_change_url(Seed, existing.pk),
        ),
        code="duplicate",
    )


class SeedAdminForm(JSONDefaultsForm):
    """The seed form: PyRIT's fields, a media upload, and the services' checks.

    The seed type stays in the form (disabled on a proxy admin) rather than being excluded:
    Django skips every constraint that mentions an excluded field. ``current_user`` is set by
    the admin on the form class it builds per request.
    """

    media_file = forms.FileField(
        required=False,
        label="Upload media",
        help_text="An image, audio or video file for a *_path seed (stored content-addressed).",
    )
    current_user: Any = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fixed = PROXY_SEED_TYPES.get(self._meta.model)
        if fixed is not None:
            kwargs["initial"] = {**(kwargs.get("initial") or {}), "seed_type": fixed}
        super().__init__(*args, **kwargs)
        if fixed is not None and "seed_type" in self.fields:
            self.fields["seed_type"].disabled = True
            self.instance.seed_type = fixed
        if "value" in self.fields:
            # May stay empty when a file is uploaded: the file name becomes the value.
            self.fields["value"].required = False
        if "added_by" in self.fields:
            self.fields["added_by"].help_text = "Left empty: you."

    def clean_media_file(self) -> Any:
        upload = self.cleaned_data.get("media_file")
        if upload is not None and upload.size > MAX_MEDIA_BYTES:
            raise ValidationError(f"The file is larger than {MAX_MEDIA_BYTES // 2**20} MiB.")
        return upload

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        upload = cleaned.get("media_file")
        if not cleaned.get("value"):
            if upload is None:
                self.add_error("value", "This field is required.")
            else:
                cleaned["value"] = upload.name
        if "added_by" in self.fields and not cleaned.get("added_by") and self.current_user:
            cleaned["added_by"] = self.current_user.get_username()
        return cleaned

    def _post_clean(self) -> None:
        super()._post_clean()
        if self.errors:
            return
        self.spec = self.build_spec()
        problems, duplicate = seed_check(
            spec=self.spec,
            dataset=self.instance.dataset,
            group=self.instance.group,
            refuse_duplicates=True,
        )
        if duplicate is not None:
            self.add_error("value", duplicate_error(duplicate))
            return
        for problem in problems:
            field = problem.path.split(".", 1)[0]
            self.add_error(field if field in self.fields else None, problem.message)

    def build_spec(self) -> SeedSpec:
        """The spec the services store: the edited instance plus the uploaded bytes."""
        seed = self.instance
        if "dataset" in self.changed_data and seed.dataset is not None:
            # Keep PyRIT's stored dataset name in step with the curated dataset.
            seed.dataset_name = seed.dataset.name
        spec = spec_from_seed(seed)
        upload = self.cleaned_data.get("media_file")
        if upload is not None:
            spec = replace(spec, media=upload.read())
        return spec


class SeedInlineFormSet(BaseInlineFormSet):
    """A group's seeds, validated together by PyRIT's group rules (contract §8.5).

    Two objectives in one group, mixed roles in a sequence… are formset errors here, before
    anything reaches the database (whose partial unique constraints would otherwise fail).
    """

    def clean(self) -> None:
        super().clean()
        if any(form.errors for form in self.forms):
            return
        specs = self.member_specs()
        if not specs:
            return
        problems = group_problems(specs)
        if problems:
            raise ValidationError([p.message for p in problems])

    def member_specs(self) -> list[SeedSpec]:
        """Specs of the seeds that stay in the group, in the order shown."""
        specs = []
        for form in self.forms:
            if not form.has_changed() and form.instance.pk is None:
                continue
            if self.can_delete and self._should_delete_form(form):
                continue
            spec = spec_from_seed(form.instance)
            spec.prompt_group_id = None
            specs.append(spec)
        return specs

    def deleted_ids(self) -> list[Any]:
        return [
            form.instance.pk
            for form in self.forms
            if form.instance.pk is not None and self.can_delete and self._should_delete_form(form)
        ]


# --- bulk actions and pages ---------------------------------------------------------------------


class DatasetChoiceForm(forms.Form):
    """Pick the dataset a bulk move or copy goes to."""

    dataset = forms.ModelChoiceField(queryset=SeedDataset.objects.order_by("name"))


class HarmCategoriesForm(StoredValuesForm):
    """Harm categories to add to or remove from the selected seeds."""

    categories = forms.CharField(
        help_text="Comma-separated, e.g. violence, illegal", max_length=1000
    )

    def clean_categories(self) -> list[str]:
        items = [c.strip() for c in self.cleaned_data["categories"].split(",") if c.strip()]
        if not items:
            raise ValidationError("Name at least one harm category.")
        return items


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files from one ``<input type=file multiple>``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[Any]:
        single = super().clean
        if isinstance(data, list | tuple):
            return [single(item, initial) for item in data]
        return [single(data, initial)]


class SeedImportForm(forms.Form):
    """Upload of one or more PyRIT YAML files for the import preview."""

    MAX_FILES = 20

    files = MultipleFileField(
        label="YAML files",
        help_text=(
            "PyRIT dataset files (.prompt, .yaml with a 'seeds' list) and single-template files "
            f"(.yaml with a 'value'); at most {yaml_io.MAX_FILE_BYTES // 2**20} MiB each."
        ),
    )
    default_dataset = forms.CharField(
        required=False,
        max_length=255,
        label="Dataset for files that name none",
        help_text="Template files usually have no dataset_name; their seeds go here.",
    )

    def clean_files(self) -> list[Any]:
        files = self.cleaned_data["files"]
        if len(files) > self.MAX_FILES:
            raise ValidationError(f"Upload at most {self.MAX_FILES} files at once.")
        for upload in files:
            if upload.size > yaml_io.MAX_FILE_BYTES:
                raise ValidationError(
                    f"{upload.name}: {upload.size} bytes; the limit is {yaml_io.MAX_FILE_BYTES}."
                )
        return files


class TemplatePreviewForm(StoredValuesForm):
    """One text box per placeholder of a template (declared parameters are required)."""

    def __init__(self, *args: Any, declared: list[str], undeclared: list[str], **kwargs: Any):
        super().__init__(*args, **kwargs)
        for name in declared:
            self.fields[name] = forms.CharField(
                label=name,
                widget=forms.Textarea(attrs={"rows": 2, "cols": 80}),
                strip=False,
            )
        for name in undeclared:
            self.fields[name] = forms.CharField(
                label=f"{name} (not declared)",
                required=False,
                widget=forms.Textarea(attrs={"rows": 2, "cols": 80}),
                help_text="Used by the template but missing from parameters; empty keeps it.",
                strip=False,
            )
