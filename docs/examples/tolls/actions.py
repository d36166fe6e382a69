"""The action range of ``tolls_collect`` (the example's codec part): 2 entries, 0 ``toll cash``, 1 ``toll bank``."""

from __future__ import annotations

from carc_env.core.actions import Action, IllegalActionError
from carc_env.encoding import PhaseCodec

from .rules import CollectToll


class CollectCodec(PhaseCodec):
    phase = "tolls_collect"

    def __init__(self, rules, rows: int, cols: int) -> None:
        self.size = 2

    def fill_mask(self, game, view, out) -> None:
        out[:] = 1  # both choices are always legal in this phase

    def decode(self, game, view, local: int) -> Action:
        return CollectToll(bool(local))

    def encode(self, game, view, action: Action) -> int:
        if type(action) is CollectToll:
            return int(action.bank)
        raise IllegalActionError(f"the tolls_collect phase needs 'toll cash' or 'toll bank', got {action!r}")


PHASE_CODECS = {"tolls_collect": CollectCodec}
