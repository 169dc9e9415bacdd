"""Settings for Custodian.

Everything that differs between machines comes from the environment:
``DATABASE_URL`` and ``REDIS_URL`` select PostgreSQL and Redis; without them
the service runs on an embedded default (a SQLite file and kombu's filesystem
broker under ``var/``) so ``make run`` works with nothing else installed.
"""

import os
from datetime import timedelta
from pathlib import Path

from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from config.environment import check_service_urls
from core.databases import REPLICA, SQLITE_OPTIONS, primary_database, replica_database
from telemetry.logs import logging_config

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CUSTODIAN_VAR_DIR", BASE_DIR / "var"))

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "dev-only-insecure-key-change-me")
DEBUG = os.environ.get("DJANGO_DEBUG", "0") == "1"
ALLOWED_HOSTS = os.environ.get("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,testserver").split(",")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_filters",
    "csp",
    "django_htmx",
    "guardian",
    "simple_history",
    "telemetry",
    "tenancy",
    "evidence",
    "registrations",
    "memory_core",
    "proposals",
    "maintenance",
    "observations",
    "provenance",
    "reviews",
    "executor",
    "notifications",
    "mgp",
    "health",
    "erasure",
    "metrics",
    "mcp_bridge",
]

# Observability: what measures each request. CUSTODIAN_OBSERVABILITY=off drops all of it (the
# benchmark's "bare" web process, bench/parts/observability.py); CUSTODIAN_METRICS=0 drops metrics
# alone (no middleware, no signal receivers, /metrics answers 404). Middleware that observes
# requests (metrics, request logging, tracing) goes in OBSERVABILITY_MIDDLEWARE, so the bare
# run leaves it out too.
CUSTODIAN_OBSERVABILITY = os.environ.get("CUSTODIAN_OBSERVABILITY", "on") != "off"
CUSTODIAN_METRICS = CUSTODIAN_OBSERVABILITY and os.environ.get("CUSTODIAN_METRICS", "1") != "0"
# The access log and request ids (telemetry.middleware), outermost; the metrics middleware after
# AfterResponseMiddleware. CUSTODIAN_OBSERVABILITY=off removes both (the bench's bare run).
REQUEST_LOG_MIDDLEWARE = ["telemetry.middleware.RequestLogMiddleware"] if CUSTODIAN_OBSERVABILITY else []
METRICS_MIDDLEWARE = ["metrics.middleware.MetricsMiddleware"] if CUSTODIAN_METRICS else []
OBSERVABILITY_MIDDLEWARE = [*REQUEST_LOG_MIDDLEWARE, *METRICS_MIDDLEWARE]
# GET /metrics answers only this bearer token (at least 32 characters); unset, it answers 404.
CUSTODIAN_METRICS_TOKEN = os.environ.get("CUSTODIAN_METRICS_TOKEN", "")
# Review-queue gauges name at most this many tenants (the deepest queues); the rest are "(other)".
CUSTODIAN_METRICS_TENANT_LABELS = int(os.environ.get("CUSTODIAN_METRICS_TENANT_LABELS", 20))

MIDDLEWARE = [
    # Outermost: request and correlation ids for every line below, one access-log line per request.
    *REQUEST_LOG_MIDDLEWARE,
    # First: work deferred by anything below (executor nudges) runs once the response is sent.
    "core.after_response.AfterResponseMiddleware",
    # Next: observers see the answer the caller gets, throttled or not (metrics.middleware).
    *METRICS_MIDDLEWARE,
    "django.middleware.security.SecurityMiddleware",
    "core.middleware.LengthRequiredMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, so its 429s still get the headers above: counts each request once, audits refusals.
    "tenancy.middleware.ThrottleMiddleware",
]

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "reviews.context_processors.roles",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"

check_service_urls(dict(os.environ))  # a mistyped URL stops here, in one line
DATABASE_URL = os.environ.get("DATABASE_URL")
# "transaction" when DATABASE_URL is PgBouncer (or another pooler) in transaction mode: no session
# state survives between transactions (core/databases.py). Only web processes go through it; an
# executor worker refuses to start behind it (its leases name its PostgreSQL backend).
CUSTODIAN_DB_POOLER = os.environ.get("CUSTODIAN_DB_POOLER", "").strip().lower()
# A streaming standby of DATABASE_URL's database: the views that opt in read from it
# (core/replica.py), while it answers and lags at most this many seconds; else they read the primary.
CUSTODIAN_REPLICA_URL = os.environ.get("CUSTODIAN_REPLICA_URL", "").strip()
CUSTODIAN_REPLICA_MAX_LAG_SECONDS = float(os.environ.get("CUSTODIAN_REPLICA_MAX_LAG_SECONDS", 5))
# A replica that failed its check is not asked again for this long.
CUSTODIAN_REPLICA_RETRY_SECONDS = float(os.environ.get("CUSTODIAN_REPLICA_RETRY_SECONDS", 5))
DATABASE_ROUTERS = ["core.replica.ReplicaRouter"]
if (CUSTODIAN_DB_POOLER or CUSTODIAN_REPLICA_URL) and not DATABASE_URL:
    raise ImproperlyConfigured("CUSTODIAN_DB_POOLER and CUSTODIAN_REPLICA_URL need DATABASE_URL (PostgreSQL)")
if DATABASE_URL:
    # Persistent connections suit gunicorn (one per worker, or per thread: config/gunicorn.py)
    # and the executor workers (one per process).
    # A budget for every statement of a web process (config/gunicorn.py sets it; the executor,
    # beat and management commands leave it unset and run unbounded). PostgreSQL cancels a
    # statement past it, the request answers 503 ``query_timeout`` (core.api.problems), and the
    # worker is free again long before gunicorn's own timeout would kill it mid-request.
    _statement_budget = int(os.environ.get("CUSTODIAN_STATEMENT_TIMEOUT_MS") or 0)
    try:
        DATABASES = {
            "default": primary_database(
                DATABASE_URL,
                conn_max_age=int(os.environ.get("CUSTODIAN_DB_CONN_MAX_AGE", 60)),
                pooler=CUSTODIAN_DB_POOLER,
                statement_budget_ms=_statement_budget,
            )
        }
        if CUSTODIAN_REPLICA_URL:
            DATABASES[REPLICA] = replica_database(
                CUSTODIAN_REPLICA_URL,
                primary=DATABASES["default"],
                pooler=CUSTODIAN_DB_POOLER,
                statement_budget_ms=_statement_budget,
            )
    except ValueError as exc:
        raise ImproperlyConfigured(str(exc)) from None
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(VAR_DIR / "custodian.sqlite3"),
            "OPTIONS": dict(SQLITE_OPTIONS),
            "TEST": {"NAME": VAR_DIR / "test-custodian.sqlite3"},
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "guardian.backends.ObjectPermissionBackend",
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"

# Everything Custodian serves comes from its own origin (htmx and Swagger UI are vendored);
# the Swagger UI page, which boots with inline script and styles, has its own policy (config/urls.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "connect-src": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
        "base-uri": [SELF],
    }
}

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/review/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

# Requests per credential (token, session or anonymous address); login attempts per name and address.
CUSTODIAN_API_RATE = os.environ.get("CUSTODIAN_API_RATE", "1200/min")
CUSTODIAN_LOGIN_ATTEMPTS = int(os.environ.get("CUSTODIAN_LOGIN_ATTEMPTS", 5))
CUSTODIAN_LOGIN_LOCKOUT_SECONDS = int(os.environ.get("CUSTODIAN_LOGIN_LOCKOUT_SECONDS", 900))
# Callers without a valid credential are keyed on REMOTE_ADDR; X-Forwarded-For is believed only
# from these proxies (comma-separated IPs or CIDRs; default none), rightmost untrusted hop first.
CUSTODIAN_TRUSTED_PROXIES = [
    entry.strip() for entry in os.environ.get("CUSTODIAN_TRUSTED_PROXIES", "").split(",") if entry.strip()
]
# Refusals are audited as one counted row per caller, status and code per window of this many
# seconds; anonymous addresses get at most this many rows per window, the rest share one.
CUSTODIAN_DENIED_WINDOW_SECONDS = int(os.environ.get("CUSTODIAN_DENIED_WINDOW_SECONDS", 300))
CUSTODIAN_DENIED_ANONYMOUS_ROWS = int(os.environ.get("CUSTODIAN_DENIED_ANONYMOUS_ROWS", 1000))

# Bodies above this size are refused with 413 before they are parsed.
CUSTODIAN_MAX_BODY_BYTES = int(os.environ.get("CUSTODIAN_MAX_BODY_BYTES", 256 * 1024))
CUSTODIAN_MAX_JSON_DEPTH = 20
# POST /api/v1/proposals/batch: up to this many proposals in one body of at most this many bytes.
CUSTODIAN_MAX_BATCH_ITEMS = int(os.environ.get("CUSTODIAN_MAX_BATCH_ITEMS", 500))
CUSTODIAN_MAX_BATCH_BODY_BYTES = int(os.environ.get("CUSTODIAN_MAX_BATCH_BODY_BYTES", 4 * 1024 * 1024))
# DRF reads JSON through request.body, so Django's own limit is the first gate (the parser then
# holds every view but the batch endpoint to CUSTODIAN_MAX_BODY_BYTES).
DATA_UPLOAD_MAX_MEMORY_SIZE = max(CUSTODIAN_MAX_BODY_BYTES, CUSTODIAN_MAX_BATCH_BODY_BYTES)
CUSTODIAN_READ_POLICY_FILE = Path(
    os.environ.get("CUSTODIAN_READ_POLICY_FILE", BASE_DIR / "memory_core" / "read_rules.yaml")
)
# Dense similarity for recall (memory_core.embeddings): wordllama (default), none, hashing, or minilm
# (optional install: requirements-dense.txt). Web and executor processes must use the same one.
CUSTODIAN_EMBEDDER = os.environ.get("CUSTODIAN_EMBEDDER", "wordllama")
# When the executor embeds what it applies: "inline" (in the apply transaction) or "queued" (a task on
# the "vectors" queue after the batch commits; the memory applies at once and its vector follows).
CUSTODIAN_VECTORS = os.environ.get("CUSTODIAN_VECTORS", "inline")
# What writes a compaction summary's content (memory_core.summaries); the default is a deterministic template.
CUSTODIAN_SUMMARISER = os.environ.get("CUSTODIAN_SUMMARISER", "memory_core.summaries.TemplateSummariser")
CUSTODIAN_POLICY_FILE = Path(
    os.environ.get("CUSTODIAN_POLICY_FILE", BASE_DIR / "proposals" / "policy" / "rules.yaml")
)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "tenancy.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["tenancy.authentication.IsAgent"],
    "DEFAULT_PARSER_CLASSES": ["core.api.parsers.StrictJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_SCHEMA_CLASS": "core.api.openapi.CustodianAutoSchema",
    "EXCEPTION_HANDLER": "core.api.problems.problem_exception_handler",
    "DEFAULT_THROTTLE_CLASSES": ["tenancy.throttling.TokenRateThrottle"],
    # List endpoints declare a FilterSet: invalid values answer validation_error, the schema lists them.
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Custodian API",
    "DESCRIPTION": "Governed memory for AI agents: evidence, zero-write proposals, receipts.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "APPEND_COMPONENTS": {
        "securitySchemes": {"AgentToken": {"type": "http", "scheme": "bearer", "description": "Agent token"}}
    },
    "SECURITY": [{"AgentToken": []}],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.api.openapi.add_problem_responses",
        "mgp.openapi.add_mgp_routes",
        "core.api.openapi.tag_by_area",  # last: it tags every route the hooks above added
    ],
    "ENUM_NAME_OVERRIDES": {
        "EvidenceKindEnum": "evidence.models.EvidenceSource.Kind",
        "SubjectKindEnum": "memory_core.models.Memory.SubjectKind",
        "MemoryTypeEnum": "memory_core.models.Memory.Type",
        "ProposalActionEnum": "proposals.models.Proposal.Action",
        "AccessActionEnum": "memory_core.models.AccessEvent.Action",
    },
}

# The cache holds throttle counters, so every process must share it: Redis when
# configured (a database of its own, never the broker's), else this process's memory.
CACHE_URL = os.environ.get("CACHE_URL")
if not CACHE_URL and os.environ.get("REDIS_URL"):
    _redis = os.environ["REDIS_URL"].rstrip("/")
    _head, _, _db = _redis.rpartition("/")
    CACHE_URL = f"{_head}/{(int(_db) + 1) % 16}" if _db.isdigit() and _head.count("/") >= 2 else f"{_redis}/1"
CACHES = {
    "default": (
        {
            "BACKEND": "core.cache.RedisCache",
            "LOCATION": CACHE_URL,
            "KEY_PREFIX": "custodian",
        }
        if CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# --- Celery -----------------------------------------------------------------
# Postgres is the source of truth; the broker only carries "look at entry X" (or, coalesced,
# "look at what is due").
# The settings below give at-least-once delivery; the executor makes the
# effect exactly-once (see executor/services.py).
REDIS_URL = os.environ.get("REDIS_URL")
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object]
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
else:
    _broker_dir = VAR_DIR / "broker"
    CELERY_BROKER_URL = "filesystem://localhost/"  # a host, so kombu does not warn that it lacks one
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
        # How often a worker looks for new messages; MGP's synchronous writes wait on it.
        "polling_interval": float(os.environ.get("CUSTODIAN_BROKER_POLL_SECONDS", 1)),
    }
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 60
CELERY_TASK_SOFT_TIME_LIMIT = 45
# Off on purpose: cancelling on connection loss SIGTERMs a task mid-query and can leave its
# database connection stuck in a transaction; a redelivered duplicate is harmless instead
# (the executor is idempotent per entry).
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_IGNORE_RESULT = True
# Publishing is a nudge, never worth blocking a request for: give up fast.
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2}
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_DEFAULT_QUEUE = "executor"
CELERY_TASK_ROUTES = {
    "executor.embed_revisions": {"queue": "vectors"},  # embedding and applies never wait for each other
    "executor.embed_missing": {"queue": "vectors"},
    "executor.*": {"queue": "executor"},
    "proposals.*": {"queue": "executor"},
    "notifications.*": {"queue": "notifications"},  # a slow receiver never holds up the executor
}
CELERY_BEAT_SCHEDULE = {
    "sweep-outbox": {
        "task": "executor.sweep_outbox",
        "schedule": timedelta(seconds=float(os.environ.get("CUSTODIAN_SWEEP_SECONDS", 5))),
    },
    "expire-reviews": {"task": "proposals.expire_reviews", "schedule": timedelta(minutes=1)},
    "retention-sweep": {"task": "proposals.retention_sweep", "schedule": timedelta(minutes=1)},
    "embed-missing": {"task": "executor.embed_missing", "schedule": timedelta(minutes=10)},
    "dormancy-sweep": {"task": "proposals.dormancy_sweep", "schedule": timedelta(hours=1)},
    "dreaming-pass": {"task": "proposals.dreaming_pass", "schedule": timedelta(hours=6)},
    "compaction-sweep": {"task": "proposals.compaction_sweep", "schedule": timedelta(hours=1)},
    "notifications-sweep": {
        "task": "notifications.sweep",
        "schedule": timedelta(seconds=float(os.environ.get("CUSTODIAN_NOTIFY_SWEEP_SECONDS", 5))),
    },
    "announce-expiring-reviews": {
        "task": "proposals.announce_expiring_reviews",
        "schedule": timedelta(minutes=5),
    },
}

# Ed25519 key (base64, 32 bytes) that signs receipt-chain checkpoints; keep it out of the database.
# Verifiers may hold only the public key.
CUSTODIAN_CHECKPOINT_KEY = os.environ.get("CUSTODIAN_CHECKPOINT_KEY", "")
CUSTODIAN_CHECKPOINT_PUBLIC_KEY = os.environ.get("CUSTODIAN_CHECKPOINT_PUBLIC_KEY", "")

# Bearer tokens expire after this many days unless issued with --expires-days (0: never).
CUSTODIAN_TOKEN_TTL_DAYS = int(os.environ.get("CUSTODIAN_TOKEN_TTL_DAYS", 90))

# GET /readyz: the newest executor worker heartbeat (health.heartbeat) may be this many seconds
# old (above the task time limit, so one long task on a single-process worker is no outage), and
# an outbox entry may have been due this long without being applied, and a webhook or reviewer
# email this long without being sent (a retry waiting for its backoff is not due).
CUSTODIAN_READY_WORKER_SECONDS = int(os.environ.get("CUSTODIAN_READY_WORKER_SECONDS", 120))
CUSTODIAN_READY_OUTBOX_SECONDS = int(os.environ.get("CUSTODIAN_READY_OUTBOX_SECONDS", 300))
CUSTODIAN_READY_NOTIFICATIONS_SECONDS = int(os.environ.get("CUSTODIAN_READY_NOTIFICATIONS_SECONDS", 300))

# Executor tuning: how long a dispatched entry is leased before the sweep may
# hand it out again, and how many attempts before it is dead-lettered. On PostgreSQL the expiry
# is only the backstop: an entry whose holder (the worker's connection) is gone is handed out
# at the sweep's next tick (executor/leases.py).
CUSTODIAN_OUTBOX_LEASE_SECONDS = int(os.environ.get("CUSTODIAN_OUTBOX_LEASE_SECONDS", 120))
CUSTODIAN_OUTBOX_MAX_ATTEMPTS = int(os.environ.get("CUSTODIAN_OUTBOX_MAX_ATTEMPTS", 5))
# A holder whose connection sits idle this long with entries still leased works on none of them.
CUSTODIAN_OUTBOX_IDLE_HOLDER_SECONDS = int(os.environ.get("CUSTODIAN_OUTBOX_IDLE_HOLDER_SECONDS", 30))
# How long an MGP write waits for the executor's receipt before answering 202 with a task.
CUSTODIAN_MGP_WAIT_SECONDS = float(os.environ.get("CUSTODIAN_MGP_WAIT_SECONDS", 3))
# Without coalesced nudges, the sweep leases up to SWEEP_BATCH due entries, keeping at most
# MAX_IN_FLIGHT under a live lease, and hands them to workers EXECUTOR_BATCH at a time (one
# transaction per batch); coalesced, it publishes one nudge and workers lease their own batches.
CUSTODIAN_OUTBOX_SWEEP_BATCH = int(os.environ.get("CUSTODIAN_OUTBOX_SWEEP_BATCH", 1000))
CUSTODIAN_OUTBOX_MAX_IN_FLIGHT = int(os.environ.get("CUSTODIAN_OUTBOX_MAX_IN_FLIGHT", 1000))
CUSTODIAN_EXECUTOR_BATCH = int(os.environ.get("CUSTODIAN_EXECUTOR_BATCH", 100))
# Coalesce executor nudges through a cache key (proposals/services/outbox.py): only when web and
# workers share the Redis cache. LocMemCache is per process, so the embedded mode publishes one
# nudge per due entry instead.
CUSTODIAN_NUDGE_COALESCE = bool(CACHE_URL)

# Logs (docs/operations.md, "Logs"): one structlog chain for every logger, one JSON object per
# line by default; ``console`` for a terminal (bin/run-all sets it). Idle beat jobs log at DEBUG.
CUSTODIAN_LOG_FORMAT = os.environ.get("CUSTODIAN_LOG_FORMAT", "json")
LOGGING = logging_config(
    log_format=CUSTODIAN_LOG_FORMAT,
    level=os.environ.get("LOG_LEVEL", "INFO"),
    quiet_tasks=sorted({str(job["task"]) for job in CELERY_BEAT_SCHEDULE.values()}),
)
# One line per request (telemetry.middleware); off to measure what logging costs.
CUSTODIAN_ACCESS_LOG = os.environ.get("CUSTODIAN_ACCESS_LOG", "1") == "1"

# Webhooks (notifications/): each POST waits at most TIMEOUT seconds; a failed delivery is
# retried after RETRY_BASE * 2^(attempts-1) seconds (capped at RETRY_MAX, with jitter) and is
# dead after MAX_ATTEMPTS. A delivery in a worker's hands is leased for LEASE seconds (above the
# timeout): a worker that dies mid-POST leaves it to the sweep after that.
CUSTODIAN_WEBHOOK_TIMEOUT_SECONDS = float(os.environ.get("CUSTODIAN_WEBHOOK_TIMEOUT_SECONDS", 5))
CUSTODIAN_WEBHOOK_MAX_ATTEMPTS = int(os.environ.get("CUSTODIAN_WEBHOOK_MAX_ATTEMPTS", 8))
CUSTODIAN_WEBHOOK_RETRY_BASE_SECONDS = float(os.environ.get("CUSTODIAN_WEBHOOK_RETRY_BASE_SECONDS", 10))
CUSTODIAN_WEBHOOK_RETRY_MAX_SECONDS = float(os.environ.get("CUSTODIAN_WEBHOOK_RETRY_MAX_SECONDS", 3600))
CUSTODIAN_WEBHOOK_LEASE_SECONDS = int(os.environ.get("CUSTODIAN_WEBHOOK_LEASE_SECONDS", 60))
# A review window closing within this many hours is announced once (proposal.expiring).
CUSTODIAN_EXPIRING_NOTICE_HOURS = int(os.environ.get("CUSTODIAN_EXPIRING_NOTICE_HOURS", 24))

# Email to reviewers (notifications/email.py) goes through Django's email framework: the console
# backend unless EMAIL_HOST names an SMTP server (or EMAIL_BACKEND says otherwise). Links in
# messages start with CUSTODIAN_PUBLIC_URL; digests go out daily at CUSTODIAN_DIGEST_HOUR (UTC).
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", 25))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = os.environ.get("EMAIL_USE_TLS", "0") == "1"
EMAIL_TIMEOUT = int(os.environ.get("EMAIL_TIMEOUT", 10))
EMAIL_BACKEND = os.environ.get(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend",
)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "custodian@localhost")
CUSTODIAN_PUBLIC_URL = os.environ.get("CUSTODIAN_PUBLIC_URL", "http://127.0.0.1:8000")
CUSTODIAN_DIGEST_HOUR = int(os.environ.get("CUSTODIAN_DIGEST_HOUR", 7))
