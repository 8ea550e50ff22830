"""Command-line interface; see :mod:`rankscope.cli.app`."""
