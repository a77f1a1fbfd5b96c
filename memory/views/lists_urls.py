"""URLs of the list pages and the global search."""

from django.urls import path

from memory.views import lists

urlpatterns = [
    path("attacks/", lists.attack_list, name="attack-list"),
    path("conversations/", lists.conversation_list, name="conversation-list"),
    path("search/", lists.search, name="search"),
]
