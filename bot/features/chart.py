"""The answer as a picture: plain chart data from an answer, a PNG from the data, and the chart button.

`chart_data` is pure (no matplotlib): the requirement as a stacked bar of its components beside the memory of the
fit and of each alternative, grouped by card count -- a set is drawn per GPU (its per-GPU share of the requirement
beside one card's memory), because that is the figure that decides whether a set starts. Where the layouts have a
calibrated speed (engine.speed), a second panel below puts each one's monthly price against the decode speed each of
the request's users gets, with the estimate's range and the request's speed target: what more money buys.
`render_png` imports matplotlib (Agg, no pyplot: the bot renders in a worker thread, and pyplot's global state is
not thread-safe) only when a chart is asked for, so the cold start of `cardfit ask` never pays for it.
"""
from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.features.ask import answer_for
from bot.features.callbacks import ChartButton
from bot.features.caller import Caller
from bot.features.core import Core
from bot.features.feature import notice
from bot.features.reply import CallbackResult
from bot.texts.i18n import fmt_gb, fmt_number, fmt_usd, t, texts
from bot.texts.render import plain, render_request
from engine.answer.build import Answer
from engine.fit.selection import Layout
from engine.sizing.payload import PayloadError, decode_request
from engine.speed.estimate import SpeedEstimate

MAX_LAYOUTS = 5  # the fit and four others: more bars than that stop being readable at 900 px
CAPTION_LIMIT = 900  # Telegram's photo caption holds 1,024 characters; escaping may lengthen ours
LayoutKey = tuple[str, int]  # (card id, count)


@dataclass(frozen=True, slots=True)
class Segment:
    key: str  # what it is (a component name, "capacity"): the renderer's colour
    label: str  # in the reader's language, for the legend
    gb: float


@dataclass(frozen=True, slots=True)
class Bar:
    label: str  # under the bar (may hold a line break)
    value: str  # above the bar, formatted for the reader
    segments: tuple[Segment, ...]  # stacked, bottom first; a card's memory is one segment
    need: bool = False  # the requirement (else a card's memory)
    chosen: bool = False  # the layout the answer recommends
    holds: bool = True  # a card's memory: the layout holds the requirement
    usable_gb: float | None = None  # what the serving engine can use of this card (when the answer carries it)

    @property
    def total_gb(self) -> float:
        return sum(segment.gb for segment in self.segments)


@dataclass(frozen=True, slots=True)
class Group:
    title: str
    need_gb: float  # drawn as a dashed line across the group's bars
    bars: tuple[Bar, ...]


@dataclass(frozen=True, slots=True)
class SpeedPoint:
    """One layout in the speed panel: its monthly price against the decode speed each user gets."""

    label: str  # beside the point: the layout and its speed, in the reader's language (may hold a line break)
    monthly_usd: float  # x
    tok_s: float  # y: decode tokens/s per user at the request's users (one stream when one user)
    low: float  # the calibrated range around `tok_s` (the error bar)
    high: float
    chosen: bool = False  # the layout the answer recommends
    holds: bool = True  # the layout holds the requirement (else drawn grey: a speed it would have, not one it runs)


@dataclass(frozen=True, slots=True)
class SpeedPanel:
    title: str
    x_label: str
    y_label: str
    users: int
    target_tok_s: float | None  # the request's speed target per user: a horizontal line
    points: tuple[SpeedPoint, ...]
    x_ticks: tuple[tuple[float, str], ...]  # prices with the reader's currency format
    legend: Mapping[str, str]  # range, target, short


@dataclass(frozen=True, slots=True)
class ChartData:
    title: str
    y_label: str
    groups: tuple[Group, ...]
    caption: str  # plain text: escape it for HTML
    legend: Mapping[str, str]  # labels for the renderer's own marks: capacity, short, usable, need, chosen
    speed: SpeedPanel | None = None  # price against speed, when at least one layout drawn has a speed

    @property
    def bars(self) -> tuple[Bar, ...]:
        return tuple(bar for group in self.groups for bar in group.bars)


# -- data (pure) -------------------------------------------------------------------------------------------------

def _key(layout: Layout) -> LayoutKey:
    return layout.card.id, layout.count


def chart_layouts(answer: Answer) -> list[Layout]:
    """The layouts to draw, the recommended one first: those compared, else the fit, the policy's choice (when a
    named layout fails) and the alternatives; each once."""
    if answer.compare is not None:
        candidates = [item.layout for item in answer.compare]
    else:
        selection = answer.selection
        candidates = [] if selection is None else [
            layout for layout in (selection.fit, selection.recommended, *selection.alternatives) if layout is not None]
    payable = answer.payable
    if payable is not None:
        candidates.sort(key=lambda layout: _key(layout) != _key(payable))  # stable: the rest keep their order
    seen: set[LayoutKey] = set()
    layouts = []
    for layout in candidates:
        if _key(layout) not in seen:
            seen.add(_key(layout))
            layouts.append(layout)
    return layouts[:MAX_LAYOUTS]


def serving_usable(answer: Answer) -> dict[LayoutKey, float]:
    """The serving check's usable GB per GPU for the layout it describes (DESIGN.md Contract v2: `serving`
    describes the layout `fit` describes), when the answer carries one."""
    serving = getattr(answer, "serving", None)
    usable = getattr(serving, "usable_gb_per_gpu", None)
    fit = answer.fit
    if fit is None or not isinstance(usable, int | float) or getattr(serving, "tp", fit.count) != fit.count:
        return {}
    return {_key(fit): float(usable)}


def _label(lang: str, key: str, fallback: str) -> str:
    return t(lang, key) if key in texts("en") else fallback


def _need_bar(answer: Answer, lang: str, count: int, layout: Layout | None) -> Bar:
    requirement = answer.requirement
    assert requirement is not None
    per = layout.per_gpu if layout is not None else None
    segments: tuple[Segment, ...]
    if count > 1 and per is not None:
        segments = (Segment("weights", t(lang, "component.weights"), per.weights_gb),
                    Segment("kv_cache", t(lang, "component.kv_cache"), per.kv_cache_gb),
                    Segment("other", t(lang, "chart.other"), per.other_gb))
        total = per.total_gb
    else:
        segments = tuple(Segment(c.name, _label(lang, f"component.{c.name}", c.name), c.gb)
                         for c in requirement.components)
        total = requirement.total_gb
    return Bar(t(lang, "chart.need"), fmt_gb(lang, total), tuple(s for s in segments if s.gb > 0), need=True)


def _capacity_bar(lang: str, layout: Layout, per_gpu: bool, chosen: bool, usable: float | None) -> Bar:
    capacity = layout.card.vram_gb if per_gpu else layout.vram_gb
    label = f"{layout.label}\n" + t(lang, "chart.per_month", monthly=fmt_usd(lang, layout.monthly_usd))
    return Bar(label, fmt_gb(lang, capacity, None), (Segment("capacity", t(lang, "chart.capacity"), capacity),),
               chosen=chosen, holds=layout.valid, usable_gb=usable)


def chart_data(answer: Answer, lang: str, usable_gb_per_gpu: Mapping[LayoutKey, float] | None = None) -> ChartData:
    """The chart of a sizing answer (one with a requirement). `usable_gb_per_gpu`: what the serving engine can
    use per GPU of a layout, by (card id, count); by default the answer's own serving check, if any."""
    requirement = answer.requirement
    if requirement is None or answer.resolved is None:
        raise ValueError("only a sizing answer has a chart")
    usable = dict(serving_usable(answer) if usable_gb_per_gpu is None else usable_gb_per_gpu)
    payable = answer.payable
    by_count: dict[int, list[Layout]] = {}
    for layout in chart_layouts(answer):
        by_count.setdefault(layout.count if layout.per_gpu is not None else 1, []).append(layout)
    if not by_count:
        by_count[1] = []
    groups = []
    for count, layouts in by_count.items():
        need = _need_bar(answer, lang, count, layouts[0] if layouts else None)
        per_gpu = count > 1
        bars = [need] + [_capacity_bar(lang, layout, per_gpu, payable is not None and _key(layout) == _key(payable),
                                       usable.get(_key(layout))) for layout in layouts]
        title = t(lang, "chart.group_set", count=count) if per_gpu else t(lang, "chart.group_single")
        groups.append(Group(title, need.total_gb, tuple(bars)))
    legend = {key: t(lang, f"chart.legend.{key}") for key in ("capacity", "short", "usable", "need", "chosen")}
    return ChartData(title=plain(render_request(answer, lang)[0]), y_label=t(lang, "chart.y_label"),
                     groups=tuple(groups), caption=chart_caption(answer, lang), legend=legend,
                     speed=speed_panel(answer, lang))


def layout_speeds(answer: Answer) -> list[tuple[Layout, SpeedEstimate]]:
    """The drawn layouts that have a calibrated speed, each with it: for the layout the JSON `speed` describes,
    that estimate (the serving check's engine); for the others their own, the figure an alternative's line
    prints ("≈ N tok/s each")."""
    where = answer.serving_layout
    described = (where[0].id, where[1]) if where is not None else None
    speeds = []
    for layout in chart_layouts(answer):
        speed = answer.speed() if _key(layout) == described else layout.speed
        if speed is not None and speed.decode_tok_s > 0:
            speeds.append((layout, speed))
    return speeds


def speed_panel(answer: Answer, lang: str) -> SpeedPanel | None:
    """Monthly price against each user's decode speed for the drawn layouts; None when none has a speed (a
    training job, an image model, nothing that fits)."""
    speeds = layout_speeds(answer)
    if not speeds:
        return None
    payable = answer.payable
    users = speeds[0][1].users
    points = []
    for layout, speed in speeds:
        scale = speed.decode_tok_s_per_user / speed.decode_tok_s  # the range is the one-stream range, scaled
        key = "chart.speed.point_each" if speed.users > 1 else "chart.speed.point"
        points.append(SpeedPoint(
            label=f"{layout.label}\n" + t(lang, key, tps=fmt_number(lang, speed.decode_tok_s_per_user, 0)),
            monthly_usd=layout.monthly_usd, tok_s=speed.decode_tok_s_per_user, low=speed.low * scale,
            high=speed.high * scale, chosen=payable is not None and _key(layout) == _key(payable),
            holds=layout.valid))
    target = answer.request.target_tok_s
    title = t(lang, "chart.speed.title_users", users=users) if users > 1 else t(lang, "chart.speed.title")
    legend = {"range": t(lang, "chart.speed.range"), "short": t(lang, "chart.speed.short"),
              "chosen": t(lang, "chart.legend.chosen")}
    if target is not None:
        legend["target"] = t(lang, "chart.speed.target", tps=fmt_number(lang, target, None))
    right = max(point.monthly_usd for point in points) * SPEED_X_MARGIN  # room for the rightmost point's label
    ticks = tuple((tick, fmt_usd(lang, tick) if tick else "0") for tick in _nice_ticks(right, 4))
    return SpeedPanel(title=title, x_label=t(lang, "chart.speed.x_label"),
                      y_label=t(lang, "chart.speed.y_label_users" if users > 1 else "chart.speed.y_label"),
                      users=users, target_tok_s=target, points=tuple(points), x_ticks=ticks, legend=legend)


def chart_caption(answer: Answer, lang: str) -> str:
    """The key numbers in words: the question, the need, the fit with its spare memory and prices."""
    requirement = answer.requirement
    assert requirement is not None
    lines = [plain(render_request(answer, lang)[0]),
             t(lang, "chart.caption_need", need=fmt_gb(lang, requirement.total_gb))]
    fit, payable = answer.fit, answer.payable
    if fit is not None and not fit.valid:
        lines.append(t(lang, "chart.caption_short", layout=fit.label, vram=fmt_gb(lang, fit.vram_gb, None)))
    if payable is not None:
        lines.append(t(lang, "chart.caption_fit", layout=payable.label, vram=fmt_gb(lang, payable.vram_gb, None),
                       spare=fmt_gb(lang, payable.spare_gb), hourly=fmt_usd(lang, payable.hourly_usd),
                       monthly=fmt_usd(lang, payable.monthly_usd)))
    else:
        lines.append(t(lang, "chart.caption_no_fit"))
    caption = "\n".join(lines)
    return caption if len(caption) <= CAPTION_LIMIT else caption[:CAPTION_LIMIT - 1] + "…"


# -- the button (front-end neutral: the Telegram handler and the terminal chat both call it) ---------------------

async def press_chart(core: Core, caller: Caller, data: object, *, shared: bool = False) -> ChartData | CallbackResult:
    """The chart of the answer a button belongs to, or the stale notice for data that does not decode into one.
    Same language rule as the other answer buttons: an explicit /set lang wins, else the message's language."""
    button = ChartButton.decode(data)
    if button is None:
        return notice(caller, ChartButton.invalid_notice)
    try:
        request = decode_request(button.payload)
    except PayloadError:
        return notice(caller, ChartButton.invalid_notice)
    answer = answer_for(request, core.catalog, core.asker(caller, anonymous=shared))
    if answer.error is not None or answer.requirement is None:
        return notice(caller, ChartButton.invalid_notice)
    return chart_data(answer, caller.preferences.language or button.lang)


def chart_path(directory: str | Path, data: ChartData) -> Path:
    """Where the terminal chat writes a chart: one file per distinct chart, so pressing again overwrites it."""
    digest = hashlib.sha256(repr(data).encode()).hexdigest()[:12]
    return Path(directory) / f"chart-{digest}.png"


# -- rendering (matplotlib, imported here only) -----------------------------------------------------------------

COLOURS = {
    "weights": "#4c72b0", "kv_cache": "#dd8452", "overhead": "#937860", "other": "#bda68c",
    "optimizer": "#c44e52", "optimizer_upper": "#e8a0a2", "gradients": "#8172b3", "activations": "#55a868",
    "adapter": "#da8bc3", "capacity": "#2a9d8f", "short": "#c8c8c8",
}
HEIGHT_INCHES = 4.8
LEFT_INCHES, LEGEND_INCHES = 0.7, 2.4
MIN_PLOT_INCHES, INCHES_PER_BAR = 5.0, 0.95  # 95 px per bar fits "8x RTX 4090" and "2.808 $/Monat" at 8 pt
DPI = 100  # about 900 x 480 px: sharp in a Telegram chat, and a PNG of a few dozen KB
BAR_WIDTH = 0.7
GROUP_GAP = 0.8
# The speed panel under the memory one: its height, and the margins for the price labels below and its title above
SPEED_INCHES, SPEED_BOTTOM_INCHES, SPEED_TOP_INCHES = 3.6, 0.6, 0.45
SPEED_COLOUR, TARGET_COLOUR = "#2a9d8f", "#c44e52"
SPEED_LABEL_PT = 7.5
SPEED_X_MARGIN = 1.3  # the price axis runs 30 % past the dearest layout, so its label stays inside the panel


def render_png(data: ChartData) -> bytes:
    """The chart as PNG bytes. Safe in a worker thread: one Figure and canvas per call, no pyplot (whose current
    figure is global), and matplotlib keeps one FreeType font object per thread (font_manager.get_font passes
    threading.get_ident() to its cache), so renders in parallel threads share no drawing state."""
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.collections import LineCollection, PatchCollection
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch, Rectangle
    from matplotlib.transforms import blended_transform_factory

    layout = _Layout.of(data)
    units = layout.positions[-1] + 1.2 if layout.positions else 1.2
    plot_inches = max(MIN_PLOT_INCHES, units * INCHES_PER_BAR)  # every card's name stays readable under its bar
    width = LEFT_INCHES + plot_inches + LEGEND_INCHES
    below_inches = SPEED_INCHES if data.speed is not None else 0.0  # the speed panel goes under the memory one
    height = HEIGHT_INCHES + below_inches
    figure = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(figure)
    axes = figure.add_axes((LEFT_INCHES / width, (below_inches + 0.15 * HEIGHT_INCHES) / height, plot_inches / width,
                            0.73 * HEIGHT_INCHES / height))
    # One collection per kind of mark instead of a bar() call per segment, and the labels under the bars as plain
    # texts instead of x ticks (a matplotlib Tick costs milliseconds to build): the chart must render well under
    # 300 ms on a busy 2-core machine (benchmarks/bench_chart.py).
    axes.add_collection(PatchCollection(
        [Rectangle((x - BAR_WIDTH / 2, bottom), BAR_WIDTH, height) for x, bottom, height, _, _ in layout.rectangles],
        facecolors=[colour for *_, colour, _ in layout.rectangles],
        edgecolors=["#222222" if chosen else "white" for *_, chosen in layout.rectangles],
        linewidths=[1.6 if chosen else 0.5 for *_, chosen in layout.rectangles]))
    axes.add_collection(LineCollection(layout.need_lines, colors="#444444", linestyles="dashed", linewidths=0.9))
    if layout.usable_lines:
        axes.add_collection(LineCollection(layout.usable_lines, colors="#111111", linewidths=2.2))
    below = blended_transform_factory(axes.transData, axes.transAxes)  # x in bars, y in the axes' height
    for x, bar in zip(layout.positions, data.bars, strict=True):
        axes.text(x, -0.015, bar.label, transform=below, ha="center", va="top", fontsize=8)
        axes.text(x, bar.total_gb, bar.value + (f"\n{data.legend['chosen']}" if bar.chosen else ""), ha="center",
                  va="bottom", fontsize=8, fontweight="bold" if bar.chosen else "normal")
    for x, group in zip(layout.group_centres, data.groups, strict=True):
        axes.text(x, 1.0, group.title, transform=below, ha="center", va="bottom", fontsize=9, color="#333333")
    top = max([bar.total_gb for bar in data.bars] + [bar.usable_gb or 0 for bar in data.bars] + [1.0]) * 1.18
    axes.set_xticks([])
    axes.set_xlim(-0.6, units - 0.6)
    axes.set_ylim(0, top)
    axes.set_yticks(_nice_ticks(top))
    axes.set_ylabel(data.y_label, fontsize=9)
    axes.spines[["top", "right"]].set_visible(False)
    axes.tick_params(axis="y", labelsize=8)
    axes.grid(axis="y", alpha=0.3)
    axes.set_axisbelow(True)
    handles: list[Any] = [Patch(color=colour) for colour in layout.legend.values()]
    handles.append(Line2D([], [], color="#444444", linestyle="dashed", linewidth=0.9))
    labels = [*layout.legend, data.legend["need"]]
    if layout.usable_lines:
        handles.append(Line2D([], [], color="#111111", linewidth=2.2))
        labels.append(data.legend["usable"])
    figure.legend(handles, labels, loc="center left",
                  bbox_to_anchor=((LEFT_INCHES + plot_inches + 0.15) / width,
                                  (below_inches + 0.55 * HEIGHT_INCHES) / height), fontsize=8, frameon=False)
    figure.suptitle(data.title, fontsize=11, x=(LEFT_INCHES + plot_inches / 2) / width,
                    y=1 - 0.03 * HEIGHT_INCHES / height)
    if data.speed is not None:
        _draw_speed(figure, data.speed, (LEFT_INCHES / width, SPEED_BOTTOM_INCHES / height, plot_inches / width,
                                         (SPEED_INCHES - SPEED_BOTTOM_INCHES - SPEED_TOP_INCHES) / height),
                    legend_x=(LEFT_INCHES + plot_inches + 0.15) / width, legend_y=SPEED_INCHES * 0.5 / height)
    buffer = io.BytesIO()
    # zlib level 1: a third of the default's encoding time for a file a few KB larger (flat colours compress well)
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None}, pil_kwargs={"compress_level": 1})
    return buffer.getvalue()


def _draw_speed(figure: Any, panel: SpeedPanel, rect: tuple[float, float, float, float], legend_x: float,
                legend_y: float) -> None:
    """The speed panel: each layout's price against its per-user decode speed, the calibrated range as an error
    bar, the recommended layout as a larger outlined mark, the speed target as a dashed line."""
    from matplotlib.lines import Line2D

    axes = figure.add_axes(rect)
    points = panel.points
    for holds in (True, False):
        drawn = [point for point in points if point.holds == holds]
        if not drawn:
            continue
        colour = SPEED_COLOUR if holds else COLOURS["short"]
        below = [point.tok_s - point.low for point in drawn]
        above = [point.high - point.tok_s for point in drawn]
        axes.errorbar([point.monthly_usd for point in drawn], [point.tok_s for point in drawn], yerr=[below, above],
                      fmt="none", ecolor=colour, elinewidth=1.2, capsize=4)
        axes.scatter([point.monthly_usd for point in drawn], [point.tok_s for point in drawn],
                     s=[110 if point.chosen else 40 for point in drawn], c=colour, zorder=3,
                     edgecolors=["#222222" if point.chosen else colour for point in drawn],
                     linewidths=[1.6 if point.chosen else 0.5 for point in drawn])
    top = max([point.high for point in points] + [panel.target_tok_s or 0.0, 1.0]) * 1.2
    right = max(point.monthly_usd for point in points) * SPEED_X_MARGIN
    size = figure.get_size_inches()
    for point, (anchor_y, offset, ha, va) in zip(points, _label_places(points, right, top, rect[2] * size[0],
                                                                       rect[3] * size[1]), strict=True):
        axes.annotate(point.label, (point.monthly_usd, anchor_y), xytext=offset, textcoords="offset points",
                      ha=ha, va=va, fontsize=SPEED_LABEL_PT, fontweight="bold" if point.chosen else "normal")
    handles: list[Any] = [Line2D([], [], color=SPEED_COLOUR, marker="o", markersize=5, linestyle="-", linewidth=1.2),
                          Line2D([], [], color=SPEED_COLOUR, marker="o", markersize=9, markeredgecolor="#222222",
                                 linestyle="none")]
    labels = [panel.legend["range"], panel.legend["chosen"]]
    if any(not point.holds for point in points):
        handles.append(Line2D([], [], color=COLOURS["short"], marker="o", markersize=5, linestyle="none"))
        labels.append(panel.legend["short"])
    if panel.target_tok_s is not None:
        axes.axhline(panel.target_tok_s, color=TARGET_COLOUR, linestyle="dashed", linewidth=1.1)
        handles.append(Line2D([], [], color=TARGET_COLOUR, linestyle="dashed", linewidth=1.1))
        labels.append(panel.legend["target"])
    axes.set_xlim(0, right)
    axes.set_ylim(0, top)
    axes.set_xticks([tick for tick, _ in panel.x_ticks], [label for _, label in panel.x_ticks])
    axes.set_yticks(_nice_ticks(top, 4))
    axes.tick_params(labelsize=8)
    axes.set_xlabel(panel.x_label, fontsize=9)
    axes.set_ylabel(panel.y_label, fontsize=9)
    axes.set_title(panel.title, fontsize=10, color="#333333")
    axes.spines[["top", "right"]].set_visible(False)
    axes.grid(alpha=0.3)
    axes.set_axisbelow(True)
    figure.legend(handles, labels, loc="center left", bbox_to_anchor=(legend_x, legend_y), fontsize=8, frameon=False)


Box = tuple[float, float, float, float]  # left, bottom, right, top in inches inside the axes


def _label_places(points: tuple[SpeedPoint, ...], right: float, top: float, width_in: float,
                  height_in: float) -> list[tuple[float, tuple[float, float], str, str]]:
    """Where each point's label goes (y of its anchor, offset in points, alignment): right of the point, else left,
    above its error bar or below it -- the first place that stays inside the panel and covers no other label, mark
    or error bar (two layouts a few dollars apart at a similar speed would otherwise write over each other)."""
    def inches(point: SpeedPoint, value: float) -> tuple[float, float]:
        return point.monthly_usd / right * width_in, value / top * height_in

    gap = 7 / 72
    obstacles: list[Box] = []
    for point in points:
        x, low = inches(point, point.low)
        _, high = inches(point, point.high)
        obstacles.append((x - 0.07, low - 0.03, x + 0.07, high + 0.03))  # the error bar and its caps
    places = []
    for index, point in enumerate(points):
        lines = point.label.split("\n")
        w = max(len(line) for line in lines) * SPEED_LABEL_PT * 0.58 / 72
        h = len(lines) * SPEED_LABEL_PT * 1.25 / 72
        x, y = inches(point, point.tok_s)
        _, low = inches(point, point.low)
        _, high = inches(point, point.high)
        candidates: list[tuple[Box, tuple[float, tuple[float, float], str, str]]] = [
            ((x + gap, y - h / 2, x + gap + w, y + h / 2), (point.tok_s, (7, 0), "left", "center")),
            ((x - gap - w, y - h / 2, x - gap, y + h / 2), (point.tok_s, (-7, 0), "right", "center")),
            ((x - w / 2, high + 0.05, x + w / 2, high + 0.05 + h), (point.high, (0, 4), "center", "bottom")),
            ((x - w / 2, low - 0.05 - h, x + w / 2, low - 0.05), (point.low, (0, -4), "center", "top")),
        ]
        chosen = candidates[0]
        for box, place in candidates:
            inside = box[0] >= 0 and box[2] <= width_in and box[1] >= 0 and box[3] <= height_in
            if inside and not any(_overlap(box, other) for n, other in enumerate(obstacles) if n != index):
                chosen = (box, place)
                break
        obstacles.append(chosen[0])
        places.append(chosen[1])
    return places


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _nice_ticks(top_gb: float, most: int = 5) -> list[float]:
    """A few round gridlines from 0 up to `top_gb` (steps of 1, 2, 2.5 or 5 x a power of ten)."""
    raw = top_gb / most
    magnitude = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [i * step for i in range(int(top_gb // step) + 1)]


@dataclass(slots=True)
class _Layout:
    """Where everything goes, in data coordinates (x: one unit per bar, a gap between groups)."""

    positions: list[float]
    group_centres: list[float]
    rectangles: list[tuple[float, float, float, str, bool]]  # x, bottom, height, colour, chosen
    need_lines: list[list[tuple[float, float]]]
    usable_lines: list[list[tuple[float, float]]]
    legend: dict[str, str]  # label -> colour, in the order first drawn

    @classmethod
    def of(cls, data: ChartData) -> _Layout:
        layout = cls([], [], [], [], [], {})
        x = 0.0
        for group in data.groups:
            start = x
            for bar in group.bars:
                layout.place(x, bar, data.legend)
                x += 1
            layout.group_centres.append((start + x - 1) / 2)
            layout.need_lines.append([(start - BAR_WIDTH / 2, group.need_gb), (x - 1 + BAR_WIDTH / 2, group.need_gb)])
            x += GROUP_GAP
        return layout

    def place(self, x: float, bar: Bar, legend: Mapping[str, str]) -> None:
        self.positions.append(x)
        bottom = 0.0
        for segment in bar.segments:
            key = segment.key if bar.need or bar.holds else "short"
            colour = COLOURS.get(key, "#999999")
            self.legend.setdefault(segment.label if bar.need else legend["capacity" if bar.holds else "short"], colour)
            self.rectangles.append((x, bottom, segment.gb, colour, bar.chosen))
            bottom += segment.gb
        if bar.usable_gb is not None:
            self.usable_lines.append([(x - BAR_WIDTH / 2, bar.usable_gb), (x + BAR_WIDTH / 2, bar.usable_gb)])
