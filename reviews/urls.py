from django.urls import path

from reviews import views

app_name = "reviews"

urlpatterns = [
    path("", views.queue, name="queue"),
    path("dashboard/", views.dashboard, name="dashboard"),
    path("bulk-approve/", views.bulk_approve_view, name="bulk-approve"),
    path("dreaming/", views.dreaming_runs_page, name="dreaming-runs"),
    path("dreaming/<uuid:run_id>/", views.dreaming_run_page, name="dreaming-run"),
    path("proposals/<uuid:proposal_id>/", views.proposal_page, name="proposal"),
    path("proposals/<uuid:proposal_id>/decide/", views.decide, name="decide"),
    path("proposals/<uuid:proposal_id>/decide-together/", views.decide_together_view, name="decide-together"),
]
