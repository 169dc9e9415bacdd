"""Production settings: everything in ``config.settings`` plus HTTPS-only security.

Use with ``DJANGO_SETTINGS_MODULE=config.settings_production`` behind TLS and
set DJANGO_SECRET_KEY (at least 50 random characters) and DJANGO_ALLOWED_HOSTS.
``manage.py check --deploy`` is clean with these.
"""

import os

from config.settings import *  # noqa: F403

DEBUG = False
SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]
SECURE_SSL_REDIRECT = True
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = 31536000
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SESSION_COOKIE_SECURE = True
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_SECURE = True
CSRF_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
