"""paddle_nb's public API: what ``import paddle_nb as pd; pd.<name>`` offers.

``paddle_nb/__init__.py`` holds none of it: the first ``pd.<name>`` imports this module
(through ``paddle_nb/lazy.py``, the one home for loading on first use) and copies its
public names into the package. Importing it registers every op (the ``ops`` package,
first) and gives Variables their operators (``+ - * / @ > <``), as ``import paddle_nb``
did before the package became a light facade.
"""
from . import ops as _ops  # noqa: F401  (registers every op)
from .core import scope, unique_name
from .core.context import Context
from .core.errors import (BuildError, ExecutionError, FeedError, FetchError, IndexRangeError,
                          PaddleNBError, ProgramFormatError, ScopeError, ShapeError,
                          UnknownOpError)
from .core.executor import Executor, Frame, Step
from .core.place import CPUPlace, CUDAPlace, GPUPlace
from .core.program import (Program, default_main_program, default_startup_program,
                           program_guard, reset_default_programs)
from .core.backward import append_backward, gradients
from .core.prune import prune
from .core.validate import Problem, ValidationError, validate
from .core.registry import registered_types as registered_ops
from .core.scope import Scope, global_scope, scope_guard
from .core.selected_rows import SelectedRows
from .core.symbol_table import SymbolTable
from .core.unique_name import namespace
from .core.variable import Parameter, Variable
from . import layers
from . import layers as layer          # the design docs spell it pd.layer.fc
from .layers import variable_api as variable      # pd.variable: the Framework design's API
from .builders import initializer
from . import optimizer
from .optimizer import regularizer
from .optimizer.clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from . import io
from . import passes
from .compiler import BuildStrategy, CompiledProgram
from . import distributed
from .builders.initializer import Constant, Normal, Uniform, XavierUniform
from .layers import (add, create_parameter, data, fc, get_variable, larger_than, matmul,
                     mean, minibatch, relu, sequence, sigmoid, softmax, tanh, var)
from .control_flow import (IfElse, StaticRNN, Switch, While, array_length, array_read,
                           array_write, case, cond, create_array, create_rnn, ifelse, ifelseop,
                           increment, rnn, rnn_op, switch, switch_case, tensor_array_to_tensor,
                           while_loop, while_op)
from .builders.op_creators import op
from .layers.operators import patch_variable as _patch_variable
from .layers.param_attr import ParamAttr

from .interactive.debugger import Debugger, DebuggerError
from . import notebook        # pd.notebook.program(): what %%paddle cells built (no IPython)

_patch_variable()


def load_ipython_extension(ip):
    """``%load_ext paddle_nb``: the %%paddle magic (imports IPython only now)."""
    # the magic imports IPython, slow to load and the notebook's alone: pd.<name> never pays
    from .notebook.magic import load_ipython_extension as load   # noqa: PLC0415 (IPython cost)
    load(ip)


def unload_ipython_extension(ip):
    from .notebook.magic import unload_ipython_extension as unload  # noqa: PLC0415 (IPython cost)
    unload(ip)


def reset() -> None:
    """Start over: fresh default programs, name counters and an empty global scope."""
    reset_default_programs()
    scope.reset_global()
