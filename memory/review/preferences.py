"""Per-user display preferences of the review pages (reviewer safety)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from redteam.core.forms import StoredValuesModelForm
from redteam.models import UserPreference


def blur_harmful_media(user) -> bool:
    """The user's "blur media of pieces with harm categories" setting (on by default)."""
    value = (
        UserPreference.objects.filter(user=user)
        .values_list("blur_harmful_media", flat=True)
        .first()
    )
    return True if value is None else value


class PreferenceForm(StoredValuesModelForm):
    """The settings a user can change for themselves."""

    class Meta:
        model = UserPreference
        fields = ["blur_harmful_media"]
        labels = {"blur_harmful_media": "Blur images and video of pieces with harm categories"}
        help_texts = {
            "blur_harmful_media": "Blurred media show when you click them, one at a time."
        }


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
