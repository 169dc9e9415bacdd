"""What the recall tests do over the API: search as the agent's client would, read what was served."""


def search(api, query="", **body) -> dict:
    """``POST /api/v1/recall/search``; the search must succeed; its body."""
    response = api.post("/api/v1/recall/search", {"query": query, **body}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def served(body: dict) -> list[str]:
    """The ids served, in order."""
    return [item["memory"]["memory_id"] for item in body["results"]]


def item_of(body: dict, memory) -> dict:
    """The item serving ``memory``."""
    return next(item for item in body["results"] if item["memory"]["memory_id"] == str(memory.id))
