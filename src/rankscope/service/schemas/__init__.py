"""The service's JSON bodies by resource (camelCase on the wire): ``records``, ``events``,
``experiments``, ``alerts``; what they share (the envelope, date ranges) in ``common``. The
bodies a client sends are the wire models of :mod:`rankscope.collect.wire`."""
