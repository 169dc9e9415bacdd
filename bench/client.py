"""A small keep-alive HTTP client for the load generator (one per thread).

``http.client`` rather than requests: less client CPU on a 2-core machine
where the load generator shares the cores with the server it measures.
"""

import http.client
import json
import time
from typing import Any


class ApiClient:
    def __init__(self, host: str, port: int, token: str = "") -> None:
        self.host, self.port = host, port
        self.headers = {"Content-Type": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self._connection: http.client.HTTPConnection | None = None

    def request(
        self, method: str, path: str, body: Any = None, headers: dict | None = None
    ) -> tuple[int, Any, float]:
        """Send one request; return (status, parsed JSON or None, seconds)."""
        payload = json.dumps(body).encode() if body is not None else None
        started = time.perf_counter()
        for attempt in (1, 2):
            connection = self._connection or http.client.HTTPConnection(self.host, self.port, timeout=60)
            try:
                connection.request(method, path, body=payload, headers={**self.headers, **(headers or {})})
                response = connection.getresponse()
                raw = response.read()
                break
            except (ConnectionError, http.client.HTTPException):
                connection.close()
                self._connection = None
                if attempt == 2:
                    raise
        self._connection = None if response.will_close else connection
        elapsed = time.perf_counter() - started
        content_type = response.getheader("Content-Type", "")
        data = json.loads(raw) if raw and "json" in content_type else None
        return response.status, data, elapsed
