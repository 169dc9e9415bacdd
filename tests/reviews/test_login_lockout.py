"""The login lockout counts per name, not per spelling: every form the backend accepts shares one counter."""

import pytest
from django.contrib.auth.models import User

SPELLINGS = [
    "pm2",
    "pm2 ",
    "\uff50\uff4d\uff12",
    "\u3000PM2",
]  # plain, trailing space, full-width, case + space


@pytest.fixture
def pm2(db, settings):
    settings.CUSTODIAN_LOGIN_ATTEMPTS = 3
    return User.objects.create_user("pm2", password="right-password")


def _login(client, username: str, password: str):
    return client.post("/accounts/login/", {"username": username, "password": password})


@pytest.mark.parametrize("spelling", SPELLINGS[1:3])
def test_each_spelling_reaches_the_same_account(client, pm2, spelling):
    response = _login(client, spelling, "right-password")
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(pm2.pk)


@pytest.mark.parametrize("spelling", SPELLINGS[1:])
def test_a_locked_name_stays_locked_in_every_spelling(client, pm2, spelling):
    for _ in range(3):
        assert _login(client, "pm2", "wrong").status_code == 200
    assert _login(client, spelling, "right-password").status_code == 429


def test_failures_in_different_spellings_share_one_counter(client, pm2):
    for spelling in SPELLINGS[1:]:
        assert _login(client, spelling, "wrong").status_code == 200
    locked = _login(client, "pm2", "right-password")
    assert locked.status_code == 429 and "Too many failed sign-ins" in locked.content.decode()


def test_the_admin_signs_in_through_the_locked_login(client, pm2):
    """The admin's own login form has no lockout, so it is never served: posting to it signs no one in."""
    response = client.post("/admin/login/?next=/admin/", {"username": "pm2", "password": "right-password"})
    assert response.status_code == 302 and response["Location"] == "/accounts/login/?next=/admin/"
    assert "_auth_user_id" not in client.session
    assert client.get("/admin/", follow=True).redirect_chain[-1][0] == "/accounts/login/?next=%2Fadmin%2F"
