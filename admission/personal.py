"""Personal data: emails, phone numbers, payment cards, IBANs and national ids, with their spans.

Cheap patterns find candidates; a checksum or a numbering plan confirms them (Luhn for
cards, ISO 13616 for IBANs, the SSA's and HMRC's allocation rules for SSNs and NINOs,
``phonenumbers`` for phone numbers), so a long order number or a date is not a card.
"""

import re
from collections.abc import Callable, Iterator

import phonenumbers
from stdnum import iban, luhn
from stdnum.us import ssn

EMAIL = "email"
PHONE = "phone"
PAYMENT_CARD = "payment_card"
IBAN = "iban"
NATIONAL_ID = "national_id"
KINDS = (EMAIL, PHONE, PAYMENT_CARD, IBAN, NATIONAL_ID)

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_CARD = re.compile(r"(?<![\w-])[2-6]\d{3}(?:[ -]?\d){9,15}(?![\w-])")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b")
_SSN = re.compile(r"(?<![\w-])\d{3}-\d{2}-\d{4}(?![\w-])")
# A phone number as people write one: optional +country, digits in groups, nothing glued on.
_PHONE = re.compile(
    r"(?<![\w+.-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,4}){1,4}(?![\w-])"
)
_NINO = re.compile(r"\b([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]) ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b")
_NINO_UNUSED_PREFIXES = {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}
_DIGITS = re.compile(r"\d")
PHONE_REGION = "US"  # how a number written without +country code is read


def personal_spans(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield ``(kind, start, end)`` for each piece of personal data in ``text``."""
    if "@" in text:
        for match in _EMAIL.finditer(text):
            yield EMAIL, match.start(), match.end()
    if len(_DIGITS.findall(text, 0, 4096)) < 7:  # no number long enough to be any of the rest
        return
    for kind, pattern, valid in _NUMBERED:
        for match in pattern.finditer(text):
            if valid(match):
                yield kind, match.start(), match.end()
    for match in _PHONE.finditer(text):
        if _phone(match):
            yield PHONE, match.start(), match.end()


def _phone(match: re.Match[str]) -> bool:
    if len(_DIGITS.findall(match.group())) < 7:
        return False
    try:
        number = phonenumbers.parse(match.group(), PHONE_REGION)
    except phonenumbers.NumberParseException:
        return False
    return phonenumbers.is_valid_number(number)


def _card(match: re.Match[str]) -> bool:
    digits = re.sub(r"\D", "", match.group())
    return 13 <= len(digits) <= 19 and luhn.is_valid(digits)


def _iban(match: re.Match[str]) -> bool:
    return iban.is_valid(match.group())


def _ssn(match: re.Match[str]) -> bool:
    return ssn.is_valid(match.group())


def _nino(match: re.Match[str]) -> bool:
    return match.group(1) not in _NINO_UNUSED_PREFIXES


_NUMBERED: tuple[tuple[str, re.Pattern[str], Callable[[re.Match[str]], bool]], ...] = (
    (PAYMENT_CARD, _CARD, _card),
    (IBAN, _IBAN, _iban),
    (NATIONAL_ID, _SSN, _ssn),
    (NATIONAL_ID, _NINO, _nino),
)


def redact_personal(text: str, mask: str) -> str:
    """Return ``text`` with each personal-data span replaced by ``mask``."""
    spans = sorted((start, end) for _, start, end in personal_spans(text))
    if not spans:
        return text
    parts, at = [], 0
    for start, end in spans:
        if start >= at:
            parts.append(text[at:start])
            parts.append(mask)
            at = end
        elif end > at:
            at = end
    parts.append(text[at:])
    return "".join(parts)
