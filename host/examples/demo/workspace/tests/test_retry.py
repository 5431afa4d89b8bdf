from app.retry import backoff, MAX_DELAY_S


def test_backoff_is_capped():
    assert all(backoff(n) <= MAX_DELAY_S for n in range(20))
