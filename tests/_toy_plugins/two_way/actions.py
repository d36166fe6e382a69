"""The ``actions`` part of the test-only ``two_way`` plug-in."""

from carc_env.encoding import PhaseCodec


class TwoWay(PhaseCodec):
    phase = "two_way_test_phase"
    size = 2

    def __init__(self, rules, rows, cols):
        pass


PHASE_CODECS = {"two_way_test_phase": TwoWay}
