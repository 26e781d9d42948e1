"""Reading a policy file (`--policy`): bounded, UTF-8, YAML through the bounded loader; every problem is a
usage error that names the file (and line)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from webhook.config.policy import Policy, policy_from_data
from webhook.io.files import InputFileError, UnreadableInput, read_text
from webhook.io.yamlload import YamlError, load_documents
from webhook.model.errors import UsageError

MAX_POLICY_BYTES = 1 << 20


def load_policy(path: str, known_rules: Mapping[str, Any]) -> Policy:
    """Read a policy file: not readable, not a regular file, over 1 MiB, not UTF-8, not valid YAML, more
    than one document or the wrong shape are usage errors naming the file."""
    try:
        text = read_text(path, MAX_POLICY_BYTES)
    except InputFileError as e:
        raise UsageError(f"--policy {path}: {e}") from e
    except UnreadableInput as e:
        raise UsageError(f"--policy {e}") from e
    docs = list(load_documents(text))
    for d in docs:
        if isinstance(d, YamlError):
            raise UsageError(f"--policy {path}:{d.line}: not valid YAML: {d.message}")
    if len(docs) > 1:
        raise UsageError(f"--policy {path}:{docs[1].line}: one YAML document expected, found {len(docs)}")
    data = docs[0].data if docs else None  # type: ignore[union-attr]
    return policy_from_data({} if data is None else data, path, known_rules)
