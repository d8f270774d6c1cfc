"""show: terminal views, exports and the HTML report. It reads results; it never starts Spark."""
