"""The online loop as pure functions, usable without the service: implicit judgments from
clicks (:mod:`~rankscope.online.clicks`), A/B comparison of arms (:mod:`~rankscope.online.ab`),
interleaving summaries (:mod:`~rankscope.online.interleaving`), regression checks
(:mod:`~rankscope.online.alerts`), threshold calibration (:mod:`~rankscope.online.calibration`)
and stratified sampling for judging (:mod:`~rankscope.online.sampling`). ``rankscope serve``
applies them to what it collects; docs/service.md describes each.
"""
