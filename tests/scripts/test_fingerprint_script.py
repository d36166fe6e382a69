"""scripts/fingerprint.py (behaviour fingerprints for refactors): it writes, and it tells a difference."""

from __future__ import annotations

import json

from _helpers import load_script


def _load():
    return load_script("fingerprint", "fingerprint_script")


def test_fingerprints_are_stable_and_a_difference_is_reported(tmp_path, capsys):
    fp = _load()
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert fp.main([str(a), "--combos", ";river2", "--seeds", "1"]) == 0
    assert fp.main([str(b), "--combos", ";river2", "--seeds", "1"]) == 0
    assert a.read_text() == b.read_text()  # the same games, the same hashes
    data = json.loads(a.read_text())
    assert sorted(data) == ["base|11|2", "river2|11|3"]
    assert fp.main(["--compare", str(a), str(b)]) == 0
    data["river2|11|3"]["events"] = "0" * 16
    b.write_text(json.dumps(data))
    assert fp.main(["--compare", str(a), str(b)]) == 1
    assert "river2|11|3: events differ" in capsys.readouterr().out
