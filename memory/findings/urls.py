"""URLs of the operation, finding and report pages."""

from django.urls import path

from memory.findings import views

urlpatterns = [
    path("operations/", views.operation_list, name="operation-list"),
    path("operations/new/", views.operation_edit, name="operation-create"),
    path("operations/<uuid:operation_id>/", views.operation_detail, name="operation-detail"),
    path("operations/<uuid:operation_id>/edit/", views.operation_edit, name="operation-edit"),
    path("findings/", views.finding_list, name="finding-list"),
    path("findings/new/", views.finding_create_view, name="finding-create"),
    path("findings/add/", views.finding_pick, name="finding-pick"),
    path("findings/<uuid:finding_id>/", views.finding_detail, name="finding-detail"),
    path("findings/<uuid:finding_id>/edit/", views.finding_edit, name="finding-edit"),
    path("findings/<uuid:finding_id>/tags/", views.finding_tag_add, name="finding-tag-add"),
    path("findings/<uuid:finding_id>/status/", views.finding_status, name="finding-status"),
    path("findings/<uuid:finding_id>/comments/", views.finding_comment, name="finding-comment"),
    path("findings/<uuid:finding_id>/evidence/", views.finding_evidence, name="finding-evidence"),
    path("findings/<uuid:finding_id>/retests/", views.finding_retest, name="finding-retest"),
    path("findings/<uuid:finding_id>/issue.md", views.finding_issue, name="finding-issue"),
    path("reports/", views.report_list, name="report-list"),
    path("reports/new/", views.report_create_view, name="report-create"),
    path("reports/<uuid:report_id>/", views.report_detail, name="report-detail"),
    path(
        "reports/<uuid:report_id>/report.<slug:fmt>",
        views.report_download,
        name="report-download",
    ),
]
