"""Speed, measured side by side in one process (``python -m benchmarks``).

Every case is timed the same way (warm-up, then the median of at least 7 runs) and
reported as a ratio against a reference; tests check correctness, not speed.
"""
