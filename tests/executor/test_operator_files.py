"""Operator commands that read a file or a name refuse hostile input in one line, writing nothing."""

import base64

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat
from django.core.management import CommandError, call_command

from executor.models import ReceiptChain
from tenancy.models import Delegation, Tenant

HOSTILE_LINES = {
    "deep nesting": "[" * 100_000 + "]" * 100_000,
    "NaN": "NaN",
    "10**400": "1" + "0" * 400,
    "1e400": "1e400",
    "a float jsonb would change": '{"model": "custodian.usernames", "fields": {"n": 1e16}}',
    "NUL": '{"model": "custodian.usernames", "fields": {"usernames": ["a\\u0000b"]}}',
    "lone surrogate": '"\\ud800"',
    "empty": "",
    "a number": "1",
}


def _file(tmp_path, text: str):
    path = tmp_path / "hostile.jsonl"
    path.write_text(text + "\n", encoding="utf-8")
    return str(path)


def _one_line(error: CommandError) -> str:
    message = str(error)
    assert "\n" not in message and message
    return message


@pytest.mark.parametrize("text", HOSTILE_LINES.values(), ids=HOSTILE_LINES.keys())
def test_import_tenant_refuses_a_hostile_file_in_one_line(db, tmp_path, text):
    with pytest.raises(CommandError) as refused:
        call_command("import_tenant", input=_file(tmp_path, text))
    assert _one_line(refused.value).startswith("Import refused")
    assert not Tenant.objects.exists()


@pytest.mark.parametrize("text", HOSTILE_LINES.values(), ids=HOSTILE_LINES.keys())
def test_verify_export_refuses_a_hostile_file_in_one_line(tmp_path, capsys, text):
    with pytest.raises(CommandError) as refused:
        call_command("verify_export", _file(tmp_path, text))
    _one_line(refused.value)
    err = capsys.readouterr().err
    assert err.startswith("BROKEN line") and err.count("\n") == 1


@pytest.mark.parametrize("text", HOSTILE_LINES.values(), ids=HOSTILE_LINES.keys())
def test_verify_receipts_refuses_a_hostile_checkpoint_file_in_one_line(db, tmp_path, text):
    with pytest.raises(CommandError) as refused:
        call_command("verify_receipts", checkpoint=_file(tmp_path, text))
    assert "checkpoint" in _one_line(refused.value)


@pytest.fixture
def signing_key(settings):
    raw = Ed25519PrivateKey.generate().private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    settings.CUSTODIAN_CHECKPOINT_KEY = base64.b64encode(raw).decode()


def test_checkpoint_receipts_refuses_an_unwritable_output_in_one_line(
    agent, applied_memory_factory, signing_key, tmp_path
):
    applied_memory_factory(agent)
    with pytest.raises(CommandError) as refused:
        call_command("checkpoint_receipts", output=str(tmp_path / "missing" / "checkpoints.jsonl"))
    assert "cannot write" in _one_line(refused.value)
    assert not ReceiptChain.objects.exclude(checkpoint=None).exists()


@pytest.mark.parametrize("command", ["grant_delegation", "revoke_delegation"])
@pytest.mark.parametrize(
    "options",
    [
        {"subject": "user:caf\udce9"},  # a Latin-1 byte in argv, decoded with surrogateescape
        {"tenant": "quant-desk\udcff"},
        {"agent": "research-agent\udcff"},
    ],
    ids=["subject", "tenant", "agent"],
)
def test_a_delegation_command_refuses_a_name_that_is_not_unicode(agent, command, options):
    before = Delegation.objects.count()
    arguments = {"tenant": agent.tenant.name, "agent": agent.agent.name, "subject": "user:alice", **options}
    with pytest.raises(CommandError) as refused:
        call_command(command, **arguments)
    assert "not valid Unicode" in _one_line(refused.value)
    assert Delegation.objects.count() == before


NAME = "quant-desk\udcff"  # a stray Latin-1 byte in argv, as Python decodes it (surrogateescape)
NAMED_COMMANDS = {
    "create_tenant": ([NAME], {}),
    "create_agent_token": ([], {"tenant": NAME, "agent": "research-agent"}),
    "revoke_agent_token": ([], {"tenant": NAME, "agent": "research-agent"}),
    "create_user_token": ([], {"user": NAME}),
    "grant_reviewer": ([], {"tenant": NAME, "user": "pm"}),
    "export_tenant": ([], {"tenant": NAME}),
    "registration": (["show"], {"tenant": NAME}),
}


@pytest.mark.parametrize(("command", "call"), NAMED_COMMANDS.items(), ids=NAMED_COMMANDS.keys())
def test_an_operator_command_refuses_a_name_that_is_not_unicode(agent, command, call):
    args, options = call
    tenants = Tenant.objects.count()
    with pytest.raises(CommandError) as refused:
        call_command(command, *args, **options)
    assert "not valid Unicode" in _one_line(refused.value)
    assert Tenant.objects.count() == tenants
