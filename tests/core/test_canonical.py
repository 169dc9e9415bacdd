"""The fast path of canonical_json must produce the reference RFC 8785 bytes, always."""

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from core.canonical import canonical_json
from proposals.models import Proposal

pytestmark = pytest.mark.mode_independent  # pure functions: no database, no broker

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(), children, max_size=5),
    max_leaves=30,
)


def _exact_doubles(value):
    """Integers beyond 2**53 that a double holds exactly, as that double (RFC 8785 numbers are doubles)."""
    if isinstance(value, dict):
        return {key: _exact_doubles(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_exact_doubles(item) for item in value]
    if type(value) is int and abs(value) > 2**53 - 1 and int(float(value)) == value:
        return float(value)
    return value


def _reference(value):
    try:
        return rfc8785.dumps(_exact_doubles(value))
    except Exception as exc:
        return type(exc)


def _ours(value):
    try:
        return canonical_json(value)
    except Exception as exc:
        return type(exc)


@settings(max_examples=1500, deadline=None)
@given(json_values)
def test_canonical_json_equals_the_reference_encoder(value):
    assert _ours(value) == _reference(value)


@pytest.mark.parametrize(
    "value",
    [
        {"\U0001f600": 1, "\ufb01": 2, "a": 3},  # UTF-16 order differs from code point order
        {"x": 1.0, "y": 1e-7, "z": 1e21},  # ES6 number formatting
        [0.0001, 0.00009, 1e16 - 2, 1e16, -0.0, 0.1 + 0.2, 2.0**53, 2.0**53 + 2, 0.7],
        {"big": 2**53, "small": -(2**53)},  # beyond I-JSON's safe integers
        {"s": 'tab\t nul\x00 del\x7f quote" backslash\\ é \u2028'},
        ["\ud800"],  # a lone surrogate
        {"action": Proposal.Action.CREATE, Proposal.Status.RELEASED: 1},  # str subclasses
    ],
)
def test_edge_cases_match_the_reference_encoder(value):
    assert _ours(value) == _reference(value)


@pytest.mark.parametrize("number", [2**53, 10**16, -(10**16), 2**60, 2**1000])
def test_an_integer_a_double_holds_exactly_hashes_as_that_double(number):
    assert (
        canonical_json({"x": number})
        == canonical_json({"x": float(number)})
        == rfc8785.dumps({"x": float(number)})
    )


@pytest.mark.parametrize("number", [2**53 + 1, -(2**53 + 1), 10**16 + 1, 10**400])
def test_an_integer_no_double_holds_is_refused(number):
    with pytest.raises(rfc8785.IntegerDomainError):
        canonical_json({"x": number})
