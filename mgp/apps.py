from django.apps import AppConfig


class MgpConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "mgp"
    verbose_name = "MGP binding"

    def ready(self) -> None:
        from memory_core.signals import memory_purged
        from mgp.services.purging import scrub_purged

        memory_purged.connect(scrub_purged, dispatch_uid="mgp.scrub_purged")
