"""{{name}}: a Kaizen tool plugin. Build: kaizen plugins build ."""

from collections import Counter
from typing import Annotated

from kaizen_sdk import Danger, Output, ToolError, tool


@tool(name="{{camel_name}}", read_only=True, danger=Danger.SAFE)
def {{snake_name}}(
    text: Annotated[str, "The text to count."],
    top: Annotated[int, "How many of the most frequent words to list."] = 3,
) -> Output:
    """Counts the words, lines and characters of a text and lists its most
    frequent words. Use it for statistics about a text you already have."""
    if not text:
        raise ToolError.invalid_input("`text` is empty; give some text to count")
    if top < 0:
        raise ToolError.invalid_input(f"top must be 0 or more, not {top}")
    words = text.split()
    common = Counter(w.lower().strip(".,;:!?\"'()") for w in words).most_common(top)
    stats = {"words": len(words), "lines": len(text.splitlines()), "characters": len(text)}
    summary = ", ".join(f"{n} {k}" for k, n in stats.items())
    listed = "; ".join(f"{w} ({n})" for w, n in common)
    return Output(summary + (f". Most frequent: {listed}" if listed else ""), metadata=stats)
