"""What every builder is made with, below the layers, the optimizer and control flow:
``arg_checks`` (an argument checked before anything is appended, the error naming the
builder and the argument), ``initializer`` (``pd.initializer``: the startup program's op
that fills a parameter) and ``op_creators`` (``pd.op.<type>``, one creator per registered
op). They import only ``core`` and ``ops``; this file imports nothing, so the optimizer
can take ``arg_checks`` without loading the rest.
"""
