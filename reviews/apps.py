from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    """Review decisions on proposals (the review workflow builds on this app)."""

    name = "reviews"
