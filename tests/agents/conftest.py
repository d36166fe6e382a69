"""Fixtures shared by the agents' tests."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture
def one_torch_thread():
    """Torch on one thread for the test (tiny networks: extra threads only spin, much slower on a busy 2-core
    machine), the caller's thread count restored after it."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
