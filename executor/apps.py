from django.apps import AppConfig


class ExecutorConfig(AppConfig):
    name = "executor"

    def ready(self) -> None:
        """Keep executor workers off a transaction pooler: their leases name their PostgreSQL backend."""
        from celery.signals import celeryd_init

        from executor.leases import refuse_transaction_pooler

        celeryd_init.connect(refuse_transaction_pooler, dispatch_uid="executor.refuse_transaction_pooler")
