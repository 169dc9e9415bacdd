from tests.live import executor  # noqa: F401
