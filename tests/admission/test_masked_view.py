"""The masked view hides every string and redacts the personal data in what it keeps."""

from memory_core.return_modes import MASK


def test_masked_view_redacts_personal_data_in_keys_and_numbers(agent, api, remember):
    content = {
        "statement": "Alice's contacts for the weekly summary",
        "preference_key": "contacts",
        "preference_value": {"bob@example.com": 4155552671, "cards": [4111111111111111], "count": 3},
    }
    memory = remember("unused", content=content, sensitivity="confidential")
    response = api.get(f"/api/v1/memories/{memory.pk}/")  # not acting for Alice: masked
    body = response.json()
    assert body["return_mode"] == "masked", body
    shown = body["memory"]["content"]
    assert shown["preference_value"] == {MASK: MASK, "cards": [MASK], "count": 3}
    text = response.content.decode()
    assert "bob@example.com" not in text and "4155552671" not in text and "4111111111111111" not in text
