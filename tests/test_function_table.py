"""The language's function table makes each entry on first lookup (start-up reads no
signature a program does not call): a lookup must give the entry an eager table gives,
and unknown names must stay unknown."""

from __future__ import annotations

import inspect

from agrad.lang.functions import ALIASES, TABLE, Function, _table


def test_every_entry_is_named_as_its_key_and_made_once():
    table = _table()  # a fresh one: nothing made yet
    for name in table:
        entry = table[name]
        assert isinstance(entry, Function) and entry.name == name
        assert table[name] is entry
    assert len(table) == len(list(table)) == len(set(table))


def test_a_fresh_table_lists_what_the_shared_one_lists_in_the_same_order():
    fresh = _table()
    assert list(fresh) == list(TABLE)
    for name in ("sum", "zeros", "cat", "tensor", "softmax"):
        a, b = fresh[name], TABLE[name]
        assert (a.name, a.params, a.variadic, a.doc) == (b.name, b.params, b.variadic, b.doc)


def test_aliases_are_their_functions_under_another_name():
    for alias, name in ALIASES.items():
        assert TABLE[alias].impl is TABLE[name].impl
        assert TABLE[alias].signature().startswith(f"{alias}(")


def test_unknown_names():
    assert "no_such_function" not in TABLE
    assert TABLE.get("no_such_function") is None
    assert "__init__" not in TABLE


def test_generated_entries_read_their_forward_signature():
    # sum's parameters come from the NumPy forward's signature, not from a list here
    params = [p.name for p in TABLE["sum"].params]
    assert params[0] == "x" and "axis" in params and "keepdims" in params
    assert all(p.default is not inspect.Parameter.empty for p in TABLE["sum"].params[1:])
