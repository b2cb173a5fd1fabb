"""The benchmarks' model builders for tests (benchmarks/ sits beside tests/, not in the
package)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import ifelse as ifelse_bench, mlp as mlp_bench, rnn as rnn_bench  # noqa: E402,F401
from benchmarks.paths import drained  # noqa: E402,F401  (Executor.steps run to the end)
