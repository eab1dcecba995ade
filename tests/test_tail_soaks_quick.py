"""Short runs of the live-tail soaks (soak/test_tail_soaks.py runs them long)."""

from support import tail_soaks


def test_drop_consumer_reconciles_exactly(tmp_path):
    tail_soaks.drop_consumer(tmp_path, events=300, kills=2, rate=300.0)


def test_crash_soak_stores_every_record_once(tmp_path):
    tail_soaks.crash(tmp_path, events=300, kills=2)
