"""The detectors on their own: what each finds, where, and what it leaves alone."""

import base64
import binascii

import pytest

from admission import DETECTORS, detector_versions, redact_personal, scan
from core.rules import read_rule_document
from proposals.policy.rules import fingerprint, load_rule_set
from tests.admission.conftest import aws_key


def _kinds(sources) -> list[tuple[str, str, str]]:
    return [(f.detector, f.field, f.kind) for f in scan(sources).findings]


def test_each_detector_has_a_name_and_a_version():
    assert set(detector_versions()) == {"credentials", "personal_data", "injection"}
    assert all(detector.version for detector in DETECTORS.values())
    assert "detect-secrets-1.5.0" in detector_versions()["credentials"]


def test_a_detector_version_is_part_of_the_policy_fingerprint(settings):
    rules = read_rule_document(settings.CUSTODIAN_POLICY_FILE).fingerprint
    assert load_rule_set(settings.CUSTODIAN_POLICY_FILE).fingerprint == fingerprint(rules)
    bumped = {**detector_versions(), "injection": "2"}
    assert fingerprint(rules, bumped) != fingerprint(rules)
    assert fingerprint(rules) != rules


@pytest.mark.parametrize(
    ("secret", "kind"),
    [
        (aws_key(), "aws_access_key"),
        ("ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "github_token"),
        ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "slack_token"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----", "private_key"),
        ('db_password = "correct-horse-battery"', "secret_keyword"),
        ("https://admin:s3cr3tpass@db.internal:5432", "basic_auth_credentials"),
    ],
)
def test_credentials_are_found_by_kind(secret, kind):
    assert ("credentials", "content.note", kind) in _kinds({"content": {"note": f"see {secret} here"}})


def test_an_encoded_credential_names_its_encoding():
    key = aws_key()
    encodings = {
        "base64": base64.b64encode(key.encode()).decode(),
        "hex": binascii.hexlify(key.encode()).decode(),
        "base64+hex": base64.b64encode(binascii.hexlify(key.encode())).decode(),
    }
    for encoding, text in encodings.items():
        [finding] = scan({"v": text}).findings
        assert (finding.kind, finding.encoding, finding.start, finding.end) == (
            "aws_access_key",
            encoding,
            0,
            len(text),
        )


def test_a_split_credential_names_both_fields_and_its_halves_alone_are_nothing():
    key = aws_key()
    [finding] = scan({"m": {"a": key[:9], "b": key[9:]}}).findings
    assert (finding.field, finding.encoding) == ("m.a + m.b", "joined")
    assert scan({"m": {"a": key[:9]}}).findings == ()


def test_a_secret_json_key_is_withheld_from_the_stored_paths():
    key = aws_key()
    result = scan({"content": {key: {"inner": "x"}}})
    assert result.contains_secret and result.secret_keys == {key}
    assert key not in repr(result.stored())


def test_personal_data_spans_are_exact():
    text = "write to bob@example.com or +1 415-555-2671"
    found = {(f.kind, text[f.start : f.end]) for f in scan({"t": text}).findings}
    assert found == {("email", "bob@example.com"), ("phone", "+1 415-555-2671")}


@pytest.mark.parametrize(
    "text",
    [
        "card 4111 1111 1111 1112",  # fails Luhn
        "SSN 000-12-3456",  # never issued
        "IBAN GB00 WEST 1234 5698 7654 32",  # bad check digits
        "NINO BG 12 34 56 C",  # unused prefix
        "run 20261130-041200, sha 9f2c4e7a1b3d5f6081726354a9b8c7d6e5f40312, id 5b1f8a52-7d1e-4c5e",
        "IC fell from 0.031 to 0.012 over 1,234,567 rows",
    ],
)
def test_near_misses_are_not_personal_data(text):
    assert scan({"t": text}).personal_data == []


def test_redaction_masks_every_personal_span_and_keeps_the_rest():
    text = "Mail ann@example.org, IBAN DE89 3704 0044 0532 0130 00, thanks"
    assert redact_personal(text, "***") == "Mail ***, IBAN ***, thanks"


@pytest.mark.parametrize(
    "text",
    [
        "The emoji family 👨\u200d👩\u200d👧 uses joiners",
        "Please disregard the noise in Q3 data",
        "We discussed the system design and prompt engineering",
        '{"name": "momentum_12_1", "value": 0.012}',
    ],
)
def test_ordinary_text_is_not_injection(text):
    assert not scan({"t": text}).injection_suspected


def test_fields_without_strings_cost_no_scan():
    assert scan({"content": {"n": 1, "flags": [True, None, 2.5]}}).findings == ()
