"""Tree search over the core game: Monte Carlo tree search with determinised tile draws.

* :mod:`carc_env.search.mcts`: the search (:class:`MCTS`) and the player
  (:class:`MCTSPolicy`, the baseline protocol ``act(obs, env) -> int``);
* :mod:`carc_env.search.rollout`: utilities, rollout policies (random,
  greedy, ε-greedy) and the guide protocol a leaf evaluator implements (a
  network, or a faster engine's play-outs, plug in there).

It sits beside :mod:`carc_env.baselines`: above the core and the encoding
(it needs ``Game.clone`` / ``Game.redeal`` and the action codec to map its
choice to a flat index), below the environments, which take it as an
opponent like any policy (``CarcassonneGymEnv(opponents=[MCTSPolicy(200)])``).
It needs neither torch nor the env; no upper layer is imported.
"""

from .mcts import MCTS, MCTSPolicy, SearchResult
from .rollout import GreedyMover, RolloutGuide, utilities

__all__ = ["MCTS", "MCTSPolicy", "SearchResult", "GreedyMover", "RolloutGuide", "utilities"]
