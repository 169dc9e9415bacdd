"""Lay out the dashboard's charts as SVG coordinates; the template draws them, with a table beside each."""

from dataclasses import dataclass

LABEL_WIDTH = 190  # room for the category names left of the bars
BAR_ROOM = 330  # the longest bar; its count is written after it


@dataclass(frozen=True)
class HBar:
    label: str
    count: int
    series: str
    x: int
    y: int
    width: int

    @property
    def end(self) -> int:
        return self.x + self.width


Groups = list[tuple[str, list[tuple[str, int]]]]


def hbars(groups: Groups, *, row: int = 20, gap: int = 10) -> tuple[list[HBar], int]:
    """Lay out horizontal bars: one group per category, one bar per series; return bars and the height.

    ``groups`` is ``[(category, [(series, count), ...]), ...]``; bars share one
    scale so lengths compare across the chart.
    """
    peak = max([count for _, series in groups for _, count in series] + [1])
    bars, y = [], 8
    for label, series in groups:
        for index, (name, count) in enumerate(series):
            width = round(count * BAR_ROOM / peak)
            bars.append(HBar(label if index == 0 else "", count, name, LABEL_WIDTH, y, width))
            y += row
        y += gap
    return bars, y + 24  # and room for the axis title


def axis_top(peak: int, *, most_ticks: int = 5) -> tuple[int, int]:
    """The top of a counts axis and its tick step: whole numbers in steps of 1, 2 or 5 times a power of ten.

    The axis ends on the first tick at or above ``peak``, so every gridline is a
    count a person can read off (0, 1, 2, 3 rather than 0, 2, 3).
    """
    peak = max(peak, 1)
    magnitude = 1
    while True:
        for unit in (1, 2, 5):
            step = unit * magnitude
            if -(-peak // step) <= most_ticks - 1:
                return -(-peak // step) * step, step
        magnitude *= 10


def y_ticks(top: int, step: int, *, height: int = 170, base: int = 190) -> list[tuple[int, int]]:
    """Return (y, value) gridline positions from 0 to ``top`` for a vertical bar chart."""
    return [(base - round(value * height / top), value) for value in range(0, top + 1, step)]


@dataclass(frozen=True)
class Bar:
    x: int
    y: int
    height: int
    series: str
    count: int


OUTCOME_SERIES = ["approve", "reject", "request_changes"]


def outcome_bars(
    outcomes_by_day: list[dict], *, height: int = 170, base: int = 190
) -> tuple[list[Bar], list, list[tuple[int, int]]]:
    """Lay out a grouped bar chart of daily outcomes: its bars, x labels and y gridlines, on one scale."""
    top, step = axis_top(max([day[name] for day in outcomes_by_day for name in OUTCOME_SERIES] + [1]))
    bars, labels = [], []
    for index, day in enumerate(outcomes_by_day):
        left = 50 + index * 90
        labels.append((left, day["day"]))
        for offset, name in enumerate(OUTCOME_SERIES):
            bar_height = round(day[name] * height / top)
            bars.append(Bar(left + offset * 24, base - bar_height, bar_height, name, day[name]))
    return bars, labels, y_ticks(top, step, height=height, base=base)
