"""The review forms: a verdict on an attack, a human score of a piece, and who may send them."""

from __future__ import annotations

from django import forms

from memory.models import HumanOutcome
from memory.storage.queues import reviewers_queryset
from memory.storage.services import HUMAN_TEXT_MAX
from memory.storage.services import VERDICT_PERMISSION as VERDICT_PERMISSION  # who may review
from redteam.core.choices import ScoreType
from redteam.core.forms import StoredValuesForm

SCORE_PERMISSION = "memory.add_score"


class VerdictForm(StoredValuesForm):
    """A reviewer's verdict: an outcome and a required reason."""

    outcome = forms.ChoiceField(choices=HumanOutcome.choices, widget=forms.RadioSelect)
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "Why? What did you check?"}),
        max_length=HUMAN_TEXT_MAX,
    )


class HumanScoreForm(StoredValuesForm):
    """A reviewer's score of one piece: true/false or a 0–1 value, with a rationale."""

    score_type = forms.ChoiceField(
        choices=[(ScoreType.TRUE_FALSE, "True / false"), (ScoreType.FLOAT_SCALE, "Scale 0–1")],
        initial=ScoreType.TRUE_FALSE,
        widget=forms.RadioSelect,
    )
    bool_value = forms.ChoiceField(
        choices=[("true", "True"), ("false", "False")],
        required=False,
        widget=forms.RadioSelect,
        label="Value (true / false)",
    )
    float_value = forms.FloatField(
        min_value=0.0,
        max_value=1.0,
        required=False,
        label="Value (0–1)",
        widget=forms.NumberInput(attrs={"step": "0.05", "min": "0", "max": "1"}),
    )
    rationale = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "Why this score?"}),
        max_length=HUMAN_TEXT_MAX,
    )
    categories = forms.CharField(
        required=False,
        max_length=1000,
        label="Categories",
        help_text="Optional, comma-separated (e.g. violence, jailbreak).",
    )

    def clean(self) -> dict:
        data = super().clean()
        if data.get("score_type") == ScoreType.TRUE_FALSE and not data.get("bool_value"):
            self.add_error("bool_value", "Choose true or false.")
        if data.get("score_type") == ScoreType.FLOAT_SCALE and data.get("float_value") is None:
            self.add_error("float_value", "Enter a value between 0 and 1.")
        return data

    @property
    def value(self) -> str | float:
        """The value for the chosen score type."""
        data = self.cleaned_data
        if data["score_type"] == ScoreType.TRUE_FALSE:
            return data["bool_value"]
        return data["float_value"]

    @property
    def category_list(self) -> list[str]:
        """The comma-separated categories as a list."""
        return [c.strip() for c in self.cleaned_data.get("categories", "").split(",") if c.strip()]


# --- review queues --------------------------------------------------------------------------

QUEUE_CREATE_PERMISSION = "memory.add_reviewqueue"
QUEUE_CHANGE_PERMISSION = "memory.change_reviewqueue"
RESOLVE_PERMISSION = "memory.add_queueresolution"


class QueueForm(StoredValuesForm):
    """A review queue: the attack list's filter, who reviews, how many reviews, blind or not."""

    name = forms.CharField(max_length=200)
    description = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), max_length=HUMAN_TEXT_MAX
    )
    filter_query = forms.CharField(
        required=False,
        label="Filter",
        max_length=4000,
        help_text="The attack list's query string, e.g. outcome=success&labels=op:jailbreak"
        "&sort=time (or paste the list's URL). Empty: every attack.",
        widget=forms.TextInput(attrs={"class": "mono", "spellcheck": "false"}),
    )
    required_reviews = forms.IntegerField(
        min_value=1, max_value=20, initial=1, label="Reviews per attack"
    )
    blind = forms.BooleanField(
        required=False,
        label="Blind: reviewers see no other verdict on an attack until they have given theirs",
    )
    assignees = forms.ModelMultipleChoiceField(
        queryset=None, required=False, widget=forms.CheckboxSelectMultiple
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["assignees"].queryset = reviewers_queryset()
        self.fields["assignees"].label_from_instance = lambda user: user.get_username()
