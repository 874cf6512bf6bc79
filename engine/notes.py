"""Notes: English sentences for JSON and logs that also carry a code and values, so a front end can say the same
thing in another language (bot/texts/locales: `note.<code>`). Used for what the engine assumed and why a layout
fails."""
from __future__ import annotations


class Note(str):
    __slots__ = ("code", "values")  # no per-note __dict__: about seven notes per answer
    code: str
    values: dict[str, object]

    def __new__(cls, text: str, code: str, **values: object) -> Note:
        note = str.__new__(cls, text)
        note.code = code
        note.values = values
        return note
