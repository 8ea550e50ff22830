"""What the service computes from stored rows: summaries with intervals, click judgments,
A/B and interleaving comparisons, threshold calibration, exports, alerts and their webhooks.
Reads through the store; the statistics themselves are :mod:`rankscope.online`'s."""
