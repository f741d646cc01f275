"""A request the service refuses: its HTTP status, what is wrong and what to do, for a page or a script alike."""

from __future__ import annotations


class Refusal(Exception):
    """Refused, with a message that names the problem (``fix``: what to do about it). Never a traceback."""

    def __init__(self, status: int, message: str, *, fix: str | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.fix = fix

    def as_json(self) -> dict:
        return {"error": self.message, **({"fix": self.fix} if self.fix else {})}
