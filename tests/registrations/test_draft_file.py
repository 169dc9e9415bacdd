"""``registration draft --file``: a hostile document is one clear line, nothing written, no traceback."""

import copy
import json

import pytest
from django.core.management import CommandError

from registrations.document import DEFAULT_DOCUMENT
from registrations.models import Registration
from tests.registrations.conftest import command, with_sector


def _document_with(path: list[str], literal: str) -> str:
    """The default document as JSON text, with the raw ``literal`` spliced in at ``path``."""
    document = copy.deepcopy(DEFAULT_DOCUMENT)
    node = document
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = "__HERE__"
    return json.dumps(document).replace('"__HERE__"', literal)


LABEL = ["types", "semantic_fact", "labels", "fact_key"]
MAXIMUM = ["types", "semantic_fact", "schema", "properties", "statement", "maxLength"]
HOSTILE_FILES = {
    "deep nesting": "[" * 100_000 + "]" * 100_000,
    "deep but parseable": _document_with(LABEL, "[" * 900 + "]" * 900),
    "NUL in a label": _document_with(LABEL, '"fact\\u0000key"'),
    "lone surrogate in a label": _document_with(LABEL, '"fact \\ud800"'),
    "10**400": _document_with(MAXIMUM, "1" + "0" * 400),
    "2**53 as a float": _document_with(MAXIMUM, "9007199254740992.0"),
    "NaN": _document_with(MAXIMUM, "NaN"),
    "Infinity": _document_with(MAXIMUM, "Infinity"),
    "1e400": _document_with(MAXIMUM, "1e400"),
    "invalid UTF-8": b'{"format": 1, "types": "\xff\xfe"}',
    "not JSON": "{'format': 1}",
}


def _draft(tmp_path, text: str | bytes) -> CommandError:
    path = tmp_path / "draft.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    with pytest.raises(CommandError) as refused:
        command("draft", "--tenant", "quant-desk", "--by", "operator", "--file", str(path))
    return refused.value


@pytest.mark.parametrize("text", HOSTILE_FILES.values(), ids=HOSTILE_FILES.keys())
def test_a_hostile_draft_file_is_one_clear_line_and_writes_nothing(operator, tmp_path, text):
    before = Registration.objects.count()
    error = _draft(tmp_path, text)
    assert "\n" not in str(error) and str(error).startswith("cannot read the document")
    assert Registration.objects.count() == before


@pytest.mark.parametrize(
    "pattern",
    [r"^(a+)+$", r"^(a*)*b", r"(\w+\s?)+$", r"^(ab|a)+$", r"(.*a){12}", r"(a|a)*", r"^(\d+)*$", r"(x+x+)+y"],
)
def test_a_pattern_that_can_backtrack_without_bound_is_refused_naming_its_path(operator, tmp_path, pattern):
    document = with_sector()
    document["types"]["semantic_fact"]["schema"]["properties"]["sector"]["pattern"] = pattern
    error = _draft(tmp_path, json.dumps(document))
    assert "/types/semantic_fact/schema/properties/sector/pattern" in str(error)
    assert not Registration.objects.filter(status=Registration.Status.DRAFT).exists()


@pytest.mark.parametrize("pattern", [r"^(a)\1$", "a" * 2000], ids=["back-reference", "2000 characters"])
def test_a_back_reference_or_an_over_long_pattern_is_refused(operator, tmp_path, pattern):
    document = with_sector()
    document["types"]["semantic_fact"]["schema"]["properties"]["sector"]["pattern"] = pattern
    error = _draft(tmp_path, json.dumps(document))
    assert "/types/semantic_fact/schema/properties/sector/pattern" in str(error)


@pytest.mark.parametrize(
    "pattern",
    [r"^[A-Z]{2,4}$", r"^\d{4}-\d{2}-\d{2}$", r"^(ab)+$", r"^[a-z]+(-[a-z]+)?$", r"\S", r"^(\d{2})+$"],
)
def test_a_linear_pattern_is_accepted(operator, tmp_path, pattern):
    document = with_sector()
    document["types"]["semantic_fact"]["schema"]["properties"]["sector"]["pattern"] = pattern
    path = tmp_path / "draft.json"
    path.write_text(json.dumps(document))
    out = command("draft", "--tenant", "quant-desk", "--by", "operator", "--file", str(path))
    assert out.startswith("candidate ")


ADMIN_HOSTILE = {
    k: HOSTILE_FILES[k] for k in ("deep nesting", "NUL in a label", "10**400", "NaN", "Infinity")
}
ADMIN_HOSTILE["a catastrophic pattern"] = json.dumps(with_sector()).replace(
    '"maxLength": 100}', '"maxLength": 100, "pattern": "^(a+)+$"}'
)


@pytest.mark.parametrize("text", ADMIN_HOSTILE.values(), ids=ADMIN_HOSTILE.keys())
def test_the_admin_refuses_a_hostile_draft_document_as_a_form_error(agent, text):
    from django.contrib.auth.models import Permission
    from django.test import Client

    from registrations.services import draft_registration
    from tests.factories import make_person

    candidate = draft_registration(tenant_id=agent.tenant.pk, document=DEFAULT_DOCUMENT, created_by="op")
    person = make_person("admin-op", agent.tenant)
    person.is_staff = True
    person.save(update_fields=["is_staff"])
    for codename in ("change_registration", "view_registration"):
        person.user_permissions.add(Permission.objects.get(codename=codename))
    client = Client(raise_request_exception=False)
    client.force_login(person)
    response = client.post(f"/admin/registrations/registration/{candidate.pk}/change/", {"document": text})
    assert response.status_code == 200 and "errornote" in response.content.decode()
    candidate.refresh_from_db()
    assert candidate.document == DEFAULT_DOCUMENT
