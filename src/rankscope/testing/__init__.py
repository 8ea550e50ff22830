"""Servers on loopback for tests, rankscope's and yours (docs/testing.md).

Public, exported here (each loads its module on first use, :mod:`rankscope.lazy`):
:mod:`~rankscope.testing.llm_server` (a scripted Anthropic/OpenAI provider),
:mod:`~rankscope.testing.es_server` (a small Elasticsearch/OpenSearch),
:mod:`~rankscope.testing.pgcluster` (a throwaway PostgreSQL cluster),
:mod:`~rankscope.testing.typesense` (a throwaway Typesense server),
:mod:`~rankscope.testing.webhooks` (a webhook receiver) and
:mod:`~rankscope.testing.regression` (``assert_no_regression``: the regression gate of
``rankscope check`` inside a test). Internal, in the source tree only (not
in the wheel): :mod:`~rankscope.testing.traffic`, :mod:`~rankscope.testing.online_sim` and
:mod:`~rankscope.testing.click_study`, the simulations behind the online loop's tests and
bench/ONLINE_SIMULATIONS.md. Nothing here is imported by ``import rankscope``.
"""

from typing import TYPE_CHECKING

from rankscope.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.testing.es_server import EsServer, Fault, Flavor, Recorded
    from rankscope.testing.llm_server import (
        Action,
        Api,
        ControlHandler,
        ControlRequest,
        ErrorBody,
        Expire,
        Fail,
        Handler,
        Hang,
        Lost,
        Raw,
        RecordedRequest,
        Reply,
        Reset,
        ScriptedLLMServer,
        estimate_tokens,
    )
    from rankscope.testing.pgcluster import (
        INSTALL_HINT,
        SUPERUSER,
        PgCluster,
        PgClusterError,
        find_bindir,
        reap_stale_clusters,
    )
    from rankscope.testing.regression import assert_no_regression
    from rankscope.testing.typesense import TypesenseServer, TypesenseServerError
    from rankscope.testing.webhooks import Received, WebhookReceiver


__all__ = [
    "INSTALL_HINT",
    "SUPERUSER",
    "Action",
    "Api",
    "ControlHandler",
    "ControlRequest",
    "ErrorBody",
    "EsServer",
    "Expire",
    "Fail",
    "Fault",
    "Flavor",
    "Handler",
    "Hang",
    "Lost",
    "PgCluster",
    "PgClusterError",
    "Raw",
    "Received",
    "Recorded",
    "RecordedRequest",
    "Reply",
    "Reset",
    "ScriptedLLMServer",
    "TypesenseServer",
    "TypesenseServerError",
    "WebhookReceiver",
    "assert_no_regression",
    "estimate_tokens",
    "find_bindir",
    "reap_stale_clusters",
]

__getattr__, __dir__ = lazy_exports(globals())
