"""The framework core: the protobuf program description and its views, scopes, the op
registry, the executor. It never imports the layers or the notebook front end."""
from . import scope
from .block import Block
from .context import Context
from .errors import (BuildError, ExecutionError, FeedError, FetchError, PaddleNBError,
                     ProgramFormatError, ScopeError, ShapeError, UnknownOpError)
from .executor import Executor, Step
from .operator import Operator
from .place import CPUPlace, CUDAPlace, GPUPlace
from .program import (Program, default_main_program, default_startup_program, program_guard,
                      reset_default_programs)
from .prune import prune
from .registry import registered_types
from .scope import Scope, scope_guard
from .symbol_table import SymbolTable
from .variable import Parameter, Variable
