"""Print the pseudonym an erasure wrote for a subject, so an auditor can confirm which rows were theirs."""

from django.core.management.base import BaseCommand

from core.commands import check_text_options
from core.pseudonyms import pseudonym
from tenancy.management.commands.grant_delegation import parse_subject


class Command(BaseCommand):
    help = (
        "Print the pseudonym (erased:<hex>) that replaced a subject's id in grants, review decisions "
        "and their history when the subject was erased; the same subject always gets the same one."
    )

    def add_arguments(self, parser):
        parser.add_argument("--subject", required=True, help="kind:id, e.g. user:alice")

    def handle(self, *args, subject, **options):
        check_text_options(subject=subject)
        named = parse_subject(subject)
        self.stdout.write(pseudonym(named["kind"], named["id"]))
