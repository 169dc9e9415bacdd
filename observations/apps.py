from django.apps import AppConfig


class ObservationsConfig(AppConfig):
    name = "observations"
