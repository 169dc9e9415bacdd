"""The keyboard shortcuts' markup: a static script (no inline code), rows it can open, the help it shows.

Their behaviour in a browser is in tests/browser/test_pm_journeys.py.
"""

import re

from django.contrib.staticfiles import finders


def test_pages_load_the_shortcuts_from_a_static_file_and_carry_no_inline_script(client, pm, factor_proposal):
    client.force_login(pm)
    for url in ["/review/", f"/review/proposals/{factor_proposal.pk}/", "/review/dashboard/"]:
        html = client.get(url).content.decode()
        assert '<script src="/static/reviews/keys.js" defer></script>' in html
        scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, flags=re.S)
        assert all("src=" in attrs and not body.strip() for attrs, body in scripts)
        assert 'id="shortcut-help"' in html and "<kbd>?</kbd>" in html
    assert finders.find("reviews/keys.js")


def test_each_queue_row_names_the_page_enter_opens(client, pm, factor_proposal):
    client.force_login(pm)
    html = client.get("/review/").content.decode()
    assert f'<tr data-href="/review/proposals/{factor_proposal.pk}/">' in html
    assert f'<a class="open" href="/review/proposals/{factor_proposal.pk}/">' in html


def test_the_decision_form_offers_the_three_kinds_the_keys_pick(client, pm, factor_proposal):
    client.force_login(pm)
    html = client.get(f"/review/proposals/{factor_proposal.pk}/").content.decode()
    for value in ["approve", "reject", "request_changes"]:  # a, r, c
        assert f'name="decision" value="{value}"' in html
    assert 'name="reason"' in html


def test_a_signed_out_visitor_gets_no_help_dialog(client):
    html = client.get("/accounts/login/").content.decode()
    assert 'id="shortcut-help"' not in html
