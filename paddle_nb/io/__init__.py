"""Saving and loading parameters and inference models, in PaddlePaddle's own file formats.

Fluid's API, with Fluid's names and argument order: ``save_params`` / ``load_params``
(the parameters), ``save_persistables`` / ``load_persistables`` (every persistable tensor:
parameters, learning rates, optimizer accumulators), ``save_vars`` / ``load_vars`` (any
choice of variables) and ``save_inference_model`` / ``load_inference_model``. Values are
read from and written to a scope (``pd.scope.current()`` unless ``scope=`` is given). The
``executor`` argument is accepted for Fluid compatibility; no save/load ops are run, the
files are written and read here directly.

The files: ``tensor_format.py`` (one tensor's bytes), ``files.py`` (all-or-nothing
writes, bounded reads), ``variables.py`` (save/load variables), ``inference_model.py``.

Paddle 3's programs
-------------------
Paddle 3 saves a program as PIR, JSON text (``model.json``) beside the same ``.pdiparams``
file as Paddle 2. ``pir/`` translates it into blocks and scopes: ``program_from_pir(text)``
is a Program with ``feed`` / ``fetch`` ops, and ``load_inference_model`` reads ``model.json``
or ``model.pdmodel``, whichever the directory holds. A file that is not a PIR program this
package reads is a :class:`PirFormatError` (a ``ProgramFormatError``) naming the op and the
fault; a PIR file larger than ``paddle_nb.core.limits.MAX_PIR_BYTES`` is not parsed.

Three guarantees
----------------
* A save never leaves a half-written file. Each file is written to a temporary file in the
  same directory and moved over the old one with ``os.replace`` (atomic), and only after
  every temporary file of the save is complete; on any error the temporaries are removed.
* A load changes nothing unless everything loads. Every file is read and every tensor
  checked (header, data size, dtype, and shape against the program's VarDesc where the
  declared dims are known) before the first value goes into the scope. A missing, truncated
  or corrupt file raises :class:`IOFormatError` naming the file, the variable and the fault.
* A load reads only regular files (a FIFO, a device, a directory is refused at once) and
  no more than ``paddle_nb.core.limits.MAX_PROGRAM_BYTES`` (program; ``MAX_PIR_BYTES`` for
  a PIR ``model.json``) or ``MAX_PARAMS_BYTES`` (parameters); a larger file is refused before
  it is read.
"""
from ..core.errors import IOFormatError, SaveError
from .inference_model import (MODEL_FILENAME, PARAMS_FILENAME, load_inference_model,
                              save_inference_model)
from .pir import PirFormatError, program_from_pir
from .tensor_format import parse_tensors, serialize_tensor
from .variables import (is_parameter, is_persistable, load_params, load_persistables, load_vars,
                        save_params, save_persistables, save_vars)

__all__ = ["MODEL_FILENAME", "PARAMS_FILENAME", "IOFormatError", "SaveError", "save_vars",
           "save_params", "save_persistables",
           "load_vars", "load_params", "load_persistables", "save_inference_model",
           "load_inference_model", "serialize_tensor", "parse_tensors", "is_parameter",
           "is_persistable", "program_from_pir", "PirFormatError"]
