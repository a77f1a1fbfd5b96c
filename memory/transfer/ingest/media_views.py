"""Media over the API: ``PUT /api/v1/media/`` stores bytes, ``GET /api/v1/media/<sha256>/``
serves them back to signed-in users only.

Uploads are content-addressed: the server hashes what it received, checks a hash the client
supplied, sniffs the type from the bytes, and links pieces and seeds that name the file. The
``path`` field is PyRIT's location string, compared but never opened.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import generics, serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.models import MediaBlob
from memory.models.media import media_store
from memory.storage.media import media_attach, media_differs
from pyrit_memory_reader.media import MEDIA_DIFFERS
from redteam.permissions import RequiredPermissions, TokenScope

# Served inline (the browser shows them); everything else is a download.
INLINE_TYPES = frozenset(
    {
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/bmp",
        "image/webp",
        "audio/wav",
        "audio/ogg",
        "audio/flac",
        "audio/mpeg",
        "audio/mp4",
        "video/mp4",
        "video/webm",
        "video/quicktime",
    }
)


class MediaUploadSerializer(serializers.Serializer):
    """The multipart form of a media upload: the bytes, or only the SHA-256 of bytes the
    server already holds (then the upload just records ``path`` for them)."""

    file = serializers.FileField(required=False)
    sha256 = serializers.RegexField(r"^[0-9a-fA-F]{64}$", required=False)
    path = serializers.CharField(required=False, max_length=4096, allow_blank=True)

    def validate(self, attrs: dict) -> dict:
        if "file" not in attrs and "sha256" not in attrs:
            raise serializers.ValidationError({"file": ["Send the file, or its sha256."]})
        return attrs


def _blob_body(request: Request, blob: MediaBlob) -> dict:
    return {
        "sha256": blob.sha256,
        "size": blob.size,
        "content_type": blob.content_type,
        "url": request.build_absolute_uri(f"/api/v1/media/{blob.sha256}/"),
    }


def _warnings(blob: MediaBlob, location: str) -> dict:
    """The pieces naming ``location`` left unlinked because they recorded other bytes: one
    ``"media differs from recorded sha256: …"`` line each (the first 100), and how many."""
    count, messages = media_differs(blob=blob, location=location)
    return {
        "warnings": [f"{MEDIA_DIFFERS}: {message}" for message in messages],
        "warnings_count": count,
    }


class MediaUploadView(APIView):
    """Store one media file content-addressed and link the pieces and seeds naming it."""

    permission_classes = [IsAuthenticated, TokenScope, RequiredPermissions]
    required_permissions = {"PUT": ["memory.add_mediablob"], "POST": ["memory.add_mediablob"]}
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        summary="Upload a media file",
        request={"multipart/form-data": MediaUploadSerializer},
        responses={
            201: inline_serializer(
                "MediaUploaded",
                {
                    "sha256": serializers.CharField(),
                    "size": serializers.IntegerField(),
                    "content_type": serializers.CharField(),
                    "url": serializers.URLField(),
                    "created": serializers.BooleanField(),
                    "linked": serializers.DictField(child=serializers.IntegerField()),
                    "warnings": serializers.ListField(child=serializers.CharField()),
                    "warnings_count": serializers.IntegerField(),
                },
            ),
            400: OpenApiTypes.OBJECT,
            404: OpenApiTypes.OBJECT,
            413: OpenApiTypes.OBJECT,
        },
    )
    def put(self, request: Request) -> Response:
        form = MediaUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        upload = form.validated_data.get("file")
        if upload is None:
            return self._link(request, form.validated_data)
        limit = settings.REDLINE_MEDIA_MAX_BYTES
        if upload.size > limit:
            return Response(
                {
                    "detail": f"The file exceeds the media limit of {limit} bytes.",
                    "limit_bytes": limit,
                },
                status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
            )
        data = upload.read()
        digest = hashlib.sha256(data).hexdigest()
        claimed = form.validated_data.get("sha256")
        if claimed and claimed.lower() != digest:
            return Response(
                {
                    "detail": "The file's SHA-256 does not match the sha256 field.",
                    "sha256": {"given": claimed.lower(), "computed": digest},
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        existed = MediaBlob.objects.filter(sha256=digest).exists()
        location = form.validated_data.get("path") or ""
        blob = media_store(data=data, original_name=location or upload.name or "")
        linked = media_attach(blob=blob, location=location)
        body = {
            **_blob_body(request, blob),
            "created": not existed,
            "linked": linked,
            **_warnings(blob, location),
        }
        return Response(body, status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED)

    post = put

    def _link(self, request: Request, data: dict) -> Response:
        """No bytes, only a SHA-256: link ``path`` to the blob already stored (200), or ask
        for the bytes (404) — how a client skips uploading files the server has."""
        blob = MediaBlob.objects.filter(sha256=data["sha256"].lower()).first()
        if blob is None:
            return Response(
                {"detail": "No file with this SHA-256 is stored; send the file."},
                status=status.HTTP_404_NOT_FOUND,
            )
        location = data.get("path") or ""
        linked = media_attach(blob=blob, location=location)
        return Response(
            {
                **_blob_body(request, blob),
                "created": False,
                "linked": linked,
                **_warnings(blob, location),
            }
        )


class MediaDetailView(generics.RetrieveAPIView):
    """The bytes of one blob, with a type sniffed at upload and a safe disposition."""

    queryset = MediaBlob.objects.all()
    lookup_field = "sha256"
    lookup_url_kwarg = "sha256"

    @extend_schema(summary="Download a media file", responses={(200, "*/*"): OpenApiTypes.BINARY})
    def get(self, request: Request, *args, **kwargs) -> FileResponse:
        blob = self.get_object()
        inline = blob.content_type in INLINE_TYPES
        response = FileResponse(
            blob.file.open("rb"),
            content_type=blob.content_type if inline else "application/octet-stream",
            as_attachment=not inline,
            filename=f"{blob.sha256}",
        )
        # Even a mis-sniffed file must not run script in our origin.
        response["Content-Security-Policy"] = "default-src 'none'; sandbox"
        response["X-Content-Type-Options"] = "nosniff"
        response["Cache-Control"] = "private, max-age=86400, immutable"
        return response
