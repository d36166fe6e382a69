"""A test-only plug-in package whose ``actions`` part gives one phase a two-entry codec."""
