"""Retry policy for outgoing HTTP requests."""

import random
import time

MAX_ATTEMPTS = 4
BASE_DELAY_S = 0.5
MAX_DELAY_S = 8.0
RETRY_STATUSES = {429, 500, 502, 503, 504}


def backoff(attempt: int) -> float:
    """Full-jitter exponential backoff: a random delay up to 0.5 s, 1 s, 2 s, ..."""
    ceiling = min(MAX_DELAY_S, BASE_DELAY_S * (2 ** attempt))
    return random.uniform(0, ceiling)


def with_retries(send, request):
    """Send `request`, retrying on timeouts and retryable statuses."""
    for attempt in range(MAX_ATTEMPTS):
        try:
            response = send(request)
        except TimeoutError:
            if attempt + 1 == MAX_ATTEMPTS:
                raise
        else:
            if response.status not in RETRY_STATUSES or attempt + 1 == MAX_ATTEMPTS:
                return response
        time.sleep(backoff(attempt))
