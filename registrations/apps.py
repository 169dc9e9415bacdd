from django.apps import AppConfig


class RegistrationsConfig(AppConfig):
    name = "registrations"
    verbose_name = "Registrations"
    default_auto_field = "django.db.models.BigAutoField"
