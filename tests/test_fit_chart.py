"""`agrad fit`'s loss chart does not lie, and --every rows stay one line (issue 13).

The chart's first column is the first loss itself (not a bucket average), each column
spans its bucket's minimum to maximum (so oscillation shows), and a log axis is labelled
with real values. Histories below are built by hand, their extremes known by algebra."""

from __future__ import annotations

import numpy as np
import pytest

from agrad.cli.render.fit import CHART_HEIGHT, chart


def _grid(text):
    """The chart's plotting area: rows of (label, cells)."""
    rows = []
    for line in text.splitlines()[:CHART_HEIGHT]:
        label, _, cells = line.partition("┤") if "┤" in line else line.partition("│")
        rows.append((label.strip(), cells))
    return rows


def test_the_first_column_is_the_real_first_loss():
    """21 then a fast fall: a bucket average would put the first point near 3.4."""
    history = [21.0] + [1.0 / (k + 1) for k in range(599)]
    rows = _grid(chart(history))
    assert rows[0][0] == "21"  # the top label is the first loss, the largest
    assert rows[0][1][0] == "•"  # and column 0 is drawn there
    assert "first loss 21," in chart(history)


def test_oscillation_stays_visible():
    """Losses alternating 1 and 9 for 600 steps: every column spans the whole range."""
    history = [9.0 if k % 2 else 1.0 for k in range(600)]
    rows = _grid(chart(history))
    columns = len(rows[0][1])
    for x in range(1, columns):
        assert all(cells[x] in "│•" for _, cells in rows), x
    assert rows[0][0] == "9" and rows[-1][0] == "1"


def test_a_log_axis_is_labelled_with_real_values():
    history = list(np.logspace(4, -2, 300))  # 1e4 down to 1e-2
    text = chart(history)
    rows = _grid(text)
    assert rows[0][0] == "1e+04" and rows[-1][0] == "0.01"
    middle = next(label for label, _ in rows[1:-1] if label)
    # row 4 of 0..9 sits at log10 = 4 - 6·4/9 = 1.33: the label is 10^1.33 = 21.5, a loss
    assert float(middle) == pytest.approx(10 ** (4 - 6 * 4 / 9), rel=0.01)
    assert "log scale" in text


@pytest.mark.parametrize("value", [6.0, 0.0, -2.5])
def test_a_flat_curve_is_drawn_at_its_value_on_a_true_axis(value):
    """A loss that never changes (its parameters do not reach it): the points sit on the
    row labelled with that value, and the labels above and below are above and below it."""
    rows = _grid(chart([value] * 50))
    labelled = [(float(label), cells) for label, cells in rows if label]
    top, middle, bottom = labelled
    assert middle[0] == pytest.approx(value) and set(middle[1]) == {"•"}
    assert top[0] > value > bottom[0]
    assert all(set(cells) <= {" "} for label, cells in rows if cells is not middle[1])


def test_a_linear_axis_says_so():
    assert "linear scale" in chart([3.0, 2.0, 1.5, 1.2])


def test_every_rows_of_matrix_parameters_stay_one_line(cli):
    result = cli(["fit", "sum((W @ x - y)**2)", "--wrt", "W", "--set", "x=[1,2,3]",
                  "--set", "y=[1,0]", "--set", "W=zeros(2,3)", "--lr", "0.04", "--steps",
                  "60", "--every", "20"])  # fmt: skip
    assert result.code == 0, result.err
    rows = [line for line in result.out.splitlines() if line.startswith("step ")]
    assert len(rows) == 4  # steps 0, 20, 40, 60: one line each
    assert all("W=shape (2, 3) in [" in row and "norm" in row for row in rows)
    assert all(len(row) <= 80 for row in rows)


def test_fit_chart_through_the_cli(cli):
    result = cli(["fit", "sum((w*x-y)**2)", "--wrt", "w", "--set", "x=[1,2]", "--set",
                  "y=[5,7]", "--set", "w=0", "--lr", "0.05", "--steps", "40"])  # fmt: skip
    assert result.code == 0 and result.err == ""
    # loss at w = 0 is 5² + 7² = 74, the chart's first point and largest value
    assert "first loss 74," in result.out
    assert max(len(line) for line in result.out.splitlines()) <= 80
