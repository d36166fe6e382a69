"""Built-in expansions; importing this package registers them (see core.expansion)."""

from . import base  # noqa: F401
