from django.core.management.base import BaseCommand, CommandError

from executor.checkpoints import read_checkpoints, verify_checkpoint
from executor.verification import verify_tenant
from tenancy.models import Tenant


class Command(BaseCommand):
    help = (
        "Recompute every tenant's receipt chain and check every memory revision against it; "
        "exit non-zero naming the first broken link."
    )

    def add_arguments(self, parser):
        parser.add_argument("--tenant", help="Only this tenant (name)")
        parser.add_argument(
            "--checkpoint", help="A file written by checkpoint_receipts: prove each chain extends it"
        )

    def handle(self, *args, tenant=None, checkpoint=None, **options):
        tenants = Tenant.objects.order_by("name")
        if tenant:
            tenants = tenants.filter(name=tenant)
            if not tenants.exists():
                raise CommandError(f"No tenant named {tenant!r}")
        broken = []
        for row in tenants:
            verification = verify_tenant(row.id)
            for problem in verification.problems:
                broken.append(f"{row.name}: {problem}")
                self.stderr.write(f"BROKEN {row.name}: {problem}")
            if verification.ok:
                self.stdout.write(f"ok {row.name}: {verification.receipts} receipts verified, memories match")
        for signed in read_checkpoints(checkpoint) if checkpoint else []:
            if tenant and signed["tenant"] != tenant:
                continue
            problem = verify_checkpoint(signed)
            if problem:
                broken.append(f"{signed['tenant']}: {problem}")
                self.stderr.write(f"BROKEN {signed['tenant']}: {problem}")
            else:
                self.stdout.write(f"ok {signed['tenant']}: extends the checkpoint at seq {signed['seq']}")
        if broken:
            raise CommandError(f"{len(broken)} problem(s); first: {broken[0]}")
