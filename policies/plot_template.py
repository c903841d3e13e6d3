"""The plot template policy: an honest, deterministic, offline baseline for plot tasks.

It reads the task's CSV header and first rows, picks the chart the prompt asks for (the chart
words the plot judge also reads), and writes a tidy script: constrained layout, labelled axes
with units, a title, the legend outside the data, readable font sizes. It answers with
matplotlib, or seaborn/plotly when the prompt names them. It is generic on purpose: it does not
understand the request beyond chart words, column names and a few phrases (sorting, bins,
moving averages, stacking), so trained policies have a floor to beat.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

from aesenv.kinds.plot.judge import CHART_KINDS
from aesenv.tasks import Task
from policies.base import register_policy

UNITS = {"c": "°C", "mm": "mm", "pct": "%", "kmh": "km/h", "kg": "kg", "cm": "cm", "k": "thousands",
         "m": "millions", "usd": "USD", "twh": "TWh"}
# Which chart to draw when a prompt names several (a scatter "with a regression line" is a scatter).
PRIORITY = ("heatmap", "pie", "box", "violin", "histogram", "scatter", "area", "multi", "bar", "line")


@dataclass
class Columns:
    names: list[str]
    numeric: list[str]
    label: str | None  # the categorical or date column the values are indexed by
    group: str | None  # a second categorical column that splits rows into series (long format)
    date: str | None


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def read_columns(text: str) -> Columns:
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:200]
    numeric = [c for i, c in enumerate(header) if body and all(_is_number(r[i]) for r in body if len(r) > i)]
    categorical = [c for c in header if c not in numeric]
    date = next((c for i, c in enumerate(header)
                 if body and re.fullmatch(r"\d{4}-\d{2}-\d{2}", body[0][i] if len(body[0]) > i else "")), None)
    year = next((c for c in numeric if c.lower() == "year"), None)
    label = date or (categorical[0] if categorical else year)
    if label in numeric:
        numeric = [c for c in numeric if c != label]
    group = next((c for c in categorical if c != label and len({r[header.index(c)] for r in body}) <= 8), None)
    if group is None and label and label != date and label in categorical:
        values = {r[header.index(label)] for r in body}
        if len(values) <= 8 and len(body) > 2 * len(values):  # repeated values: it splits rows into series
            group, label = label, None
    return Columns(header, numeric, label, group, date)


def humanize(column: str) -> str:
    parts = column.split("_")
    unit = UNITS.get(parts[-1].lower()) if len(parts) > 1 else None
    words = " ".join(parts[:-1] if unit else parts)
    words = words[:1].upper() + words[1:]
    return f"{words} ({unit})" if unit else words


def find_title(prompt: str, fallback: str) -> str:
    """A quoted title, else the subject of the first sentence ("a bar chart of X, sorted" -> X)."""
    quoted = re.search(r"(?:title[d:]?|title it)\s*['\"“‘]([^'\"”’]{3,80})['\"”’]", prompt, re.I)
    if quoted:
        return quoted.group(1)
    sentence = re.split(r"(?<=[.!?])\s", prompt.strip())[0]
    sentence = re.sub(r"^(?:use \w+ to )?(?:draw|make|create|plot|build)\s+(?:an? |the )?", "", sentence, flags=re.I)
    m = re.search(r"\b(?:of|showing|comparing)\s+(?:the\s+)?(.+)", sentence)
    text = (m.group(1) if m else sentence).strip(" ,.")
    text = re.split(r",|\(| with | so | as a | and overlay | — | - |; ", text)[0].strip()
    if len(text.split()) < 2 or re.match(r"(figure|grid|subplots?|chart|plot)\b", text, re.I):
        return fallback
    return (text[:1].upper() + text[1:])[:70]


def chart_kind(prompt: str) -> str:
    low = prompt.lower()
    wanted = [k for k in PRIORITY if re.search(CHART_KINDS[k], low)]
    return wanted[0] if wanted else "bar"


def mentioned_order(prompt: str, names: list[str]) -> list[str]:
    """Columns in the order the prompt mentions them (by name or by their first word)."""
    low = prompt.lower()
    found = []
    for name in names:
        key = name.lower().split("_")[0]
        pos = low.find(key)
        if pos >= 0:
            found.append((pos, name))
    return [n for _, n in sorted(found)] + [n for n in names if n not in {f for _, f in found}]


class Script:
    """Lines of the answer, with the pieces every chart shares."""

    def __init__(self, task: Task, cols: Columns, library: str) -> None:
        self.task, self.cols, self.library = task, cols, library
        subject = [humanize(n).split(" (")[0].lower() for n in cols.numeric[:4]]
        listed = ", ".join(subject[:-1]) + (" and " if len(subject) > 1 else "") + subject[-1] if subject else ""
        self.title = find_title(task.prompt, (listed[:1].upper() + listed[1:] + (
            f" by {humanize(cols.label or cols.group).lower()}" if cols.label or cols.group else "")) or "Chart")
        self.lines = ["import pandas as pd"]
        if library != "plotly":
            self.lines += ["import matplotlib.pyplot as plt", "import numpy as np"]
        if library == "seaborn":
            self.lines.append("import seaborn as sns")
        if library == "plotly":
            self.lines.append("import plotly.express as px")
        self.lines += ["", 'df = pd.read_csv("data.csv")']
        if cols.date:
            self.lines.append(f'df["{cols.date}"] = pd.to_datetime(df["{cols.date}"])')
        if library != "plotly":
            self.lines.append('plt.rcParams.update({"font.size": 11})')

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def axes(self, size: str = "(9, 5.5)") -> None:
        self.add(f"fig, ax = plt.subplots(figsize={size}, constrained_layout=True)")

    def finish(self, xlabel: str | None, ylabel: str | None, legend: bool = False) -> str:
        if self.library != "plotly":
            self.add(f"ax.set_title({self.title!r}, fontsize=14)")
            if xlabel:
                self.add(f"ax.set_xlabel({xlabel!r})")
            if ylabel:
                self.add(f"ax.set_ylabel({ylabel!r})")
            if legend:
                self.add('ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)')
        return "\n".join(self.lines) + "\n"


def _line(s: Script, c: Columns) -> str:
    s.axes()
    x = c.label or c.names[0]
    if c.group:
        y = c.numeric[0]
        s.add(f'for name, part in df.groupby("{c.group}", sort=False):',
              f'    ax.plot(part["{x}"], part["{y}"], marker="o", markersize=3, linewidth=2, label=name)')
        ylabel, legend = humanize(y), True
    else:
        for y in c.numeric:
            s.add(f'ax.plot(df["{x}"], df["{y}"], linewidth=2, label={humanize(y)!r})')
        ylabel, legend = humanize(c.numeric[0]) if len(c.numeric) == 1 else "Value", len(c.numeric) > 1
        window = re.search(r"(\d+)-day moving average", s.task.prompt)
        if window and len(c.numeric) == 1:
            s.add(f'ax.plot(df["{x}"], df["{c.numeric[0]}"].rolling({window.group(1)}).mean(), linewidth=2, '
                  f'label="{window.group(1)}-day moving average")')
            legend = True
    if c.date:
        s.add("fig.autofmt_xdate()")
    s.add('ax.grid(alpha=0.3)')
    return s.finish(humanize(x), ylabel, legend)


def _bar(s: Script, c: Columns) -> str:
    prompt = s.task.prompt.lower()
    x = c.label or c.names[0]
    horizontal = "horizontal" in prompt
    if re.search(r"sorted|descending|largest|best seller", prompt) and len(c.numeric) == 1:
        s.add(f'df = df.sort_values("{c.numeric[0]}", ascending={horizontal})')
    s.axes("(10, 6)" if horizontal else "(9, 5.5)")
    if len(c.numeric) == 1:
        y = c.numeric[0]
        call = "barh" if horizontal else "bar"
        s.add(f'ax.{call}(df["{x}"], df["{y}"], color="#3b6ea5")',
              f'ax.grid(axis="{"x" if horizontal else "y"}", alpha=0.3)', "ax.set_axisbelow(True)")
        labels = (humanize(y), humanize(x)) if horizontal else (humanize(x), humanize(y))
        if not horizontal:
            s.add('plt.setp(ax.get_xticklabels(), rotation=30 if len(df) > 6 else 0, ha="right" if len(df) > 6 '
                  'else "center")')
        return s.finish(*labels)
    series = c.numeric
    if "stacked" in prompt:
        s.add("bottom = np.zeros(len(df))", f"for column in {series!r}:",
              f'    ax.bar(df["{x}"], df[column], bottom=bottom, label=column.capitalize())',
              "    bottom += df[column].to_numpy()")
    else:
        s.add(f"columns = {series!r}", "width = 0.8 / len(columns)", "positions = np.arange(len(df))",
              "for i, column in enumerate(columns):",
              '    ax.bar(positions + (i - (len(columns) - 1) / 2) * width, df[column], width, label=column)',
              f'ax.set_xticks(positions, df["{x}"])')
    s.add('ax.grid(axis="y", alpha=0.3)', "ax.set_axisbelow(True)")
    return s.finish(humanize(x), "Value" if "stacked" not in prompt else "Responses", legend=True)


def _scatter(s: Script, c: Columns) -> str:
    y, x = mentioned_order(s.task.prompt, c.numeric)[:2]
    if not re.search(r"\bagainst\b|\bvs\.?\b|\bversus\b", s.task.prompt.lower()):
        x, y = y, x
    regression = "regression" in s.task.prompt.lower()
    s.axes("(8, 6)")
    if s.library == "seaborn" and regression:
        s.add(f'sns.regplot(data=df, x="{x}", y="{y}", ax=ax, scatter_kws={{"alpha": 0.7}}, '
              'line_kws={"color": "#c0392b"})')
    elif c.group:
        s.add(f'for name, part in df.groupby("{c.group}"):',
              f'    ax.scatter(part["{x}"], part["{y}"], alpha=0.75, s=28, label=name)')
    else:
        s.add(f'ax.scatter(df["{x}"], df["{y}"], alpha=0.75, s=28)')
        if regression:
            s.add(f'slope, intercept = np.polyfit(df["{x}"], df["{y}"], 1)',
                  f'xs = np.linspace(df["{x}"].min(), df["{x}"].max(), 100)',
                  'ax.plot(xs, slope * xs + intercept, color="#c0392b", linewidth=2)')
    s.add("ax.grid(alpha=0.3)")
    return s.finish(humanize(x), humanize(y), legend=bool(c.group) and not regression)


def _histogram(s: Script, c: Columns) -> str:
    y = c.numeric[0]
    bins = re.search(r"(\d+)\s+bins", s.task.prompt)
    s.axes()
    s.add(f'ax.hist(df["{y}"], bins={bins.group(1) if bins else 20}, color="#3b6ea5", edgecolor="white")')
    legend = "mean" in s.task.prompt.lower()
    if legend:
        s.add(f'mean = df["{y}"].mean()',
              'ax.axvline(mean, color="#c0392b", linestyle="--", linewidth=2, label=f"Mean = {mean:.1f}")')
    s.add('ax.grid(axis="y", alpha=0.3)', "ax.set_axisbelow(True)")
    return s.finish(humanize(y), "Count", legend)


def _heatmap(s: Script, c: Columns) -> str:
    s.add(f"corr = df[{c.numeric!r}].corr()")
    s.axes("(7.5, 6)")
    s.add('image = ax.imshow(corr, cmap="RdBu_r", vmin=-1, vmax=1)',
          'fig.colorbar(image, ax=ax, label="Correlation")',
          "ax.set_xticks(range(len(corr)), corr.columns, rotation=30, ha='right')",
          "ax.set_yticks(range(len(corr)), corr.columns)",
          "for i in range(len(corr)):", "    for j in range(len(corr)):",
          "        value = corr.iat[i, j]",
          '        ax.text(j, i, f"{value:.2f}", ha="center", va="center", '
          'color="white" if abs(value) > 0.6 else "black")')
    return s.finish(None, None)


def _distribution(kind: str):
    def build(s: Script, c: Columns) -> str:
        group = c.group or c.label
        y = c.numeric[0]
        order = [g for g in re.findall(r"\b[A-Z][a-z]{1,3}\b", s.task.prompt)]
        s.add(f'order = [g for g in {order!r} if g in set(df["{group}"])] or list(dict.fromkeys(df["{group}"]))')
        s.axes()
        if s.library == "seaborn" or kind == "violin":
            if s.library != "seaborn":
                s.lines.insert(1, "import seaborn as sns")
            call = "violinplot" if kind == "violin" else "boxplot"
            s.add(f'sns.{call}(data=df, x="{group}", y="{y}", order=order, ax=ax, color="#7fa7d9")')
        else:
            s.add(f'ax.boxplot([df.loc[df["{group}"] == g, "{y}"] for g in order], patch_artist=True, '
                  'boxprops={"facecolor": "#c9daf0"}, medianprops={"color": "#c0392b"})',
                  "ax.set_xticks(range(1, len(order) + 1), order)")
        s.add('ax.grid(axis="y", alpha=0.3)', "ax.set_axisbelow(True)")
        return s.finish(humanize(group), humanize(y))
    return build


def _pie(s: Script, c: Columns) -> str:
    x, y = c.label or c.names[0], c.numeric[0]
    s.axes("(7, 7)")
    s.add(f'ax.pie(df["{y}"], labels=df["{x}"], autopct="%1.0f%%", startangle=90, counterclock=False, '
          'pctdistance=0.75, wedgeprops={"edgecolor": "white"})', 'ax.axis("equal")')
    return s.finish(None, None)


def _multi(s: Script, c: Columns) -> str:
    x = c.label or c.names[0]
    panels = c.numeric[:4]
    rows = 2 if len(panels) > 2 else 1
    cols = 2 if len(panels) > 1 else 1
    s.add(f"fig, axes = plt.subplots({rows}, {cols}, figsize=(11, 7.5), constrained_layout=True)",
          f"panels = {[(p, humanize(p)) for p in panels]!r}",
          "for ax, (column, label) in zip(np.ravel(axes), panels):",
          f'    ax.plot(df["{x}"], df[column], marker="o", linewidth=2)',
          "    ax.set_title(label)",
          f"    ax.set_xlabel({humanize(x)!r})",
          "    ax.set_ylabel(label)",
          "    ax.grid(alpha=0.3)",
          '    plt.setp(ax.get_xticklabels(), rotation=45, ha="right")',
          f"fig.suptitle({s.title!r}, fontsize=15)")
    return "\n".join(s.lines) + "\n"


def _area(s: Script, c: Columns) -> str:
    x = c.label or c.names[0]
    s.axes()
    s.add(f"columns = {c.numeric!r}",
          f'ax.stackplot(df["{x}"], [df[col] for col in columns], labels=[col.capitalize() for col in columns], '
          "alpha=0.85)", f'ax.set_xlim(df["{x}"].min(), df["{x}"].max())', 'ax.grid(alpha=0.3)')
    return s.finish(humanize(x), "Consumption (TWh)" if "twh" in s.task.prompt.lower() else "Value", legend=True)


def _plotly(s: Script, c: Columns, kind: str) -> str:
    x = c.label or c.names[0]
    y = c.numeric[0]
    if kind == "line":
        color = f', color="{c.group}"' if c.group else ""
        s.add(f'fig = px.line(df, x="{x}", y="{y}"{color}, markers=True, title={s.title!r})')
    else:
        if re.search(r"sorted|descending", s.task.prompt.lower()):
            s.add(f'df = df.sort_values("{y}", ascending=False)')
        s.add(f'fig = px.bar(df, x="{x}", y="{y}", title={s.title!r})')
    s.add(f"fig.update_layout(xaxis_title={humanize(x)!r}, yaxis_title={humanize(y)!r}, "
          'template="plotly_white", font={"size": 14})')
    return "\n".join(s.lines) + "\n"


BUILDERS = {"line": _line, "bar": _bar, "scatter": _scatter, "histogram": _histogram, "heatmap": _heatmap,
            "box": _distribution("box"), "violin": _distribution("violin"), "pie": _pie, "multi": _multi,
            "area": _area}


def write_script(task: Task) -> str:
    """A complete script for the task (its data file is `data.csv`)."""
    if "data.csv" not in task.data_files:
        raise ValueError(f"task {task.id} has no data.csv")
    cols = read_columns(task.data_files["data.csv"])
    prompt = task.prompt.lower()
    library = "plotly" if "plotly" in prompt else "seaborn" if "seaborn" in prompt else "matplotlib"
    kind = chart_kind(task.prompt)
    script = Script(task, cols, library)
    if library == "plotly":
        return _plotly(script, cols, "line" if kind == "line" else "bar")
    return BUILDERS[kind](script, cols)


@register_policy("plot-template")
class PlotTemplatePolicy:
    """Deterministic offline baseline for plot tasks; the registry passes an argument it does not need."""

    name = "plot-template"

    def __init__(self, arg: str = "") -> None:
        self.arg = arg

    async def generate(self, task: Task) -> str:
        return f"Here is a script that reads data.csv and draws the chart.\n\n```python\n{write_script(task)}```\n"
