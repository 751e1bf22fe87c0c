"""agrad.lang: the language, from text to a flat instruction list.

- ``ir``: the instruction list (`ParsedProgram`, `Instr`, `Slice`, kinds).
- ``parser``: ``parse(text) -> ParsedProgram``, built on ``grammar/agrad.lark``.
- ``diagnostics``: syntax error messages and ``caret_snippet`` for pointing at
  a line and column (the runtime uses it for shape errors at an operator).

Importing this package imports nothing heavy; Lark loads with ``parser``.
"""
