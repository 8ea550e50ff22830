"""Helpers every layer of rankscope uses, each in one home: writing a file atomically
(:mod:`~rankscope.util.files`), SQLite files (:mod:`~rankscope.util.sqlite`), spreadsheet-safe CSV
cells (:mod:`~rankscope.util.csvcells`), Markdown tables and HTML text
(:mod:`~rankscope.util.markup`), the natural order of ids (:mod:`~rankscope.util.order`), the
message for a missing optional dependency (:mod:`~rankscope.util.extras`) and whether a process
is there, its state, CPU time and memory (:mod:`~rankscope.util.proc`).

They sit at the bottom of the package (they import only :mod:`rankscope.errors`), so that a
feature uses them without depending on another feature that happened to hold one.
"""
