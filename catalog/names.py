"""The one way card and model names are compared: lower case, separators dropped."""
from __future__ import annotations

import re

# Separators people put anywhere in a name: "Llama-3.1 70B", "llama3.1:70b", "H100 (SXM)", "FLUX.1 [dev]".
# Everything else stays, so "command-r+" and "command-r" remain two names.
_SEPARATORS = re.compile(r"[\s_\-./\[\]():,]+")


def normalize_name(text: str) -> str:
    """'Llama-3.1 70B' and 'llama3.170b' -> 'llama3170b'; 'RTX 4090', 'rtx-4090' and 'rtx4090' -> 'rtx4090'."""
    return _SEPARATORS.sub("", text.lower())
