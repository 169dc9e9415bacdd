"""Credentials and keys: detect-secrets' plugins, run in-process on strings, and their encodings.

Each plugin's ``analyze_string`` runs directly on the text (no files, no baseline, no
settings, never the plugins' network verification). The high-entropy plugins are left
out: content hashes, ids and commit shas are everyday content here. A base64 or hex
run that decodes to printable text is scanned again as that text, two layers deep.
"""

import base64
import binascii
import re
from collections.abc import Iterator

from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import BasePlugin
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import DENYLIST as KEYWORDS
from detect_secrets.plugins.keyword import KeywordDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

PLUGINS: tuple[BasePlugin, ...] = (
    ArtifactoryDetector(),
    AWSKeyDetector(),
    AzureStorageKeyDetector(),
    BasicAuthDetector(),
    DiscordBotTokenDetector(),
    GitHubTokenDetector(),
    GitLabTokenDetector(),
    JwtTokenDetector(),
    KeywordDetector(),
    MailchimpDetector(),
    NpmDetector(),
    OpenAIDetector(),
    PrivateKeyDetector(),
    PypiTokenDetector(),
    SendGridDetector(),
    SlackDetector(),
    SquareOAuthDetector(),
    StripeDetector(),
    TelegramBotTokenDetector(),
    TwilioKeyDetector(),
)
_NAMED = tuple((re.sub(r"[^a-z0-9]+", "_", p.secret_type.lower()).strip("_"), p) for p in PLUGINS)
# The keyword plugin's patterns are slow; it runs only where one of its keywords occurs.
_NAMED_WITHOUT_KEYWORD = tuple((kind, p) for kind, p in _NAMED if not isinstance(p, KeywordDetector))
_KEYWORD_HINT = re.compile("|".join(KEYWORDS), re.IGNORECASE)

_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX = re.compile(r"\b(?:[0-9a-fA-F]{2}){8,}\b")
_PRINTABLE = re.compile(r"[\t\n\r\x20-\x7e]*")
MAX_LAYERS = 2


def credential_spans(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield ``(kind, start, end)`` for each credential the plugins find in ``text``."""
    plugins = _NAMED if _KEYWORD_HINT.search(text) else _NAMED_WITHOUT_KEYWORD
    for kind, plugin in plugins:
        for value in plugin.analyze_string(text):
            start = text.find(value) if value else -1
            if start >= 0:
                yield kind, start, start + len(value)


def encoded_credential_spans(text: str, *, layers: int = MAX_LAYERS) -> Iterator[tuple[str, int, int, str]]:
    """Yield ``(kind, start, end, encoding)`` for each credential inside a base64 or hex run of ``text``.

    The span is the encoded run's; the encoding is ``base64``, ``hex`` or layers of them
    (``base64+hex``: hex inside base64).
    """
    for encoding, match, decoded in _decoded_runs(text):
        found = [(kind, "") for kind, _, _ in credential_spans(decoded)]
        if layers > 1:
            inside = encoded_credential_spans(decoded, layers=layers - 1)
            found += [(kind, inner) for kind, _, _, inner in inside]
        for kind, inner in found:
            yield kind, match.start(), match.end(), f"{encoding}+{inner}" if inner else encoding


def _decoded_runs(text: str) -> Iterator[tuple[str, re.Match[str], str]]:
    for match in _HEX.finditer(text):
        decoded = _printable(binascii.unhexlify(match.group()))
        if decoded:
            yield "hex", match, decoded
    for match in _BASE64.finditer(text):
        run = match.group()
        try:
            raw = base64.b64decode(_padded(run.replace("-", "+").replace("_", "/")), validate=True)
        except (binascii.Error, ValueError):
            continue
        decoded = _printable(raw)
        if decoded:
            yield "base64", match, decoded


def _padded(run: str) -> str:
    run = run.rstrip("=")
    return run + "=" * (-len(run) % 4)


def _printable(raw: bytes) -> str:
    """The bytes as text if they read as printable ASCII (what an encoded key is), else ""."""
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        return ""
    return text if len(text) >= 8 and _PRINTABLE.fullmatch(text) else ""
