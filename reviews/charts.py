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


def y_ticks(peak: int, *, height: int = 170, base: int = 190, steps: int = 2) -> list[tuple[int, int]]:
    """Return (y, value) gridline positions for a vertical bar chart whose tallest bar is ``peak``."""
    peak = max(peak, 1)
    values = sorted({round(peak * step / steps) for step in range(steps + 1)})
    return [(base - round(value * height / peak), value) for value in values]
