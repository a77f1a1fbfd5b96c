"""The upload form: the file is checked by content (and a zip by its directory) right away."""

from __future__ import annotations

from typing import Any

from django import forms
from django.template.defaultfilters import filesizeformat

from memory.transfer.uploads.filetypes import HEAD_BYTES, UploadRefused, sniff_upload
from memory.transfer.uploads.limits import upload_limits
from memory.transfer.uploads.zipsafe import ZipRefused, inspect_zip


class ImportUploadForm(forms.Form):
    """A PyRIT ``.db`` file or a ``.zip`` of a ``dbdata`` folder, and the dry-run switch.

    Only cheap checks run here (the first bytes; for a zip its central directory): a wrong
    file gets its message at once, and nothing is imported inside the request.
    """

    file = forms.FileField(
        label="PyRIT database or dbdata zip",
        widget=forms.ClearableFileInput(attrs={"accept": ".db,.sqlite,.sqlite3,.zip"}),
    )
    dry_run = forms.BooleanField(
        required=False,
        label="Dry run",
        help_text="Read and count everything, write nothing.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kind: str | None = None

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        limits = upload_limits()
        if upload.size > limits.max_upload_bytes:
            raise forms.ValidationError(
                "The file is %(size)s; uploads may be at most %(limit)s.",
                params={
                    "size": filesizeformat(upload.size),
                    "limit": filesizeformat(limits.max_upload_bytes),
                },
            )
        upload.seek(0)
        head = upload.read(HEAD_BYTES)
        upload.seek(0)
        try:
            self.kind = sniff_upload(head)
            if self.kind == "zip":
                inspect_zip(upload.file, limits.zip)
        except (UploadRefused, ZipRefused) as exc:
            # The message goes in params: error messages are %-formatted.
            raise forms.ValidationError("%(reason)s", params={"reason": str(exc)}) from exc
        finally:
            upload.seek(0)
        return upload
