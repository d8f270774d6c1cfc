import re

import pytest

from numaspark.errors import UsageError
from numaspark.topology import CpuSet


@pytest.mark.parametrize(
    ("text", "items", "printed"),
    [
        ("", [], ""),
        ("3", [3], "3"),
        ("0-3,8-11", [0, 1, 2, 3, 8, 9, 10, 11], "0-3,8-11"),
        ("0,1", [0, 1], "0-1"),  # Linux prints any run as a range
        ("0,2,4", [0, 2, 4], "0,2,4"),
        ("8-11, 0-3", [0, 1, 2, 3, 8, 9, 10, 11], "0-3,8-11"),
        ("0-15:4", [0, 4, 8, 12], "0,4,8,12"),
        ("5,5,5", [5], "5"),
        ("3-3", [3], "3"),  # a range of one, as the kernel accepts it
        ("0-3:1", [0, 1, 2, 3], "0-3"),  # a stride of 1 is every CPU
        ("1,,3,", [1, 3], "1,3"),  # empty parts are skipped, not the end of the list
    ],
)
def test_list_format_round_trip(text, items, printed):
    cpus = CpuSet.parse(text)
    assert cpus.to_list() == items
    assert str(cpus) == printed
    assert CpuSet.parse(str(cpus)) == cpus


@pytest.mark.parametrize("bad", ["a", "1-", "x-3", "3-1", "-1", "0-3:0", "0-3:x", "1;2"])
def test_list_format_rejects_garbage(bad):
    # the message quotes the whole list the user gave, whichever part of it is wrong
    with pytest.raises(UsageError, match=re.escape(f"bad CPU list {bad!r}")):
        CpuSet.parse(bad)


@pytest.mark.parametrize(
    ("bitmap", "printed"),
    [
        ("0x0", ""),
        ("0x00000003", "0-1"),
        ("0x0000f06f", "0-3,5-6,12-15"),
        ("0x000f000f,0x000f000f", "0-3,16-19,32-35,48-51"),
        # hwloc writes zero words as empty strings (POWER8 file in shared/topologies)
        ("0x00000303,0x03030000,,0x0", "80-81,88-89,96-97,104-105"),
        ("0xf...f,0x00000001", "0"),
    ],
)
def test_hwloc_bitmaps(bitmap, printed):
    assert str(CpuSet.from_hwloc(bitmap)) == printed


def test_a_bad_hwloc_bitmap_is_quoted_whole():
    with pytest.raises(UsageError, match=re.escape("bad CPU bitmap '0x1,0xzz'")):
        CpuSet.from_hwloc("0x1,0xzz")


def test_kernel_mask_format():
    assert str(CpuSet.from_mask("00000000,00000003")) == "0-1"
    assert str(CpuSet.from_mask("00000001,00000000")) == "32"
    with pytest.raises(UsageError, match="bad CPU bitmap '0000000g'"):
        CpuSet.from_mask("0000000g")


def test_set_operations():
    a, b = CpuSet.parse("0-3"), CpuSet.parse("2-5")
    assert str(a | b) == "0-5"
    assert str(a & b) == "2-3"
    assert str(a - b) == "0-1"
    assert CpuSet.parse("1-2").issubset(a)
    assert a.isdisjoint(CpuSet.parse("8"))
    assert a.first() == 0
    assert 2 in a and 9 not in a
    assert len(CpuSet.union([a, b, CpuSet.parse("9")])) == 7
    assert hash(CpuSet.parse("0-1")) == hash(CpuSet([1, 0]))
