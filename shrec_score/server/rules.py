"""What the service and the pages share: a refusal (status and JSON body) and the form's session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .store import Team

#: The form's session cookie (its value: a random id of a :class:`Session` kept by the server).
COOKIE = "shrec_session"


class Failed(Exception):
    """An upload answered with ``status`` and ``body`` (JSON) before it is stored."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(status)
        self.status = status
        self.body = body


def refusal(status: int, text: str) -> Failed:
    if status == 422:
        return Failed(status, {"errors": [{"file": "upload", "line": None, "message": text}]})
    return Failed(status, {"error": text})


@dataclass
class Session:
    csrf: str
    team: Team | None = None
