"""Operators draft, validate and ask to publish a tenant's registration.

    manage.py registration show --tenant T [--candidate ID]
    manage.py registration draft --tenant T --by USER (--file DOC.json | --from-active) [--candidate ID]
    manage.py registration validate --tenant T --candidate ID
    manage.py registration publish-request --tenant T --candidate ID --by USER [--reason …]

Nothing here publishes: publish-request submits a proposal that a person who
may publish (not the asker) must approve; the executor applies it.
"""

import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from core.commands import check_text_options, read_json_file
from core.errors import DomainError
from maintenance.schema_evolution import request_publication, validate_candidate
from registrations.models import Registration
from registrations.selectors import active_registration
from registrations.services import draft_registration, edit_draft
from tenancy.services import get_tenant


class Command(BaseCommand):
    help = "Draft, validate and ask to publish a tenant's registration (publishing is a reviewed proposal)."

    def add_arguments(self, parser):
        parser.add_argument("verb", choices=["show", "draft", "validate", "publish-request"])
        parser.add_argument("--tenant", required=True)
        parser.add_argument("--candidate", help="A candidate's id (draft: edit it instead of a new one)")
        parser.add_argument("--file", help="The document, as JSON ('-' reads stdin)")
        parser.add_argument("--from-active", action="store_true", help="Start from the active document")
        parser.add_argument("--by", help="The operator's username")
        parser.add_argument("--reason", default="")

    def handle(self, *args, verb, tenant, **options):
        check_text_options(
            tenant=tenant, candidate=options["candidate"], by=options["by"], reason=options["reason"]
        )
        try:
            tenant_row = get_tenant(name=tenant)
            handler = getattr(self, f"_{verb.replace('-', '_')}")
            handler(tenant_row, **options)
        except DomainError as error:
            raise CommandError(
                f"{error.code}: {error.detail} {json.dumps(error.extra, default=str)}"
            ) from None
        except Registration.DoesNotExist:
            raise CommandError("no such candidate in this tenant") from None

    def _show(self, tenant, *, candidate, **options):
        if candidate:
            document = self._candidate(tenant, candidate).document
        else:
            document = active_registration(tenant_id=tenant.pk).document
        self.stdout.write(json.dumps(document, indent=2, sort_keys=True))

    def _draft(self, tenant, *, candidate, file, from_active, by, **options):
        if bool(file) == bool(from_active):
            raise CommandError("give exactly one of --file and --from-active")
        document = active_registration(tenant_id=tenant.pk).document if from_active else self._read(file)
        if candidate:
            row = edit_draft(candidate=self._candidate(tenant, candidate), document=document)
        else:
            row = draft_registration(
                tenant_id=tenant.pk, document=document, created_by=self._user(by).username
            )
        self.stdout.write(f"candidate {row.pk} on v{row.base_version} ({row.status}) {row.fingerprint}")

    def _validate(self, tenant, *, candidate, **options):
        row = self._candidate(tenant, candidate)
        report = validate_candidate(candidate=row)
        self.stdout.write(json.dumps(report, indent=2))
        row.refresh_from_db()
        if row.status != Registration.Status.VALIDATED:
            raise CommandError("the candidate did not validate (see the report above)")

    def _publish_request(self, tenant, *, candidate, by, reason, **options):
        proposal = request_publication(
            tenant=tenant, candidate_id=candidate, requested_by=self._user(by), reason=reason
        )
        self.stdout.write(
            f"proposal {proposal.pk} ({proposal.status}): a person who may publish must approve it"
        )

    def _candidate(self, tenant, candidate_id) -> Registration:
        if not candidate_id:
            raise CommandError("--candidate is required")
        try:
            return Registration.objects.get(tenant=tenant, pk=candidate_id)
        except (Registration.DoesNotExist, ValueError):
            raise CommandError("no such candidate in this tenant") from None

    def _user(self, username):
        if not username:
            raise CommandError("--by (the operator's username) is required")
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise CommandError(f"no active user {username!r}")
        return user

    def _read(self, path: str) -> dict:
        return read_json_file(path, what="the document")
