"""On a terminal too narrow for a value, the value is folded over lines, never cut to an
ellipsis (issue 58, item 1): a column rich would cut (`no_wrap`, or a view's own
`overflow="ellipsis"`) keeps every character."""

from __future__ import annotations

import io

from conftest import topology_file
from rich.console import Console
from rich.table import Table

from numaspark.cli.terminal import Terminal
from numaspark.report.console import device_table
from numaspark.topology import load_xml

LONG = "spark.executor.resource.gpu.discoveryScript=/opt/numaspark/discover_resources.py"


def _terminal(width: int) -> tuple[Terminal, io.StringIO]:
    term = Terminal()
    screen = io.StringIO()
    term.out = Console(file=screen, force_terminal=True, width=width, color_system=None)
    return term, screen


def _column(shown: str, index: int) -> str:
    """A table's column as one text: its cell lines' fragments in order (the field between
    the ``index``-th and the next `│` of each body line)."""
    return "".join(
        line.split("│")[index].strip() for line in shown.splitlines() if line.count("│") > index
    )


def test_a_value_too_wide_for_a_terminal_is_folded_not_cut() -> None:
    term, screen = _terminal(40)
    table = Table("key", "value")
    table.columns[1].no_wrap = True  # what rich would end with "…" at this width
    table.add_row("conf", LONG)
    term.print(table)
    shown = screen.getvalue()
    assert "…" not in shown
    assert LONG in _column(shown, 2), shown  # every character, in order, over folded lines


def test_the_device_table_on_a_narrow_terminal_keeps_each_bus_id() -> None:
    """The DGX-2's devices (shared/topologies) on a 60-column terminal: each PCI bus id whole."""
    topology = load_xml(topology_file("nvidiaDGX2.xml"))
    term, screen = _terminal(60)
    term.print(device_table(topology))
    shown = screen.getvalue()
    assert "…" not in shown
    bus_ids = _column(shown, 4)
    for device in topology.devices:
        assert device.pci_busid in bus_ids, shown
