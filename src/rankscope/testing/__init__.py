"""Servers on loopback for tests, rankscope's and yours (docs/testing.md).

Public: :mod:`~rankscope.testing.llm_server` (a scripted Anthropic/OpenAI provider),
:mod:`~rankscope.testing.es_server` (a small Elasticsearch/OpenSearch),
:mod:`~rankscope.testing.pgcluster` (a throwaway PostgreSQL cluster),
:mod:`~rankscope.testing.typesense` (a throwaway Typesense server),
:mod:`~rankscope.testing.webhooks` (a webhook receiver) and
:mod:`~rankscope.testing.regression` (``assert_no_regression``: the regression gate of
``rankscope check`` inside a test), each with the names its ``__all__`` lists. Internal:
:mod:`~rankscope.testing.traffic`, :mod:`~rankscope.testing.online_sim` and
:mod:`~rankscope.testing.click_study`, the simulations behind the online loop's tests and
bench/ONLINE_SIMULATIONS.md. Nothing here is imported by ``import rankscope``.
"""
