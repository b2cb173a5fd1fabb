"""The hypothesis settings every property suite shares: the same examples every run (a
failure reproduces), no example database, no deadline (a first call compiles kernels)."""
from hypothesis import HealthCheck

DETERMINISTIC = dict(derandomize=True, database=None, deadline=None, print_blob=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                            HealthCheck.filter_too_much,
                                            HealthCheck.function_scoped_fixture])
