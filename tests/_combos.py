"""Which expansion combinations the property tests play.

The full power set stops fitting in CI once there are more than a handful of
expansions (9 expansions: 512 combinations).  The tests play instead:

* the base game alone, every expansion alone, every pair, all of them together
  (when some refuse each other: every largest combination that plays, see
  :func:`maximal`);
* a seeded sample of ``SAMPLE`` larger combinations (3 up to all but one), the
  same sample on every run (it changes only when the set of expansions does).

The expansions are the built-in plug-ins (those in ``carc_env/expansions``),
so a new one joins every property test without editing them.  A combination
that must be refused at configuration time (two start layouts with no
combined setup, a CONFLICTS entry) goes into ``REFUSED`` with the words its
``ConfigError`` must contain; it is left out of the played combinations and
``tests/expansions/test_expansion_combinations.py`` checks that it is refused.
"""

from __future__ import annotations

import itertools

import numpy as np

from carc_env.core.registry import builtin_keys

SAMPLE = 8
SAMPLE_SEED = 20240611
REFUSED: dict[frozenset[str], str] = {
    frozenset({"maps_germany", "count"}): "'count' lays its own start layout",
    frozenset({"maps_germany", "river2"}): "'river2' lays its own start layout",
}
"""Combinations (as sets of keys) that configuration refuses, with a piece of the expected message."""


def builtin_expansions() -> tuple[str, ...]:
    """Keys of the built-in plug-ins other than the base game, sorted."""
    return tuple(k for k in builtin_keys() if k != "base")


def _refused(combo: tuple[str, ...]) -> bool:
    return any(bad <= set(combo) for bad in REFUSED)


def maximal(expansions: tuple[str, ...] | None = None) -> list[tuple[str, ...]]:
    """The largest combinations that play ("all together" when nothing is refused), sorted."""
    exps = builtin_expansions() if expansions is None else tuple(expansions)
    ok = [c for r in range(len(exps), -1, -1) for c in itertools.combinations(exps, r) if not _refused(c)]
    return sorted(c for c in ok if not any(set(c) < set(d) for d in ok))


def combinations(expansions: tuple[str, ...] | None = None) -> list[tuple[str, ...]]:
    """The combinations to play (without "base"), in a fixed order; see the module docstring."""
    exps = builtin_expansions() if expansions is None else tuple(expansions)
    chosen: list[tuple[str, ...]] = [(), *((e,) for e in exps), *itertools.combinations(exps, 2)]
    tops = maximal(exps) if len(exps) > 2 else []
    chosen += [c for c in tops if c not in chosen]
    larger = [c for r in range(3, len(exps)) for c in itertools.combinations(exps, r)
              if c not in tops and not _refused(c)]  # fmt: skip
    if larger:
        rng = np.random.default_rng(SAMPLE_SEED)
        picks = rng.choice(len(larger), size=min(SAMPLE, len(larger)), replace=False)
        chosen += [larger[i] for i in sorted(picks)]
    return [c for c in chosen if not _refused(c)]
