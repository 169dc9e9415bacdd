from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    """Review decisions on proposals (the review workflow builds on this app)."""

    name = "reviews"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from reviews.roles import recreate_role_groups

        # Runs after the last app's permissions exist (executor is installed last).
        post_migrate.connect(recreate_role_groups, dispatch_uid="reviews.recreate_role_groups")
