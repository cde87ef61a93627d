"""What a tool returns on success.

A tool may return a plain ``str`` (one text part) or an :class:`Output`,
which holds text and image parts for the model and optional JSON metadata
for programs (UIs, hooks, tests).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Union


@dataclass(frozen=True)
class Text:
    """A text part."""

    text: str


@dataclass(frozen=True)
class Image:
    """An image part, for models that accept images."""

    #: IANA media type, e.g. ``image/png``.
    media_type: str
    #: The encoded image bytes.
    data: bytes


Content = Union[Text, Image]


class Output:
    """A successful result: ``Output("3 words", metadata={"words": 3})``.

    The positional arguments are text parts, in order; ``metadata`` is one
    JSON-serializable value that the model does not see. The ``with_*``
    methods append and return the output, so they chain.
    """

    __slots__ = ("content", "metadata")

    def __init__(self, *texts: str, metadata: Any = None) -> None:
        self.content: list[Content] = []
        for text in texts:
            self.with_text(text)
        #: One JSON value for programs, or None.
        self.metadata: Any = metadata

    def with_text(self, text: str) -> "Output":
        """Appends a text part."""
        if not isinstance(text, str):
            raise TypeError(f"Output text must be a str, not {type(text).__name__}")
        self.content.append(Text(text))
        return self

    def with_image(self, media_type: str, data: bytes) -> "Output":
        """Appends an image part (``media_type`` like ``image/png``)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"Output image data must be bytes, not {type(data).__name__}")
        self.content.append(Image(str(media_type), bytes(data)))
        return self

    def with_metadata(self, metadata: Any) -> "Output":
        """Sets the metadata (one JSON-serializable value)."""
        self.metadata = metadata
        return self

    @property
    def text(self) -> str:
        """The text parts joined, for tests and logs."""
        return "".join(part.text for part in self.content if isinstance(part, Text))

    def metadata_json(self) -> str | None:
        """The metadata as JSON text, or None; raises TypeError/ValueError
        when it is not JSON-serializable."""
        if self.metadata is None:
            return None
        return json.dumps(self.metadata, ensure_ascii=False, allow_nan=False)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Output):
            return NotImplemented
        return (self.content, self.metadata) == (other.content, other.metadata)

    def __repr__(self) -> str:
        return f"Output(content={self.content!r}, metadata={self.metadata!r})"
