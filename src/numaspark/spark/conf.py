"""numaspark's settings over a user's own: one merge, with what it replaced in words.

An application brings its own Spark settings (its spark-submit line's ``--conf``, options and
properties file). numaspark's plan decides some keys (executor size, cores, the plugin,
the event log it reads back); those replace the user's values, and each replacement is
named in one line. Keys that hold lists are merged instead, the user's items first, so a
user's ``--jars`` keeps the affinity plugin's jar and the plan's JVM options are added to
the user's, not put in their place.
"""

from __future__ import annotations

from numaspark.workloads.submitline import merge_java_options, merge_list

# key -> how its items are joined
LIST_KEYS: dict[str, str] = {
    "spark.jars": ",",
    "spark.plugins": ",",
    "spark.submit.pyFiles": ",",
    "spark.files": ",",
    "spark.archives": ",",
    "spark.jars.packages": ",",
    "spark.driver.extraJavaOptions": " ",
    "spark.executor.extraJavaOptions": " ",
    "spark.driver.extraClassPath": ":",
    "spark.executor.extraClassPath": ":",
}
# why numaspark sets a key the user had set, where "the plan" is not the reason
WHY = {
    "spark.eventLog.dir": "numaspark reads the event log back, so it writes it in the run "
    "directory",
    "spark.eventLog.enabled": "numaspark reads the event log back",
    "spark.eventLog.compress": "numaspark reads the event log back",
    # numaspark sets neither where the user has (spark/address.py): only numaspark's own
    # --conf replaces a value of the application's
    "spark.driver.host": "numaspark's --conf gives it",
    "spark.driver.bindAddress": "numaspark's --conf gives it",
}


def layered(base: dict[str, str], over: dict[str, str]) -> dict[str, str]:
    """``over`` on top of ``base``: list keys joined (``base``'s items first), the rest
    replaced. numaspark's own layers (the plan, then the run's --conf and what a target adds)
    meet here, so that a class path or a plugin given in one is not lost to another's."""
    conf = dict(base)
    for key, value in over.items():
        conf[key] = _join(key, conf[key], value) if key in LIST_KEYS and conf.get(key) else value
    return conf


def merged(user: dict[str, str], ours: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """``ours`` over ``user``: list keys joined, the rest replaced; and one line per user
    setting that was replaced by a different value."""
    conf = dict(user)
    notes = []
    for key, value in ours.items():
        if key in LIST_KEYS and conf.get(key):
            conf[key] = _join(key, conf[key], value)
            continue
        if key in conf and conf[key] != value:
            why = WHY.get(key, "numaspark's placement decides it")
            notes.append(f"your {key}={conf[key]} was replaced by {value}: {why}")
        conf[key] = value
    return conf, notes


def _join(key: str, first: str, second: str) -> str:
    separator = LIST_KEYS[key]
    if separator == ",":
        return merge_list(first, second)
    if separator == " ":
        return merge_java_options(first, second)
    return separator.join(dict.fromkeys(p for p in (*first.split(":"), *second.split(":")) if p))
