"""URLs of the review pages: home, the lists and search, the attack and conversation pages,
human verdicts and scores, review queues, and preferences.

Pages are addressed by PyRIT's own ids, so an ``attack_result_id`` or ``conversation_id``
printed by PyRIT opens the right page.
"""

from django.urls import path

from memory.review import (
    detail,
    home,
    lists,
    preferences,
    queues,
    saved_views,
    scenarios,
    verdicts,
)

urlpatterns = [
    path("", home.home, name="home"),
    path("push/", home.push_guide, name="push-guide"),
    path("attacks/", lists.attack_list, name="attack-list"),
    path("attacks/verdicts/", verdicts.verdicts_bulk, name="attack-verdicts-bulk"),
    path("conversations/", lists.conversation_list, name="conversation-list"),
    path("search/", lists.search, name="search"),
    path("scenarios/", scenarios.scenario_list, name="scenario-list"),
    path("scenarios/<uuid:scenario_id>/", scenarios.scenario_detail, name="scenario-detail"),
    path("attacks/<uuid:attack_result_id>/", detail.attack_detail, name="attack-detail"),
    path(
        "attacks/<uuid:attack_result_id>/export.<slug:fmt>",
        detail.attack_download,
        name="attack-download",
    ),
    path(
        "attacks/<uuid:attack_result_id>/verdicts/",
        verdicts.verdict_record,
        name="attack-verdict",
    ),
    path(
        "conversations/<str:conversation_id>/",
        detail.conversation_detail,
        name="conversation-detail",
    ),
    path("pieces/<uuid:piece_id>/human-score/", verdicts.human_score, name="piece-human-score"),
    path("preferences/", preferences.preferences, name="preferences"),
    path(
        "preferences/attack-columns/",
        saved_views.save_attack_columns,
        name="attack-columns",
    ),
    path("views/", saved_views.save_view, name="saved-view-save"),
    path("views/<int:view_id>/delete/", saved_views.delete_view, name="saved-view-delete"),
    path("queues/", queues.queue_list, name="queue-list"),
    path("queues/new/", queues.queue_edit, name="queue-create"),
    path("queues/<int:queue_id>/", queues.queue_detail, name="queue-detail"),
    path("queues/<int:queue_id>/edit/", queues.queue_edit, name="queue-edit"),
    path("queues/<int:queue_id>/next/", queues.queue_next, name="queue-next"),
    path(
        "queues/<int:queue_id>/resolve/<uuid:attack_result_id>/",
        queues.queue_resolve,
        name="queue-resolve",
    ),
]
