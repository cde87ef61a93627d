"""The newest contract in full, as the kits ship it.

The repository's ``wit/vX.Y.Z`` holds only what changed since the
version before, so these tests read the contract the kaizen binary ships:
the test that runs them (``cargo test -p kaizen --test plugin_kits``)
writes the kits out and names the directory in ``KAIZEN_CONTRACT_WIT``."""

import os
from pathlib import Path


def contract_wit() -> Path:
    """The directory of the newest contract's ``.wit`` files."""
    named = os.environ.get("KAIZEN_CONTRACT_WIT")
    if not named:
        raise RuntimeError(
            "KAIZEN_CONTRACT_WIT is not set: run these tests with "
            "`cargo test -p kaizen --test plugin_kits`, or set it to a contract "
            "version in full (the kits' wit/vX.Y.Z under $KAIZEN_HOME/kits)"
        )
    return Path(named)
