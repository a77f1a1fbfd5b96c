"""Throwaway endpoints for the token and permission tests (``@pytest.mark.urls``).

``conversations/`` uses the API's default permission classes (model permissions);
``probe/`` is a view without a queryset, guarded by ``RequiredPermissions`` like ingestion.
"""

from __future__ import annotations

from django.urls import path
from drf_spectacular.views import SpectacularAPIView
from rest_framework import generics, serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.models import Conversation
from redteam.permissions import RequiredPermissions, TokenScope


class ConversationSerializer(serializers.ModelSerializer):
    class Meta:
        model = Conversation
        fields = ["id", "conversation_id"]


class ConversationList(generics.ListAPIView):
    queryset = Conversation.objects.order_by("pk")
    serializer_class = ConversationSerializer


class Probe(APIView):
    """Answers who is asking; writes nothing."""

    permission_classes = [IsAuthenticated, TokenScope, RequiredPermissions]
    required_permissions = {
        "GET": ["memory.view_conversation"],
        "POST": ["memory.add_conversation", "memory.add_messagepiece"],
    }

    def get(self, request: Request) -> Response:
        return Response({"user": request.user.get_username()})

    def post(self, request: Request) -> Response:
        return Response({"user": request.user.get_username()}, status=status.HTTP_201_CREATED)


urlpatterns = [
    path("conversations/", ConversationList.as_view()),
    path("probe/", Probe.as_view()),
    path("schema/", SpectacularAPIView.as_view()),
]
