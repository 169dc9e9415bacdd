from django.apps import AppConfig


class MgpConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "mgp"
    verbose_name = "MGP binding"
