"""Bad input of every kind: exit 2, one `error: ...` on stderr that says what is wrong,
nothing on stdout, never a traceback, and fast (well under a second per case).

The other side too: very long and very deeply nested programs that are valid
must evaluate, to the algebraic value.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

X3 = ["--set", "x=[1,2,3]"]
X2 = ["--set", "x=[1,2]"]
DEEP = 100_001  # one past the parser's nesting limit of 100,000

# (id, argv, words the message must contain; a tuple: one of them).
# "{tmp}" is a folder of prepared files.
CASES = [
    # syntax: what, where (a snippet line and a caret line)
    ("unclosed paren", ["eval", "sum((x)", *X2], ["expected ')'", "^"]),
    ("stray paren", ["eval", "x)", *X2], ["unmatched ')'", "^"]),
    ("dangling plus", ["eval", "1 +"], ["end of input", "^"]),
    ("dangling power", ["eval", "2 ** "], ["end of input", "^"]),
    ("double dot", ["eval", "x..T", *X2], ["'.T'", "^"]),
    ("two decimal points", ["eval", "1.2.3"], ["malformed number", "^"]),
    ("dollar", ["eval", "$"], ["unexpected character '$'", "^"]),
    ("python lambda", ["eval", "lambda x: x"], ["'lambda'", "Python keyword", "^"]),
    ("empty program", ["eval", ""], ["empty"]),
    ("only a comment", ["eval", "# nothing here"], ["empty"]),
    ("program of blanks", ["eval", "  \n ; \n"], ["empty"]),
    # names
    ("typo of an assigned name", ["eval", "x = [1,2]; sum(xx)"], ["'xx'", "did you mean 'x'"]),
    ("typo of a --set name", ["eval", "sum(xx)", *X2], ["'xx'", "did you mean"]),
    ("unknown function", ["eval", "exq(x)", *X2], ["'exq'", "did you mean 'exp'"]),
    ("unbound name", ["eval", "sum(q)"], ["unknown name 'q'", "--set q="]),
    # calls
    ("too many arguments", ["eval", "exp(x, x)", *X2], ["exp", "at most 1", "exp(x)"]),
    ("missing argument", ["eval", "sum()"], ["missing", "'x'", "sum(x"]),
    ("unknown keyword", ["eval", "sum(x, axes=0)", *X2], ["'axes'", "did you mean 'axis'"]),
    ("stack of a tensor", ["eval", "stack(x)", *X2], ["stack", "list"]),
    ("axis out of range", ["eval", "sum(x, axis=3)", *X3], ["axis 3", "out of range"]),
    ("negative eye", ["eval", "eye(-1)"], ["eye"]),
    # shapes: both named
    ("broadcast mismatch", ["eval", "[1,2] + [1,2,3]"], ["(2,)", "(3,)"]),
    ("matmul mismatch", ["eval", "[1,2] @ [1,2,3]"], ["(2,)", "(3,)"]),
    ("reshape size", ["eval", "reshape(x, [4])", *X3], ["(3,)", "(4,)"]),
    (
        "concat mismatch",
        ["eval", "concat([x, y])", "--set", "x=[[1,2]]", "--set", "y=[[1,2,3]]"],
        ["(1, 2)", "(1, 3)"],
    ),
    (
        "concat of scalars",
        ["eval", "concat([x, x])", "--set", "x=1"],
        ["concat", ("zero-dim", "0-d", "scalar", "stack")],
    ),
    ("ragged literal", ["eval", "[[1, 2], [3]]"], ["(1,)", "(2,)"]),
    ("index out of range", ["eval", "x[5]", *X3], ["index 5", "size 3"]),
    ("fractional index", ["eval", "x[0.5]", *X3], ["whole number", "0.5"]),
    ("too many indices", ["eval", "x[0, 0]", *X3], ["too many indices"]),
    # PyTorch's torch.max(a, b) is elementwise; the language's max takes an axis there
    ("max of two tensors", ["eval", "max(x, 0.5*x)", *X3], ["axis", "shape (3,)", "maximum(a, b)"]),
    ("min of two tensors", ["eval", "min(x, x/3)", *X3], ["axis", "minimum(a, b)"]),
    ("fractional axis list", ["eval", "sum(x, axis=[0.5])", *X3], ["axis", "whole number"]),
    ("zero slice step", ["eval", "x[0:2:0]", *X3], ["step"]),
    # gradients of a non-scalar output
    (
        "non-scalar without grad-output",
        ["eval", "x*2", *X3, "--wrt", "x"],
        ["--grad-output", "agrad jacobian"],
    ),
    (
        "grad-output of the wrong shape",
        ["eval", "x*2", *X3, "--wrt", "x", "--grad-output", "[1,2]"],
        ["--grad-output", "(2,)", "(3,)"],
    ),
    ("hessian of a vector", ["hessian", "x**2", *X2, "--wrt", "x"], ["single-number", "(2,)"]),
    ("jacobian without wrt", ["jacobian", "x*2", *X2], ["--wrt"]),
    # files
    ("pickled npy", ["eval", "sum(x)", "--set", "x=@{tmp}/obj.npy"], ["pickle"]),
    ("missing file", ["eval", "sum(x)", "--set", "x=@{tmp}/missing.npy"], ["no such file"]),
    (
        "unknown extension",
        ["eval", "sum(x)", "--set", "x=@{tmp}/data.xyz"],
        ["unknown file type", ".xyz"],
    ),
    ("csv with words", ["eval", "sum(x)", "--set", "x=@{tmp}/words.csv"], ["cannot read"]),
    ("json of strings", ["eval", "sum(x)", "--set", "x=@{tmp}/strings.json"], ["numbers"]),
    ("npz needs a key", ["eval", "sum(x)", "--set", "x=@{tmp}/two.npz"], ["2 arrays", ":NAME"]),
    ("npz wrong key", ["eval", "sum(x)", "--set", "x=@{tmp}/two.npz:c"], ["no array 'c'"]),
    ("json wrong field", ["eval", "sum(x)", "--set", "x=@{tmp}/d.json:zz"], ["no field 'zz'"]),
    ("--file is a folder", ["eval", "-f", "{tmp}"], ["--file", "cannot read"]),
    ("--file missing", ["eval", "-f", "{tmp}/nope.agrad"], ["--file", "cannot read"]),
    ("program and --file", ["eval", "1", "-f", "{tmp}/prog.agrad"], ["--file", "not both"]),
    # --set / --wrt
    ("set without =", ["eval", "x", "--set", "x"], ["NAME=VALUE"]),
    ("set of a bad name", ["eval", "x", "--set", "1x=2"], ["'1x'", "not a variable name"]),
    ("set without value", ["eval", "x", "--set", "x="], ["NAME=VALUE"]),
    (
        "set of an unknown name",
        ["eval", "x", "--set", "x=1", "--set", "z=1"],
        ["--set z", "no variable 'z'"],
    ),
    (
        "set of a computed name",
        ["eval", "y = x*2; y", "--set", "x=1", "--set", "y=3"],
        ["--set y", "computed"],
    ),
    ("set value not constant", ["eval", "x", "--set", "x=y"], ["constant", "'y'"]),
    ("set value syntax", ["eval", "x", "--set", "x=[1,2"], ["--set x", "']'"]),
    (
        "wrt of an unknown name",
        ["eval", "x", "--set", "x=1", "--wrt", "q"],
        ["--wrt q", "no variable 'q'"],
    ),
    # options
    ("dtype float16", ["eval", "x", "--set", "x=1", "--dtype", "float16"], ["--dtype", "float16"]),
    ("format xml", ["eval", "x", "--set", "x=1", "--format", "xml"], ["--format", "xml"]),
    ("precision 0", ["eval", "x", "--set", "x=1", "--precision", "0"], ["--precision"]),
    ("seed not a number", ["eval", "x", "--set", "x=1", "--seed", "abc"], ["--seed"]),
    ("unknown option", ["eval", "x", "--set", "x=1", "--bogus"], ["--bogus"]),
    ("unknown command", ["frobnicate"], ["frobnicate"]),
    # the language is data: no Python reachable
    ("dunder import", ["eval", "__import__('os')"], ["unknown function '__import__'"]),
    ("dunder attribute", ["eval", "x.__class__", *X2], ["only '.T'", "no attributes"]),
    ("exec", ["eval", 'exec("1")'], ["unknown function 'exec'"]),
    ("eval call", ["eval", "eval(x)", *X2], ["unknown function 'eval'"]),
    ("open", ["eval", 'open("f")'], ["unknown function 'open'"]),
    ("getattr", ["eval", 'getattr(x, "T")', *X2], ["unknown function 'getattr'"]),
    # strings exist only as arguments that take one (einsum's equation)
    ("string as a tensor", ["eval", '"ab" + 1'], ["string 'ab' is not a tensor", "einsum"]),
    ("string argument", ["eval", 'sum("x")'], ["string 'x' is not a tensor"]),
    ("einsum equation not a string", ["eval", "einsum(x, x)", *X2], ["must be a string"]),
    ("einsum bad subscripts", ["eval", 'einsum("i!,i", x, x)', *X2], ["invalid subscripts"]),
    ("einsum size mismatch", ["eval", 'einsum("ij,jk", x, x)', *X2], ["do not fit"]),
    ("unterminated string", ["eval", 'einsum("ij', *X2], ["quote"]),
    ("tuple dunder", ["eval", "().__class__"], ["unexpected ')'"]),
    ("import statement", ["eval", "import os"], ["'import'", "Python keyword"]),
    # huge allocations fail fast, before allocating
    ("zeros 1e10", ["eval", "zeros(100000, 100000)"], ["zeros", "--max-elements"]),
    ("ones 1e9", ["eval", "ones(1e9)"], ["ones", "--max-elements"]),
    ("outer 1e10", ["eval", "outer(x, x)", "--set", "x=arange(0, 1e5)"], ["--max-elements"]),
    ("broadcast 1e10", ["eval", "randn(1e5) + randn(1e5, 1)"], ["--max-elements"]),
    ("arange 1e12", ["eval", "arange(0, 1e12)"], ["--max-elements"]),
    ("set value 1e9", ["eval", "x", "--set", "x=randn(1e9)"], ["--set x", "--max-elements"]),
    ("own limit", ["eval", "ones(11)", "--max-elements", "10"], ["11", "--max-elements"]),
    # nesting past the limits
    ("parentheses past 100,000", ["eval", "(" * DEEP + "1" + ")" * DEEP], ["nest"]),
    ("brackets past 100,000", ["eval", "[" * DEEP + "1" + "]" * DEEP], ["nest"]),
    ("tensor literal of 33 dims", ["eval", "[" * 33 + "1" + "]" * 33], ["32"]),
    # a check at a point that is not finite: bad input (exit 2), not a failed check
    ("check at nan", ["check", "sum(x**2)", "--wrt", "x", "--set", "x=[1,nan]"],
     ["x[1] is nan", "finite"]),
    ("check at inf", ["check", "x*y", "--wrt", "x,y", "--set", "x=2", "--set", "y=-inf"],
     ["y is -inf", "finite"]),
    ("check --fast at nan", ["check", "sum(x)", "--fast", "--wrt", "x", "--set", "x=[nan]"],
     ["x[0] is nan"]),
    ("check --python at nan", ["check", "--python", "{tmp}/fn.py:f", "--set", "x=[[1,2],[nan,0]]"],
     ["x[1, 0] is nan"]),
]  # fmt: skip
IDS = [c[0] for c in CASES]
VIA_SUBPROCESS = {
    "unclosed paren",
    "pickled npy",
    "format xml",
    "zeros 1e10",
    "dunder import",
    "set without =",
    "missing argument",
    "unknown command",
}


@pytest.fixture
def tmp(tmp_path):
    """A folder with the files the cases refer to."""
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    np.savez(tmp_path / "two.npz", a=np.array([1.0]), b=np.array([2.0]))
    (tmp_path / "data.xyz").write_text("1 2 3\n")
    (tmp_path / "words.csv").write_text("1,2\nfoo,3\n")
    (tmp_path / "strings.json").write_text('["a", "b"]')
    (tmp_path / "d.json").write_text('{"k": [1, 2]}')
    (tmp_path / "prog.agrad").write_text("1 + 1\n")
    (tmp_path / "fn.py").write_text("import agrad as torch\n\ndef f(x):\n    return (x**2).sum()\n")
    return tmp_path


def _argv(argv: list[str], tmp) -> list[str]:
    return [a.replace("{tmp}", str(tmp)) for a in argv]


def assert_bad_input(result, words: list[str]) -> None:
    assert result.code == 2, (result.out, result.err)
    assert result.out == ""
    assert result.err.startswith("error: "), result.err
    assert "Traceback" not in result.err and "Traceback" not in result.out
    assert "internal error" not in result.err, result.err
    first = result.err.splitlines()[0]
    assert len(first) > len("error: ") + 10
    for word in words:
        options = word if isinstance(word, tuple) else (word,)
        assert any(w in result.err for w in options), f"{word!r} not in {result.err!r}"
    if "^" in words:  # syntax errors: message, snippet, caret
        lines = result.err.rstrip("\n").splitlines()
        assert len(lines) == 3 and set(lines[2].strip()) == {"^"}, result.err


@pytest.mark.parametrize("name, argv, words", CASES, ids=IDS)
def test_bad_input_in_process(cli, tmp, name, argv, words):
    result = cli(_argv(argv, tmp))
    assert_bad_input(result, words)
    assert result.seconds < 1.0, f"{name} took {result.seconds:.2f} s"


@pytest.mark.parametrize(
    "name, argv, words",
    [c for c in CASES if c[0] in VIA_SUBPROCESS],
    ids=[c[0] for c in CASES if c[0] in VIA_SUBPROCESS],
)
def test_bad_input_via_the_executable(exe, tmp, name, argv, words):
    result = exe(_argv(argv, tmp))
    assert_bad_input(result, words)
    assert result.seconds < 3.0  # interpreter start-up included


def test_enough_cases():
    assert len(CASES) >= 40 and len(set(IDS)) == len(IDS)
    assert len(VIA_SUBPROCESS) >= 5 and set(IDS) >= VIA_SUBPROCESS


# ---- the other side: big valid programs ---------------------------------------------------


def test_long_sum_of_x(cli, record_property):
    n = 100_000
    result = cli(["eval", "+".join(["x"] * n), "--set", "x=2.5", "--wrt", "x", "--format", "json"])
    record_property("seconds", round(result.seconds, 3))
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["value"] == 2.5 * n and payload["grads"]["x"] == n
    assert result.seconds < 60


def test_long_sum_of_ones_from_stdin(exe, record_property):
    n = 100_000  # too long for one argv entry (128 KiB): sent on standard input
    result = exe(["eval", "-", "--format", "json"], stdin="+".join(["1"] * n) + "\n")
    record_property("seconds", round(result.seconds, 3))
    assert result.code == 0, result.err
    assert json.loads(result.out)["value"] == n
    assert result.seconds < 60


def test_deep_parentheses(cli, record_property):
    depth = 10_000
    program = "(" * depth + "x*3 - 1" + ")" * depth
    result = cli(["eval", program, "--set", "x=2", "--wrt", "x", "--format", "json"])
    record_property("seconds", round(result.seconds, 3))
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["value"] == 5 and payload["grads"]["x"] == 3
    assert result.seconds < 60


def test_deep_chain_of_functions(cli):
    depth = 2_000  # sin(sin(...sin(x)...)): d/dx is the product of cosines along the chain
    result = cli(
        [
            "eval",
            "sin(" * depth + "x" + ")" * depth,
            "--set",
            "x=0.5",
            "--wrt",
            "x",
            "--format",
            "json",
        ]
    )
    assert result.code == 0, result.err
    v, g = 0.5, 1.0
    for _ in range(depth):
        g *= np.cos(v)
        v = np.sin(v)
    payload = json.loads(result.out)
    np.testing.assert_allclose(payload["value"], v, rtol=1e-12)
    np.testing.assert_allclose(payload["grads"]["x"], g, rtol=1e-9)


def test_tensor_literal_of_32_dims(cli):
    result = cli(
        [
            "eval",
            "sum(" + "[" * 32 + "x" + "]" * 32 + ")",
            "--set",
            "x=4",
            "--wrt",
            "x",
            "--format",
            "json",
        ]
    )
    assert result.code == 0, result.err
    assert json.loads(result.out)["grads"]["x"] == 1


def test_limit_is_not_hit_below_it(cli):
    start = time.perf_counter()
    result = cli(["eval", "sum(ones(10))", "--max-elements", "10", "--format", "json"])
    assert result.code == 0 and json.loads(result.out)["value"] == 10
    assert time.perf_counter() - start < 1


# ---- files that are damaged, hostile or too large: the whole class, each loader -----------


def _valid_bytes(ext: str) -> bytes:
    import io
    import zipfile

    data = np.arange(6.0).reshape(2, 3)
    if ext == ".npy":
        buf = io.BytesIO()
        np.save(buf, data)
        return buf.getvalue()
    if ext == ".npz":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf, zf.open("a.npy", "w") as member:
            np.save(member, data)
        return buf.getvalue()
    if ext == ".json":
        return json.dumps(data.tolist()).encode()
    return "\n".join(("," if ext == ".csv" else " ").join(map(str, r)) for r in data).encode()


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]


DAMAGE = {
    "empty": lambda good: b"",
    "garbage": lambda good: b"\x00\xffSECRET_TOKEN=abc123\xfe\n" * 3,
    "truncated": lambda good: good[: len(good) // 2],
    "one byte flipped": lambda good: _flip(good, len(good) * 2 // 3),
    "zip header only": lambda good: b"PK\x03\x04" + good[4:30],
}


@pytest.mark.parametrize("ext", [".npy", ".npz", ".csv", ".txt", ".json"])
@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damaged_data_files(cli, tmp_path, ext, damage):
    good = _valid_bytes(ext)
    path = tmp_path / f"data{ext}"
    path.write_bytes(DAMAGE[damage](good))
    result = cli(["eval", "sum(x)", "--set", f"x=@{path}", "--format", "json"])
    if result.code == 0:  # damage a format can survive: a digit flipped, a table cut at a row
        assert ext in (".csv", ".txt", ".json") or damage == "one byte flipped", result.out
        assert result.err == "" and "value" in json.loads(result.out)
        return
    assert_bad_input(result, ["--set x=@"])
    assert "SECRET_TOKEN" not in result.err and "abc123" not in result.err


LIMITED = ["--max-elements", "1000"]


def _npz_inflating_to(path, count: int) -> None:
    import zipfile

    from numpy.lib import format as npy_format

    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf, zf.open("a.npy", "w") as m:
        header = {"descr": "<f8", "fortran_order": False, "shape": (count,)}
        npy_format.write_array_header_1_0(m, header)
        m.write(bytes(8 * count))


def test_files_are_bounded_before_they_are_loaded(cli, tmp_path):
    from numpy.lib import format as npy_format

    with open(tmp_path / "huge.npy", "wb") as handle:  # a header claiming 10^12 elements
        npy_format.write_array_header_1_0(
            handle, {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6)}
        )
        handle.write(bytes(64))
    result = cli(["eval", "sum(x)", "--set", f"x=@{tmp_path / 'huge.npy'}"])
    assert_bad_input(result, ["1,000,000,000,000 elements", "--max-elements"])
    _npz_inflating_to(tmp_path / "bomb.npz", 3000)  # 24 kB that compress to a few hundred
    assert (tmp_path / "bomb.npz").stat().st_size < 1000
    result = cli(["eval", "sum(x)", "--set", f"x=@{tmp_path / 'bomb.npz'}", *LIMITED])
    assert_bad_input(result, ["3,000 elements", "limit of 1,000"])
    (tmp_path / "big.csv").write_text("1,2,3\n" * 400)
    (tmp_path / "big.json").write_text(json.dumps([1.0] * 1200))
    for name in ("big.csv", "big.json"):
        result = cli(["eval", "sum(x)", "--set", f"x=@{tmp_path / name}", *LIMITED])
        assert_bad_input(result, ["1,200 elements", "--max-elements"])
    (tmp_path / "long.csv").write_text("1" + " " * 100_000 + "\n")  # bytes, before parsing
    result = cli(["eval", "sum(x)", "--set", f"x=@{tmp_path / 'long.csv'}", *LIMITED])
    assert_bad_input(result, ["more than", "bytes"])


@pytest.mark.parametrize(
    "text, words",
    [
        ("[1" + "0" * 400 + "]", ["beyond the range of float64"]),
        ("[1e400]", ["beyond the range of float64"]),
        ("[" * 50_000 + "]" * 50_000, ["nests lists too deeply"]),
        ("[" * 40 + "1" + "]" * 40, ["more than 32 deep"]),
        ('{"k": [1, null]}', ["no field", "'q'"]),
        ("[1, 2", ["not valid JSON", "line 1, column 6"]),
    ],
    ids=["integer beyond float", "float beyond float", "deep", "33 dims", "field", "syntax"],
)
def test_json_values(cli, tmp_path, text, words):
    (tmp_path / "v.json").write_text(text)
    key = ":q" if text.startswith("{") else ""
    assert_bad_input(cli(["eval", "sum(x)", "--set", f"x=@{tmp_path / 'v.json'}{key}"]), words)


def test_set_and_grad_output_values_obey_max_elements(cli):
    result = cli(["eval", "sum(x)", "--set", "x=ones(50)", "--max-elements", "10"])
    assert_bad_input(result, ["--set x", "50 elements", "limit of 10"])
    assert result.err.splitlines()[1:] == ["ones(50)", "^^^^"]  # the value keeps its caret
    argv = ["eval", "x*2", "--set", "x=[1,2]", "--wrt", "x", "--max-elements", "10"]
    result = cli([*argv, "--grad-output", "ones(20)"])
    assert_bad_input(result, ["--grad-output", "20 elements", "limit of 10"])


@pytest.mark.parametrize("target", ["/dev/zero", "fifo"])
def test_program_files_must_be_regular(cli, tmp_path, target):
    import os

    if target == "fifo":
        target = str(tmp_path / "prog.ag")
        os.mkfifo(target)
    assert_bad_input(cli(["eval", "-f", target]), ["--file", "not a regular file"])


def test_program_files_are_bounded(cli, tmp_path):
    path = tmp_path / "big.ag"
    with open(path, "wb") as handle:
        handle.truncate(17 * 2**20)  # sparse: 17 MiB that take no disk
    assert_bad_input(cli(["eval", "-f", str(path)]), ["--file", "17.0 MiB", "more than"])
