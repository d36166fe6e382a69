"""Plug-ins that exist for tests only (registered by the tests that use them, then unregistered)."""
