#!/usr/bin/env bash
# The machine-kept contract: lint, format and type check (configuration in pyproject.toml).
#
#   scripts/lint.sh            # all three; exits non-zero at the end if any failed
#
# ruff check: the rules of [tool.ruff.lint], the McCabe budget (15) in core, encoding and env included;
# ruff format --check: the formatting ruff format would give; mypy: core, encoding, env and render ([tool.mypy]).
set -u
cd "$(dirname "$0")/.."
status=0
echo "== ruff check" && python -m ruff check . || status=1
echo "== ruff format --check" && python -m ruff format --check . || status=1
echo "== mypy (core, encoding, env, render)" && python -m mypy || status=1
exit $status
