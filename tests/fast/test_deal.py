"""The compiled deal (carc_env.fast.deal) shuffles exactly as NumPy's default_rng(seed).permutation."""

from __future__ import annotations

import numpy as np
import pytest

from carc_env.fast.deal import shuffle
from carc_env.fast.engine import _RulesOnly
from carc_env.fast.rng import generator_words

SEEDS = [0, 1, 2, 7, 12345, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 5, 2**40 + 123, 2**62 + 9, 2**63 - 1]


@pytest.mark.parametrize("n", [1, 2, 3, 17, 71, 84, 200])
def test_shuffle_and_words_equal_numpy(n: int) -> None:
    base = np.arange(1000, 1000 + n, dtype=np.int64)[::-1].copy()
    seeds = SEEDS + list(range(100, 160))
    bags, words = shuffle(seeds, base, want_words=True)
    assert words is not None
    for i, seed in enumerate(seeds):
        rng = np.random.default_rng(seed)
        assert bags[i].tolist() == base[rng.permutation(n)].tolist(), seed
        assert words[i].tolist() == generator_words(rng).tolist(), seed


def test_shuffle_without_words_and_empty() -> None:
    bags, words = shuffle([5, 6], np.arange(4, dtype=np.int64))
    assert words is None and bags.shape == (2, 4)
    assert shuffle([], np.arange(4, dtype=np.int64))[0].shape == (0, 4)


def test_negative_seed_is_refused() -> None:
    with pytest.raises(ValueError, match="seeds to deal must be"):
        shuffle([3, -1], np.arange(4, dtype=np.int64))


@pytest.mark.parametrize(
    "exps", [(), ("river2",), ("king_robber", "count", "river2", "shrines", "darmstadt"), ("stained_glass",)]
)
def test_batch_deal_equals_numpy_deal(batches, exps: tuple[str, ...]) -> None:
    """FastBatch's deal (compiled shuffle, then the plug-ins' build_bag) equals the one through NumPy's
    generator, the generator's words included, also for a seed beyond int64."""
    _, fb = batches({"num_players": 3, "expansions": exps}, 1)
    seeds = [0, 1, 99, 2**33 + 1, 2**63 - 1]
    for seed, (bag, words) in zip(seeds, fb._deals(seeds), strict=True):
        ref_bag, ref_words = fb._deal_numpy(seed)
        assert bag.tolist() == ref_bag.tolist()
        assert (words is None) == (ref_words is None)
        if words is not None:
            assert words.tolist() == ref_words.tolist()
    big = 2**64 + 3
    assert fb._deal(big)[0].tolist() == fb._deal_numpy(big)[0].tolist()


BAG_CONFIGS = [
    {"expansions": ("river2",)},
    {"expansions": ("river2",), "rules": {"river2": {"end_city_last": True, "start_tile": "after_river"}}},
    {"expansions": ("river2", "count"), "rules": {"river2": {"start_tile": "after_river"}}},
    {"expansions": ("darmstadt",)},
    {"expansions": ("darmstadt",), "rules": {"darmstadt": {"remove_base_cloisters": False}}},
    {"expansions": ("king_robber", "count", "river2", "shrines", "darmstadt"),
     "rules": {"river2": {"start_tile": "after_river", "end_city_last": True}}},
]  # fmt: skip


@pytest.mark.parametrize("kw", BAG_CONFIGS, ids=range(len(BAG_CONFIGS)))
def test_vectorised_build_bags_equal_the_python_hooks(batches, kw: dict) -> None:
    """The plug-ins' FastSupport.build_bags give, row by row, the orders of their Python build_bag."""
    _, fb = batches({"num_players": 2, **kw}, 1)
    lay = fb.layout
    assert lay.bag_hooks
    bags, _ = shuffle(range(200, 260), lay.base_bag)
    fast = fb._build_bags(bags)
    shim = _RulesOnly(lay.rules)
    for row, got in zip(bags, fast, strict=True):
        order = row.tolist()
        for hook in lay.bag_hooks:
            order = hook(shim, order)
        assert got.tolist() == order
