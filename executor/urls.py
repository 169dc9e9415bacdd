from django.urls import path

from executor import views

app_name = "executor"

urlpatterns = [
    path("proposals/<uuid:proposal_id>/receipt/", views.receipt_panel, name="receipt-panel"),
]
