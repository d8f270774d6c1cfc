"""Parsing a user's spark-submit line (numaspark.workloads.submitline): no Spark, no files."""

import builtins
import os

import pytest

from numaspark.errors import UsageError
from numaspark.workloads.application import read_properties
from numaspark.workloads.submitline import (
    SubmitLine,
    merge_java_options,
    merge_list,
    parse_submit_line,
)

# Every option of Spark's SparkSubmitOptionParser that takes a value and leaves an application
# to run, with the SubmitLine field it fills (None: kept in `other`).
VALUE_OPTIONS = {
    "--archives": "archives",
    "--class": "main_class",
    "--conf": "conf",
    "--deploy-mode": "deploy_mode",
    "--driver-class-path": "driver_class_path",
    "--driver-cores": "driver_cores",
    "--driver-default-class-path": None,
    "--driver-java-options": "driver_java_options",
    "--driver-library-path": "driver_library_path",
    "--driver-memory": "driver_memory",
    "--executor-cores": "executor_cores",
    "--executor-memory": "executor_memory",
    "--files": "files",
    "--jars": "jars",
    "--keytab": None,
    "--master": "master",
    "--remote": None,
    "--name": "name",
    "--num-executors": "num_executors",
    "--packages": "packages",
    "--exclude-packages": "exclude_packages",
    "--principal": None,
    "--properties-file": "properties_file",
    "--proxy-user": None,
    "--py-files": "py_files",
    "--queue": None,
    "--repositories": "repositories",
    "--total-executor-cores": "total_executor_cores",
}
LIST_FIELDS = {
    "archives",
    "files",
    "jars",
    "packages",
    "exclude_packages",
    "py_files",
    "repositories",
}
# A value each option accepts (--deploy-mode takes only client here; --conf takes KEY=VALUE).
VALUES = {"--deploy-mode": "client", "--conf": "spark.k=v"}


def expected_effect(option: str, value: str) -> tuple[str, object]:
    """The SubmitLine field an option fills and what it should hold after one use."""
    field = VALUE_OPTIONS[option]
    if field is None:
        return "other", ((option, value),)
    if field == "conf":
        return "conf", {"spark.k": "v"}
    return field, (value,) if field in LIST_FIELDS else value


def parse(*args: str) -> SubmitLine:
    return parse_submit_line(["spark-submit", *args])


@pytest.mark.parametrize("option", sorted(VALUE_OPTIONS))
def test_value_option_separate_form_fills_its_field(option):
    value = VALUES.get(option, "v1")
    line = parse(option, value, "app.py", "x")
    field, expected = expected_effect(option, value)
    assert getattr(line, field) == expected
    assert (line.app, line.app_args) == ("app.py", ("x",))


@pytest.mark.parametrize("option", sorted(VALUE_OPTIONS))
def test_value_option_equals_form_fills_its_field(option):
    value = VALUES.get(option, "v1")
    line = parse(f"{option}={value}", "app.py")
    field, expected = expected_effect(option, value)
    assert getattr(line, field) == expected
    assert line == parse(option, value, "app.py")


@pytest.mark.parametrize(
    ("args", "other"),
    [
        (["--supervise"], (("--supervise", None),)),
        (["--verbose"], (("--verbose", None),)),
        (["-v"], (("--verbose", None),)),
        (["--load-spark-defaults"], (("--load-spark-defaults", None),)),
        (["--verbose=yes"], (("--verbose", None),)),  # spark-submit ignores a switch's =value
    ],
)
def test_switches_are_kept_in_other_under_their_canonical_name(args, other):
    assert parse(*args, "app.py").other == other


def test_conf_alias_c_and_last_value_wins():
    line = parse("-c", "spark.a=1", "--conf", "spark.a=2", "--conf=spark.b=x=y", "app.py")
    assert line.conf == {"spark.a": "2", "spark.b": "x=y"}


def test_conf_keeps_an_empty_value_and_spaces_as_given():
    line = parse("--conf", "spark.e=", "--conf", "spark.opts=-Da=1 -Db=2", "app.py")
    assert line.conf == {"spark.e": "", "spark.opts": "-Da=1 -Db=2"}


def test_other_options_keep_their_order():
    line = parse("--queue", "q", "-v", "--proxy-user", "bob", "--queue=r", "app.py")
    assert line.other == (
        ("--queue", "q"),
        ("--verbose", None),
        ("--proxy-user", "bob"),
        ("--queue", "r"),
    )


def test_scalar_options_last_one_wins():
    line = parse("--master", "local[2]", "--master=local[8]", "--name", "a", "--name", "b", "x.py")
    assert (line.master, line.name) == ("local[8]", "b")


def test_value_is_the_next_argument_even_when_it_looks_like_an_option():
    line = parse("--name", "--verbose", "--driver-java-options", "-Xss4m -Dk=v", "app.py")
    assert line.name == "--verbose"
    assert line.driver_java_options == "-Xss4m -Dk=v"
    assert line.other == ()


def test_jars_accumulate_and_split_on_commas_dropping_empty_items():
    line = parse("--jars", "a.jar,,b.jar,", "--jars=c.jar", "--jars", " d.jar , ", "app.jar")
    assert line.jars == ("a.jar", "b.jar", "c.jar", "d.jar")


def test_list_options_split_and_accumulate():
    line = parse("--py-files", "a.py,b.zip", "--py-files", "c.egg", "--files", "f,g", "app.py")
    assert line.py_files == ("a.py", "b.zip", "c.egg")
    assert line.files == ("f", "g")


def test_app_args_are_passed_through_verbatim():
    tail = ["a b", "'quoted'", '"dq"', "$HOME", "*.csv", "--", "--conf", "x=y", "-v", "", "--help"]
    line = parse("--master", "local[4]", "job.py", *tail)
    assert line.app == "job.py"
    assert line.app_args == tuple(tail)
    assert line.conf == {}
    assert line.other == ()


def test_first_non_option_is_the_application():
    line = parse("--class", "org.Main", "spark-internal", "app.py", "--class", "X")
    assert line.app == "spark-internal"
    assert line.app_args == ("app.py", "--class", "X")
    assert line.main_class == "org.Main"


@pytest.mark.parametrize(
    ("app", "kind"),
    [
        ("job.py", "python"),
        ("s3a://bucket/dir/job.py", "python"),
        ("target/app-1.0.jar", "jar"),
        ("spark-internal", "other"),
        ("job.R", "other"),
    ],
)
def test_kind_follows_the_application_suffix(app, kind):
    assert parse(app).kind == kind


@pytest.mark.parametrize(
    "program",
    [
        "spark-submit",
        "/opt/spark/bin/spark-submit",
        "spark-submit.cmd",
        r"C:\spark\bin\spark-submit.cmd",
    ],
)
def test_program_forms_are_accepted_and_kept_as_given(program):
    assert parse_submit_line([program, "app.py"]).program == program


def test_deploy_mode_client_is_accepted():
    assert parse("--deploy-mode", "client", "app.py").deploy_mode == "client"
    # cluster mode is the run's to judge, by its --master (tests/test_applications.py)
    assert parse("--deploy-mode=cluster", "app.jar").deploy_mode == "cluster"


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        ([], "starting with spark-submit"),
        (["python", "app.py"], "starting with spark-submit"),
        (["spark-submit-x", "app.py"], "starting with spark-submit"),
        (["/usr/bin/spark-shell", "app.py"], "starting with spark-submit"),
        (["spark-submit", "--master"], "--master needs a value"),
        (["spark-submit", "--name", "n", "--jars"], "--jars needs a value"),
        (["spark-submit", "-c"], "-c needs a value"),
        (["spark-submit", "--conf", "spark.x", "app.py"], "--conf 'spark.x' is not KEY=VALUE"),
        (["spark-submit", "--conf=spark.x", "app.py"], "--conf 'spark.x' is not KEY=VALUE"),
        (["spark-submit", "-c", "=v", "app.py"], "is not KEY=VALUE"),
        (["spark-submit", "--nope", "app.py"], "unknown spark-submit option '--nope'"),
        (["spark-submit", "--nope=1", "app.py"], "unknown spark-submit option '--nope'"),
        (["spark-submit", "--", "app.py"], "unknown spark-submit option '--'"),
        (["spark-submit", "-c=a=b", "app.py"], "unknown spark-submit option '-c=a=b'"),
        (["spark-submit", "--name=", "app.py"], "unknown spark-submit option '--name='"),
        (["spark-submit", "--a\nb", "app.py"], "unknown spark-submit option"),
        (["spark-submit"], "no application"),
        (["spark-submit", "--master", "local[4]", "-v"], "no application"),
        (["spark-submit", "--deploy-mode", "local", "app.py"], "neither client nor cluster"),
        (["spark-submit", "--kill", "driver-1"], "--kill makes spark-submit kill"),
        (["spark-submit", "--status=driver-1"], "--status makes spark-submit report"),
        (["spark-submit", "--help"], "--help makes spark-submit print its help"),
        (["spark-submit", "-h", "app.py"], "--help makes spark-submit print its help"),
        (["spark-submit", "--version"], "--version makes spark-submit print its version"),
        (["spark-submit", "--usage-error"], "--usage-error makes spark-submit print"),
    ],
)
def test_bad_lines_raise_a_one_line_usage_error(argv, fragment):
    with pytest.raises(UsageError) as caught:
        parse_submit_line(argv)
    message = str(caught.value)
    assert fragment in message
    assert "\n" not in message and "\r" not in message
    assert ": " in message  # what was wrong, then how to fix it


def test_unknown_option_message_points_to_spark_submit_help():
    with pytest.raises(UsageError, match="listed by `spark-submit --help`"):
        parse("--executor-memroy", "4g", "app.py")


def test_deploy_mode_flag_overrides_the_conf_as_in_spark_submit():
    line = parse("--deploy-mode", "client", "-c", "spark.submit.deployMode=cluster", "app.py")
    assert line.deploy_mode == "client"


RICH = [
    "/opt/spark/bin/spark-submit",
    "--master",
    "local[16]",
    "--deploy-mode=client",
    "--class",
    "org.example.Main",
    "--name",
    "nightly etl",
    "-c",
    "spark.sql.shuffle.partitions=64",
    "--conf=spark.driver.extraJavaOptions=-XX:+UseG1GC -Dk=v",
    "--conf",
    "spark.empty=",
    "--jars",
    "a.jar,b.jar",
    "--jars",
    "c.jar",
    "--py-files",
    "deps.zip",
    "--files",
    "f.txt",
    "--archives",
    "env.tgz#env",
    "--packages",
    "g:a:1",
    "--exclude-packages",
    "g:b",
    "--repositories",
    "https://r",
    "--properties-file",
    "props.conf",
    "--driver-memory",
    "8g",
    "--driver-cores",
    "2",
    "--driver-java-options",
    "-Dx=1",
    "--driver-library-path",
    "/lib",
    "--driver-class-path",
    "/cp",
    "--executor-memory",
    "-1",
    "--executor-cores",
    "4",
    "--num-executors",
    "3",
    "--total-executor-cores",
    "12",
    "--queue",
    "q",
    "-v",
    "--supervise",
    "--proxy-user",
    "",
    "--principal",
    "p",
    "--keytab",
    "k",
    "--remote",
    "sc://h",
    "--driver-default-class-path",
    "/d",
    "--load-spark-defaults",
    "app.jar",
    "--conf",
    "x=y",
    "a b",
    "$HOME",
    "*.csv",
    "--",
]


def test_round_trip_to_argv_then_parse_gives_the_same_line():
    line = parse_submit_line(RICH)
    argv = line.to_argv()
    assert parse_submit_line(argv) == line
    assert argv[0] == RICH[0]
    assert argv[-6:] == RICH[-6:]
    assert line.jars == ("a.jar", "b.jar", "c.jar")
    assert ("--proxy-user", "") in line.other
    assert line.executor_memory == "-1"


def test_to_argv_puts_options_then_app_then_app_args():
    line = parse(
        "-v", "--conf=spark.a=1", "--jars", "x.jar,y.jar", "--master", "local", "j.py", "-v"
    )
    assert line.to_argv() == [
        "spark-submit",
        "--conf",
        "spark.a=1",
        "--jars",
        "x.jar,y.jar",
        "--master",
        "local",
        "--verbose",
        "j.py",
        "-v",
    ]


def test_parsing_does_not_touch_the_filesystem(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the parser touched the filesystem")

    for name in ("stat", "lstat", "listdir", "scandir", "access"):
        monkeypatch.setattr(os, name, refuse)
    monkeypatch.setattr(builtins, "open", refuse)
    line = parse_submit_line(RICH)
    assert parse_submit_line(line.to_argv()) == line


def test_submit_line_is_frozen():
    line = parse("app.py")
    with pytest.raises(AttributeError):
        line.app = "other.py"  # type: ignore[misc]


def test_merge_list_keeps_first_occurrences_in_order():
    assert merge_list("a.jar,b.jar", ["b.jar", "c.jar"]) == "a.jar,b.jar,c.jar"


def test_merge_list_drops_empty_items_and_none():
    assert merge_list(None, "", ",a,,", [], ["", " b ", "a"], None) == "a,b"
    assert merge_list() == ""


def test_merge_list_splits_items_of_an_iterable_on_commas():
    assert merge_list(("x,y", "y,z"), "z,w") == "x,y,z,w"


def test_merge_java_options_joins_in_order_without_dedupe():
    assert merge_java_options("-Xss4m", None, "", "  ", "-Da=1 -Xss4m ") == "-Xss4m -Da=1 -Xss4m"
    assert merge_java_options() == ""


def test_a_properties_file_is_read_by_javas_rules(tmp_path):
    """What Spark's Utils.getPropertiesFromFile reads (java.util.Properties, values trimmed):
    continuation lines, escapes, ':' and whitespace separators, '!' comments; a regex of
    `key value` lines got the first two wrong."""
    props = tmp_path / "spark.conf"
    props.write_text(
        "! a comment\n"
        "spark.executor.extraJavaOptions = -XX:+UseG1GC \\\n"
        "    -XX:MaxGCPauseMillis=200\n"
        "spark.app.name: caf\\u00e9 etl\n"
        "spark.driver.extraClassPath   /opt/a.jar:/opt/b.jar\n"
        "spark.key\\=with\\=equals = x \n",
        encoding="utf-8",
    )
    assert read_properties(str(props)) == {
        "spark.executor.extraJavaOptions": "-XX:+UseG1GC -XX:MaxGCPauseMillis=200",
        "spark.app.name": "café etl",
        "spark.driver.extraClassPath": "/opt/a.jar:/opt/b.jar",
        "spark.key=with=equals": "x",
    }


def test_a_properties_file_keeps_javas_comments_escapes_and_line_ends(tmp_path):
    """The rest of java.util.Properties' rules: '#' and indented '!' comments and blank lines
    skipped, ':' with no spaces, a continuation's indentation dropped (an escaped space kept),
    an escaped separator in a key, a value ending in an escaped backslash (no continuation),
    escapes in a value, and a key alone (an empty value)."""
    props = tmp_path / "spark.conf"
    props.write_text(
        "# a hash comment\n"
        "   ! an indented bang comment\n"
        "\n"
        "spark.a:1\n"
        "spark.b=two\\\n"
        "       \\ lines\n"
        "spark.c\\:d = e\\\\\n"
        "spark.e f\\tg\n"
        "spark.empty\n",
        encoding="utf-8",
    )
    assert read_properties(str(props)) == {
        "spark.a": "1",
        "spark.b": "two lines",
        "spark.c:d": "e\\",
        "spark.e": "f\tg",
        "spark.empty": "",
    }
