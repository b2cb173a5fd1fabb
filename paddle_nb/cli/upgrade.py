"""``python -m paddle_nb upgrade X.pdmodel``: a Paddle 2 inference model rewritten as Paddle
3 saves one (PIR)."""
from __future__ import annotations

import os
import sys

from ..core.errors import PaddleNBError
from ..core.executor import Executor
from ..core.scope import Scope
from ..io.inference_model import (PARAMS_FILENAME, PIR_MODEL_FILENAME, load_inference_model,
                                  save_pir_files)
from ..io.pir.format import SUPPORTED_VERSIONS, WRITTEN_VERSION


def main(model: str, params: str | None, out: str | None) -> int:
    """Load a Paddle 2 inference model as ``load_inference_model`` does and write it as
    Paddle 3 saves one: ``out/model.json`` (PIR) and ``out/model.pdiparams`` (the persistable
    tensors sorted by name). Any fault is one line and exit code 1; nothing is written (the
    program is translated before the folder is made)."""
    stem = os.path.splitext(os.path.basename(model))[0]
    folder = os.path.dirname(os.path.abspath(model))
    params = os.path.abspath(params) if params else os.path.join(folder, stem + ".pdiparams")
    out = out or os.path.join(folder, stem + "_pir")
    try:
        if not os.path.isfile(model):
            raise FileNotFoundError(f"there is no model file {model}")
        scope = Scope()
        program, _, _ = load_inference_model(folder, Executor(), os.path.basename(model),
                                             params, scope)
        model_path = os.path.join(out, PIR_MODEL_FILENAME)
        params_path = os.path.join(out, PARAMS_FILENAME)
        names = save_pir_files(program, model_path, params_path, scope)
    except (PaddleNBError, OSError) as e:
        message = " ".join(str(e).split())
        print(f"python -m paddle_nb upgrade: {message}", file=sys.stderr)
        return 1
    ops = sum(len(b.ops) for b in program.blocks)
    print(f"wrote {model_path} (PIR version {WRITTEN_VERSION}, which "
          f"{SUPPORTED_VERSIONS[WRITTEN_VERSION]} loads; from the {ops} ops of {model})")
    if names:
        print(f"wrote {params_path} ({len(names)} tensors sorted by name, "
              f"{os.path.getsize(params_path):,} bytes)")
    else:
        print("the program has no parameters: no .pdiparams file (as Paddle 3 saves it)")
    return 0
