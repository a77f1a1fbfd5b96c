"""Per-user display preferences: reviewer safety on the review pages, and the colour scheme
of the app and the admin."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from redteam.core.forms import StoredValuesModelForm
from redteam.models import UserPreference


def blur_harmful_media(user) -> bool:
    """The user's "blur media of pieces with harm categories" setting (on by default).

    Reads ``user.preference`` as the login backend loaded it with the user: no query.
    """
    try:
        return user.preference.blur_harmful_media
    except UserPreference.DoesNotExist:
        return True


class PreferenceForm(StoredValuesModelForm):
    """The settings a user can change for themselves."""

    class Meta:
        model = UserPreference
        fields = ["blur_harmful_media", "theme"]
        labels = {
            "blur_harmful_media": "Blur images and video of pieces with harm categories",
            "theme": "Theme",
        }
        help_texts = {
            "blur_harmful_media": "Blurred media show when you click them, one at a time.",
            "theme": "For Redline and its admin. System follows your device's light or dark "
            "setting.",
        }
        widgets = {"theme": forms.RadioSelect}

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # A post without a theme (a form from before themes, a script) keeps the stored one.
        self.fields["theme"].required = False

    def clean_theme(self) -> str:
        return self.cleaned_data.get("theme") or self.instance.theme


@login_required
def preferences(request: HttpRequest) -> HttpResponse:
    """Show and save the signed-in user's review preferences."""
    preference = UserPreference.objects.filter(user=request.user).first() or UserPreference(
        user=request.user
    )
    # An unchecked box posts nothing: an empty POST is still a submission.
    data = request.POST if request.method == "POST" else None
    form = PreferenceForm(data, instance=preference)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, "Preferences saved.")
        return redirect("preferences")
    return render(request, "review/preferences.html", {"form": form})
