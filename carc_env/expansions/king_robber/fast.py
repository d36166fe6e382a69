"""King & Robber Baron in the compiled engine (:mod:`carc_env.fast`): the ``figures`` rule.

The kernels track the largest completed city and road and their holders
(``on_completed``: the largest of a turn's completions, strictly larger than
the record) and score 1 point per completed city / road at the end
(``final_scoring``); the global features are this plug-in's observe part's.
"""

from __future__ import annotations

from typing import Any

from ...fast.support import FastSupport


def params(rules: Any, exp: Any) -> dict[str, int]:
    return {"figures": 1}


def positions(encoder: Any) -> dict[str, int]:
    return {"g_figures": list(encoder.global_names).index("king_p0")}


SUPPORT = FastSupport(hooks=frozenset({"on_completed", "final_scoring"}), params=params, positions=positions)
