"""Paddle 3's program files: PIR ``model.json``, read into blocks and scopes and written back.

``format.py`` is the JSON (its types and attributes), ``op_table.py`` the one table of which
Fluid op each Paddle-dialect op is, ``reader.py`` PIR -> ProgramDesc. The core never imports
this package: a Program does not know where it was read from.
"""
from .format import PirFormatError, SUPPORTED_VERSIONS
from .reader import program_from_pir
from .writer import PirWriteError, pir_parameters, program_to_pir

__all__ = ["program_from_pir", "PirFormatError", "SUPPORTED_VERSIONS", "program_to_pir",
           "pir_parameters", "PirWriteError"]
