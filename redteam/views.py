"""Project-level views: the health check and the error pages."""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import RequestDataTooBig
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponseServerError, JsonResponse
from django.shortcuts import render
from django.template import loader
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe
from rest_framework.exceptions import APIException
from rest_framework.response import Response
from rest_framework.views import exception_handler

from redteam.core.storage import is_out_of_space
from redteam.security import security_event


def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness and database reachability, for load balancers; reveals nothing else."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


#: Redline's icon, shipped with the app (pages link the SVG beside it from the static files).
FAVICON = Path(__file__).resolve().parent / "static" / "redteam" / "favicon.ico"


@require_safe
@cache_control(max_age=86400, public=True)
def favicon(request: HttpRequest) -> HttpResponse:
    """``/favicon.ico``: browsers ask for it on pages that name no icon (JSON answers, the
    browsable API, downloads) and logged a 404 each time."""
    return HttpResponse(FAVICON.read_bytes(), content_type="image/x-icon")


# --- Error pages: the app's layout for pages, the API's {"detail": …} shape for the API -------


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    """403: why (the view's own message when it gave one) and the pages the user may open."""
    message = str(exception) if exception is not None else ""
    security_event("permission_denied", request=request, reason=message)
    if _is_api(request):
        return JsonResponse(
            {"detail": message or "You do not have permission to perform this action."},
            status=403,
        )
    return render(request, "403.html", {"exception": message}, status=403)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """404: what was asked for, and how to find it (search, the lists)."""
    if _is_api(request):
        return JsonResponse({"detail": "Not found."}, status=404)
    return render(request, "404.html", {"request_path": request.path}, status=404)


def server_error(request: HttpRequest) -> HttpResponse:
    """500: rendered without the request's context, which may be what failed."""
    if _is_api(request):
        return JsonResponse({"detail": "Server error; the server log has the details."}, status=500)
    return HttpResponseServerError(loader.get_template("500.html").render())


class BodyTooLarge(APIException):
    """A request body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``, as a JSON answer."""

    status_code = 413
    default_detail = "The request body is larger than this endpoint accepts."
    default_code = "body_too_large"


class InsufficientStorage(APIException):
    """A write refused because the server's disk (or quota) is full, as a JSON 507."""

    status_code = 507
    default_detail = (
        "The server has no storage space left for this upload; nothing was stored. "
        "Try again later or ask the operator to free space."
    )
    default_code = "insufficient_storage"


def api_exception_handler(exc: Exception, context: dict) -> Response | None:
    """DRF's own handler, with refusals written to the security log.

    A body over Django's size limit is raised while DRF reads it for the parser, outside any
    parser, and Django would answer it with its HTML 400 page: here it becomes a JSON 413.
    A full disk (``ENOSPC``, ``EDQUOT``) is the server's state, not a bug: a JSON 507."""
    if isinstance(exc, RequestDataTooBig):
        exc = BodyTooLarge()
    elif is_out_of_space(exc):
        exc = InsufficientStorage()
    response = exception_handler(exc, context)
    request = context.get("request")
    if response is not None and request is not None:
        event = _API_EVENTS.get(response.status_code)
        if event is not None:
            security_event(event, request=request, reason=str(getattr(exc, "detail", exc)))
    return response


#: The API refusals the security log records, by status.
_API_EVENTS = {401: "api_unauthenticated", 403: "permission_denied", 429: "rate_limited"}
