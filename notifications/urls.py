from django.urls import path

from notifications import views

app_name = "notifications"

urlpatterns = [
    path("email/", views.email_preference, name="email-preference"),
]
