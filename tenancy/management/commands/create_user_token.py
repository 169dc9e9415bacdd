from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from core.commands import check_text_options
from tenancy.services import issue_user_token


class Command(BaseCommand):
    help = "Issue a personal API token for a person (for the reviewer REST endpoints). Printed once."

    def add_arguments(self, parser):
        parser.add_argument("--expires-days", type=int, default=None, help="Days until it expires (0: never)")
        parser.add_argument("--user", required=True)

    def handle(self, *args, expires_days=None, user, **options):
        check_text_options(user=user)
        person = get_user_model().objects.filter(username=user, is_active=True).first()
        if person is None:
            raise CommandError(f"No active user named {user!r}")
        _, raw_key = issue_user_token(user=person, expires_in_days=expires_days)
        self.stderr.write(f"Token for {user} (shown once, store it now):")
        self.stdout.write(raw_key)
