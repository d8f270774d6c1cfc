"""Flame graphs as SVG from collapsed stacks (``frame;frame;frame COUNT`` per line).

Brendan Gregg's flamegraph.pl is Perl and async-profiler 4 draws HTML only, so
numaspark draws the SVG itself: a frame is a rectangle as wide as its samples,
children stacked above their parent, widths in proportion, narrow frames left
out. Hovering shows the frame, its samples and share (an SVG ``<title>``).
"""

from __future__ import annotations

import hashlib
from html import escape
from pathlib import Path

WIDTH, ROW, FONT = 1200, 16, 11
MIN_WIDTH = 0.5  # pixels: narrower frames are not drawn


def parse_collapsed(text: str) -> dict:
    """A tree of ``{"name", "samples", "children": {name: node}}`` from collapsed stacks."""
    root = {"name": "all", "samples": 0, "children": {}}
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        samples = int(count)
        root["samples"] += samples
        node = root
        for frame in stack.split(";"):
            node = node["children"].setdefault(frame, {"name": frame, "samples": 0, "children": {}})
            node["samples"] += samples
    return root


def _colour(name: str) -> str:
    """Warm colours, stable per frame name; Java frames greener, native/kernel redder."""
    h = int(hashlib.md5(name.encode()).hexdigest()[:6], 16)
    if "/" in name or "." in name and not name.endswith("]"):
        return f"rgb({50 + h % 80},{160 + h % 70},{50 + h % 50})"
    return f"rgb({200 + h % 55},{80 + h % 100},{40 + h % 40})"


def render_svg(root: dict, title: str) -> str:
    depth = _depth(root)
    height = (depth + 2) * ROW + 30
    total = root["samples"] or 1
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'font-family="monospace" font-size="{FONT}">',
        '<rect width="100%" height="100%" fill="#f8f8f0"/>',
        f'<text x="{WIDTH / 2}" y="18" text-anchor="middle" font-size="14">{escape(title)}</text>',
    ]

    stack = [(root, 0.0, 0)]  # iterative: JVM stacks can be deeper than Python's recursion limit
    while stack:
        node, x, level = stack.pop()
        width = node["samples"] / total * WIDTH
        if width < MIN_WIDTH:
            continue
        y = height - (level + 1) * ROW - 4
        share = node["samples"] / total
        label = escape(node["name"])
        parts.append(
            f"<g><title>{label} ({node['samples']} samples, {share:.2%})</title>"
            f'<rect x="{x:.2f}" y="{y}" width="{width:.2f}" height="{ROW - 1}" '
            f'fill="{_colour(node["name"])}" rx="2"/>'
        )
        characters = int(width / (FONT * 0.62))
        if characters >= 3:
            name = node["name"]
            text = name if len(name) <= characters else name[: characters - 2] + ".."
            parts.append(f'<text x="{x + 3:.2f}" y="{y + ROW - 4}">{escape(text)}</text>')
        parts.append("</g>")
        child_x = x
        for child in sorted(node["children"].values(), key=lambda c: c["name"]):
            stack.append((child, child_x, level + 1))
            child_x += child["samples"] / total * WIDTH
    parts.append("</svg>")
    return "\n".join(parts)


def _depth(root: dict) -> int:
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in node["children"].values())
    return deepest


def write_flame_graph(collapsed: Path, target: Path, title: str) -> Path | None:
    """``target`` SVG from a collapsed-stacks file; None when it holds no samples."""
    root = parse_collapsed(collapsed.read_text(errors="replace"))
    if not root["samples"]:
        return None
    target.write_text(render_svg(root, f"{title}: {root['samples']} samples"))
    return target
