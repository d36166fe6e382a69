"""A test-only plug-in advertised through the ``carc_env.expansions`` entry-point group (see test_hooks)."""

from carc_env.core.expansion import Expansion


class EntryPointPlugin(Expansion):
    KEY = "test_ep"
    REQUIRES = ("base",)
