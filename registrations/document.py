"""The registration document: its shape, its fingerprint, and the built-in default.

A registration is data (JSON), one entry per memory type::

    {"format": 1,
     "types": {"preference": {
         "schema": {...strict JSON Schema of the content...},
         "labels": {"statement": "Statement", ...},
         "ranking_weights": "2026-12-15.1" | null,     # null: the deployment's default
         "activation": {"decay": 0.5, "importance": 0.0,
                        "dormancy": {"threshold": -2.0, "days": 30}},
         "capacity": {"per_subject_scope": 200 | null},
         "rules": ["auto-owner-preference", ...]}}}

Later maintenance jobs (activation, dormancy, compaction) read their
parameters from here. The built-in default (version 1 of every tenant)
is today's content serializers written as JSON Schema.
"""

import copy
import re
import re._parser as regex_parser  # the stdlib's own parse tree: what ``re`` will run
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from core import strict_json
from core.canonical import digest
from registrations.errors import InvalidRegistration

FORMAT = 1
DEFAULT_VERSION = 1
# The memory types a registration must cover (memory_core.models.Memory.Type; this app sits below it).
MEMORY_TYPES = (
    "profile",
    "preference",
    "episodic_event",
    "semantic_fact",
    "procedural_rule",
    "relationship",
    "checkpoint_pointer",
    "artifact_summary",
)
_ENTRY_KEYS = {"schema", "labels", "ranking_weights", "activation", "capacity", "rules"}
# Sections an entry may carry or leave out (added later; leaving them out keeps old fingerprints).
# observe: {"keys": [...]}: structured observation fields with these keys become key/value
# candidates of this type (observations.extraction); only types with a key/value pair of fields.
# links: {"relations": [...]}: the relations a memory of this type may link out by (an allowlist).
# dreaming: {"mode": ...}: how Bounded Dreaming's low-risk actions on this type are routed
# (proposal_only when left out: every action waits for a reviewer).
_OPTIONAL_ENTRY_KEYS = {"observe", "links", "dreaming"}
DREAMING_MODES = ("auto", "policy_gated", "proposal_only")
DEFAULT_DREAMING_MODE = "proposal_only"
LINK_RELATIONS = ("supports", "contradicts", "supersedes", "about", "same_as")
OBSERVE_KEY_FIELDS = {
    "profile": ("profile_key", "profile_value"),
    "preference": ("preference_key", "preference_value"),
    "semantic_fact": ("fact_key", "fact_value"),
}
MAX_OBSERVE_KEYS = 200
# A document's JSON (schemas nest) may be this deep; its patterns this long.
MAX_DEPTH = 64
MAX_PATTERN_LENGTH = 1000
# Keywords a registered schema may use; $ref, composition and conditionals are left out so
# the additive rule can be judged keyword by keyword (see registrations.evolution).
SCHEMA_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "title",
        "description",
        "format",
        "pattern",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
        "uniqueItems",
    }
)

# --- the built-in default: today's serializers (memory_core.content) ----------------

_DATETIME = r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$"


def _text(max_length: int) -> dict:
    return {"type": "string", "minLength": 1, "maxLength": max_length}


def _strings(max_length: int, **extra: Any) -> dict:
    return {"type": "array", "items": _text(max_length), "maxItems": 50, **extra}


_ANY: dict = {}
_NUMBER = {"type": "number"}
_WHEN = {"type": "string", "pattern": _DATETIME}
_COMMON = {
    "statement": {"type": "string", "minLength": 1, "maxLength": 4000, "pattern": r"\S"},
    "summary": _text(1000),
    "keywords": _strings(100, uniqueItems=True),
    # Fields an open-content client (MGP) sends that the type does not declare, kept as pairs.
    "attributes": {
        "type": "array",
        "maxItems": 50,
        "items": {
            "type": "object",
            "properties": {"key": _text(200), "value": _ANY},
            "required": ["key"],
            "additionalProperties": False,
        },
    },
}
_FIELDS: dict[str, dict[str, dict]] = {
    "profile": {"profile_key": _text(200), "profile_value": _ANY},
    "preference": {"preference": _text(1000), "preference_key": _text(200), "preference_value": _ANY},
    "episodic_event": {
        "event": _text(2000),
        "occurred_at": _WHEN,
        "outcome": _text(2000),
        "participants": _strings(200),
        "run_id": _text(200),
        "session_id": _text(200),
        "task_id": _text(200),
    },
    "semantic_fact": {
        "fact": _text(2000),
        "fact_key": _text(200),
        "fact_value": _ANY,
        "factor": _text(200),
        "universe": _text(200),
        "horizon": _text(100),
        "metric": _text(100),
        "value": _NUMBER,
        "conclusion": _text(2000),
    },
    "procedural_rule": {"rule": _text(2000), "trigger": _text(1000), "action": _text(1000)},
    "relationship": {
        "subject_entity": _text(500),
        "relation": _text(200),
        "object_entity": _text(500),
        "valid_from": _WHEN,
        "valid_to": _WHEN,
    },
    "checkpoint_pointer": {"checkpoint_id": _text(200), "uri": _text(2000), "run_id": _text(200)},
    "artifact_summary": {
        "artifact_id": _text(200),
        "artifact_kind": _text(100),
        "title": _text(500),
        "uri": _text(2000),
    },
}
_LABELS = {
    "statement": "Statement",
    "summary": "Summary",
    "attributes": "Other fields",
    "factor": "Factor",
    "universe": "Universe",
    "horizon": "Horizon",
    "metric": "Metric",
    "value": "Value",
    "conclusion": "Conclusion",
    "preference_key": "Preference",
    "preference_value": "Preferred",
    "fact_key": "Fact",
    "fact_value": "Value",
    "occurred_at": "When",
    "run_id": "Run",
    "session_id": "Session",
    "task_id": "Task",
    "uri": "Link",
}
# The default rules.yaml rules that name a type.
_RULES = {
    "preference": ["auto-owner-preference"],
    "episodic_event": ["gated-episodic"],
    "semantic_fact": ["review-shared-facts"],
    "procedural_rule": ["review-shared-facts"],
}


def _default_entry(memory_type: str) -> dict:
    properties = {**_COMMON, **_FIELDS[memory_type]}
    return {
        "schema": {
            "type": "object",
            "properties": copy.deepcopy(properties),
            "required": ["statement"],
            "additionalProperties": False,
        },
        "labels": {key: label for key, label in _LABELS.items() if key in properties},
        "ranking_weights": None,
        "activation": {"decay": 0.5, "importance": 0.0, "dormancy": {"threshold": -2.0, "days": 30}},
        "capacity": {"per_subject_scope": None},
        "rules": list(_RULES.get(memory_type, [])),
        # Dreaming's merges record their lineage as survivor -supersedes-> duplicate.
        "links": {"relations": ["supersedes"]},
    }


DEFAULT_DOCUMENT: dict = {
    "format": FORMAT,
    "types": {memory_type: _default_entry(memory_type) for memory_type in MEMORY_TYPES},
}


def fingerprint(document: dict) -> str:
    """Return the SHA-256 of the document's canonical JSON (RFC 8785), as policy rule sets do."""
    return digest(document)


DEFAULT_FINGERPRINT = fingerprint(DEFAULT_DOCUMENT)


def check_document(document: Any) -> dict:
    """Return ``document`` if it is a well-formed, strict registration; raise ``InvalidRegistration``.

    Every problem found is listed (``problems``: path and message), not only the first.
    """
    problems = list(_document_problems(document))
    if problems:
        raise InvalidRegistration(problems=problems)
    return document


def _document_problems(document: Any):
    try:
        strict_json.check(document, max_depth=MAX_DEPTH)
    except strict_json.JSONRefused as refused:
        yield _problem("", str(refused))
        return
    if not isinstance(document, dict) or set(document) != {"format", "types"}:
        yield _problem("", "a registration is an object with exactly 'format' and 'types'")
        return
    if document["format"] != FORMAT:
        yield _problem("/format", f"format must be {FORMAT}")
    types = document["types"]
    if not isinstance(types, dict):
        yield _problem("/types", "must be an object")
        return
    for missing in sorted(set(MEMORY_TYPES) - set(types)):
        yield _problem(f"/types/{missing}", "every memory type must be registered")
    for unknown in sorted(set(types) - set(MEMORY_TYPES)):
        yield _problem(f"/types/{unknown}", "not a memory type")
    for memory_type in sorted(set(types) & set(MEMORY_TYPES)):
        yield from _entry_problems(f"/types/{memory_type}", types[memory_type])


def _entry_problems(path: str, entry: Any):
    if not isinstance(entry, dict) or not _ENTRY_KEYS <= set(entry) <= _ENTRY_KEYS | _OPTIONAL_ENTRY_KEYS:
        yield _problem(
            path,
            f"an entry has exactly the keys {sorted(_ENTRY_KEYS)}"
            f", and may have {sorted(_OPTIONAL_ENTRY_KEYS)}",
        )
        return
    if "observe" in entry:
        yield from _observe_problems(f"{path}/observe", path.rsplit("/", 1)[-1], entry["observe"])
    if "links" in entry:
        yield from _links_problems(f"{path}/links", entry["links"])
    if "dreaming" in entry:
        dreaming = entry["dreaming"]
        if (
            not isinstance(dreaming, dict)
            or set(dreaming) != {"mode"}
            or dreaming["mode"] not in DREAMING_MODES
        ):
            yield _problem(
                f"{path}/dreaming", f"an object with exactly 'mode', one of {list(DREAMING_MODES)}"
            )
    schema = entry["schema"]
    yield from _schema_problems(f"{path}/schema", schema, root=True)
    labels = entry["labels"]
    if not isinstance(labels, dict) or not all(
        isinstance(v, str) and 0 < len(v) <= 100 for v in labels.values()
    ):
        yield _problem(f"{path}/labels", "labels map content keys to non-empty text (≤ 100 characters)")
    elif isinstance(schema, dict) and set(labels) - set(schema.get("properties", {})):
        yield _problem(f"{path}/labels", "labels may only name registered properties")
    if entry["ranking_weights"] is not None and not isinstance(entry["ranking_weights"], str):
        yield _problem(f"{path}/ranking_weights", "a ranking weights version, or null")
    yield from _activation_problems(f"{path}/activation", entry["activation"])
    capacity = entry["capacity"]
    if not isinstance(capacity, dict) or set(capacity) != {"per_subject_scope"}:
        yield _problem(f"{path}/capacity", "an object with exactly 'per_subject_scope'")
    elif capacity["per_subject_scope"] is not None and not _positive_int(capacity["per_subject_scope"]):
        yield _problem(f"{path}/capacity/per_subject_scope", "a positive integer, or null (unbounded)")
    rules = entry["rules"]
    if not isinstance(rules, list) or not all(isinstance(rule, str) and rule for rule in rules):
        yield _problem(f"{path}/rules", "a list of policy rule ids")


def _observe_problems(path: str, memory_type: str, observe: Any):
    if memory_type not in OBSERVE_KEY_FIELDS:
        yield _problem(path, f"only {sorted(OBSERVE_KEY_FIELDS)} observe key/value fields")
        return
    if not isinstance(observe, dict) or set(observe) != {"keys"}:
        yield _problem(path, "an object with exactly 'keys'")
        return
    keys = observe["keys"]
    if (
        not isinstance(keys, list)
        or len(keys) > MAX_OBSERVE_KEYS
        or len(set(map(str, keys))) != len(keys)
        or not all(isinstance(key, str) and 0 < len(key) <= 200 for key in keys)
    ):
        yield _problem(
            f"{path}/keys", f"at most {MAX_OBSERVE_KEYS} distinct non-empty keys (≤ 200 characters)"
        )


def _links_problems(path: str, links: Any):
    if not isinstance(links, dict) or set(links) != {"relations"}:
        yield _problem(path, "an object with exactly 'relations'")
        return
    relations = links["relations"]
    if not isinstance(relations, list) or not all(
        r in LINK_RELATIONS for r in relations if isinstance(r, str)
    ):
        yield _problem(f"{path}/relations", f"a list drawn from {list(LINK_RELATIONS)}")
    elif len(set(relations)) != len(relations) or not all(isinstance(r, str) for r in relations):
        yield _problem(f"{path}/relations", "distinct relation names")


def _activation_problems(path: str, activation: Any):
    if not isinstance(activation, dict) or set(activation) != {"decay", "importance", "dormancy"}:
        yield _problem(path, "an object with exactly 'decay', 'importance' and 'dormancy'")
        return
    if not _number(activation["decay"]) or not 0 < activation["decay"] <= 1:
        yield _problem(f"{path}/decay", "a number in (0, 1]")
    if not _number(activation["importance"]) or not 0 <= activation["importance"] <= 1:
        yield _problem(f"{path}/importance", "a number in [0, 1]")
    dormancy = activation["dormancy"]
    if not isinstance(dormancy, dict) or set(dormancy) != {"threshold", "days"}:
        yield _problem(f"{path}/dormancy", "an object with exactly 'threshold' and 'days'")
    else:
        if not _number(dormancy["threshold"]):
            yield _problem(f"{path}/dormancy/threshold", "a number (an activation)")
        if not _positive_int(dormancy["days"]):
            yield _problem(f"{path}/dormancy/days", "a positive integer")


def _schema_problems(path: str, schema: Any, *, root: bool = False):
    """A strict schema: known keywords only, objects closed, every property typed or open by intent."""
    if not isinstance(schema, dict):
        yield _problem(path, "a schema is an object")
        return
    if unknown := sorted(set(schema) - SCHEMA_KEYWORDS):
        yield _problem(path, f"keywords not allowed in a registration: {unknown}")
    if root:
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as error:
            yield _problem(path, f"not a valid JSON Schema: {error.message}")
            return
        if schema.get("type") != "object" or schema.get("additionalProperties") is not False:
            yield _problem(path, "content is a closed object (type object, additionalProperties false)")
        statement = schema.get("properties", {}).get("statement", {})
        if "statement" not in schema.get("required", []) or statement.get("type") != "string":
            yield _problem(f"{path}/properties/statement", "every type requires a string 'statement'")
    if schema.get("type") == "object" and schema.get("additionalProperties") is not False:
        yield _problem(path, "nested objects are closed too (additionalProperties false)")
    if isinstance(schema.get("pattern"), str):
        yield from _pattern_problems(f"{path}/pattern", schema["pattern"])
    for name, child in (schema.get("properties") or {}).items():
        yield from _schema_problems(f"{path}/properties/{name}", child)
    if isinstance(schema.get("items"), dict):
        yield from _schema_problems(f"{path}/items", schema["items"])


def _pattern_problems(path: str, pattern: str):
    """A pattern runs on every validation once published: it must compile and run in linear time.

    Python's ``re`` backtracks, so a quantified group that can match the same
    text in more than one way (``^(a+)+$``, ``(ab|a)*``) takes exponential time
    on a near miss. Refused: a variable quantifier or a multi-character
    alternation inside a group repeated more than once, and back-references.
    (Alternations of single characters, ``(a|b)+``, are a character class to ``re``.)
    """
    if len(pattern) > MAX_PATTERN_LENGTH:
        yield _problem(path, f"a pattern is at most {MAX_PATTERN_LENGTH} characters")
        return
    try:
        re.compile(pattern)
        tree = regex_parser.parse(pattern)
    except (re.error, RecursionError, OverflowError) as error:
        yield _problem(path, f"not a valid regular expression: {error}")
        return
    unsafe = _backtracking(list(tree), repeated=False)
    if unsafe:
        yield _problem(path, f"{unsafe} can backtrack without bound; write it without")


_REPEATS = {regex_parser.MAX_REPEAT, regex_parser.MIN_REPEAT, regex_parser.POSSESSIVE_REPEAT}
_GROUPS = {regex_parser.SUBPATTERN, regex_parser.ATOMIC_GROUP, regex_parser.ASSERT, regex_parser.ASSERT_NOT}
_REFERENCES = {regex_parser.GROUPREF, regex_parser.GROUPREF_EXISTS}


def _backtracking(items: list, *, repeated: bool) -> str:
    """Name the first construct in a parsed pattern that makes matching super-linear, or return ""."""
    for op, argument in items:
        if op in _REPEATS:
            low, high, body = argument
            if repeated and low != high:
                return "a quantifier inside a repeated group"
            found = _backtracking(list(body), repeated=repeated or high > 1)
        elif op is regex_parser.BRANCH:
            if repeated:
                return "an alternation inside a repeated group"
            found = next((f for alt in argument[1] if (f := _backtracking(list(alt), repeated=False))), "")
        elif op in _GROUPS:
            found = _backtracking(list(argument[-1]), repeated=repeated)
        elif op in _REFERENCES:
            return "a back-reference"
        else:
            continue
        if found:
            return found
    return ""


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _problem(path: str, message: str) -> dict:
    return {"path": path or "/", "message": message}
