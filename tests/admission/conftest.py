"""Secrets an attacker would try to slip in: fresh each test, so a scan can only find this one."""

import secrets

import pytest


def aws_key() -> str:
    """An AWS access key id of the documented shape, never seen before."""
    return "AKIA" + secrets.token_hex(8).upper()


@pytest.fixture
def key() -> str:
    return aws_key()
