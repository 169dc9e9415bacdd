"""Pages name each read view in plain words; the API keeps the machine values."""

from django.template import Context, Template
from django.urls import reverse

from memory_core.read_policy import MODE_LABELS, MODES, mode_label
from mgp.protocol import RETURN_MODES


def test_every_return_mode_has_a_plain_words_label():
    assert set(MODE_LABELS) == set(MODES) >= set(RETURN_MODES)
    assert all(label and "_" not in label for label in MODE_LABELS.values())
    assert mode_label("metadata_only") == "details withheld, metadata only"


def test_templates_show_the_label_with_the_mode_on_hover():
    html = Template("{% load labels %}{{ mode|return_mode }}").render(Context({"mode": "summary"}))
    assert html == '<span title="summary">summary only</span>'


def test_the_memory_page_names_its_view_in_words(auditor_client, remember, marker):
    memory = remember(f"{marker}", sensitivity="confidential")
    page = auditor_client.get(reverse("admin:memory_core_memory_change", args=[memory.pk])).content.decode()
    assert '<span title="masked">masked, text hidden</span> (read rule read-confidential)' in page
    assert "(masked)" not in page


def test_the_api_keeps_the_machine_value(api, remember, marker):
    memory = remember(f"{marker}", sensitivity="restricted")
    body = api.get(f"/api/v1/memories/{memory.pk}/").json()
    assert body["return_mode"] == "metadata_only"
