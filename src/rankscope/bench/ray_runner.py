"""Configurations as Ray tasks: ``rankscope bench --ray``.

Each configuration to run becomes one Ray task that runs :meth:`RunInputs.run
<rankscope.bench.runner.RunInputs.run>`, the code a local run runs, in a fresh worker process
(``max_calls=1``: no memory, caches or imports carried over from another configuration, and a
crash takes only its own configuration down). Everything else stays in this process, the
driver: the folder lock, the corpus scan, the checkpoint keys, and, as each task finishes, its
run files and checkpoint (an interrupted Ray run resumes like a local one and loses no finished
configuration); results.json is assembled here exactly as in a local run.

Workers read the suite's files themselves, at the same absolute paths as the driver (a local
cluster shares the filesystem; a multi-machine cluster needs them on a filesystem every node
mounts at that path): shipping the corpus through the object store would hold a copy of it in
memory, which the streamed benchmark avoids. A worker checks first that the corpus is there and
has the driver's size, and otherwise records the configuration as failed, naming its host.

``ray`` is imported only here, and only when a Ray run starts (the ``ray`` extra).
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

from rankscope.bench.config_record import ConfigRecord, Stage
from rankscope.bench.runner import PendingConfig, RemoteRun, Reporter, RunInputs
from rankscope.errors import RankscopeError
from rankscope.suite.schema import BenchConfig
from rankscope.util.extras import install_command

INSTALL_HINT = f"install the ray extra: {install_command('ray')}"
#: the address that starts a new local cluster (Ray's own name for it)
LOCAL = "local"


@dataclass(frozen=True)
class RayOptions:
    """Where and how configurations run on Ray.

    ``address``: ``None`` (or ``"local"``) starts a new local cluster for the run; ``"auto"``
    joins an existing one as Ray finds it (``RAY_ADDRESS``, else the cluster ``ray start``
    started on this machine), ``"HOST:PORT"`` the one whose head is there, and
    ``"ray://host:10001"`` connects through Ray Client. When this process is already connected
    (``ray.init()`` called before), that connection is used as it is and left open.
    ``cpus_per_config``: CPUs each configuration's task reserves (default: the suite's
    ``concurrency``, the threads its queries run in), so that a node runs only as many
    configurations at once as it has CPUs for.
    """

    address: str | None = None
    cpus_per_config: float | None = None

    def __post_init__(self) -> None:
        if self.cpus_per_config is not None and not self.cpus_per_config > 0:
            raise RankscopeError(
                f"CPUs per configuration must be more than 0 (got {self.cpus_per_config:g}); "
                "Ray takes fractions such as 0.5"
            )

    def check_installed(self) -> None:
        ray_module()

    def run(
        self,
        inputs: RunInputs,
        pending: Sequence[PendingConfig],
        store: Callable[[PendingConfig, ConfigRecord], ConfigRecord],
        report: Reporter,
    ) -> RemoteRun:
        """Run ``pending`` as Ray tasks; ``store`` checkpoints each record as it arrives."""
        return run_on_ray(inputs, pending, store, report, self)


@dataclass(frozen=True)
class TaskOutcome:
    """What a configuration's task returns: its record, and when it ran on which machine
    (``time.time()`` there: compared only with other tasks on the same machine)."""

    record: ConfigRecord
    host: str
    started: float
    finished: float


def ray_module() -> ModuleType:
    """The ``ray`` package, or a :class:`RankscopeError` saying how to install it."""
    try:
        import ray
    except ImportError as error:
        raise RankscopeError(
            f"running configurations on Ray needs the ray package ({error}); {INSTALL_HINT}"
        ) from None
    return ray


def run_on_ray(
    inputs: RunInputs,
    pending: Sequence[PendingConfig],
    store: Callable[[PendingConfig, ConfigRecord], ConfigRecord],
    report: Reporter,
    options: RayOptions,
) -> RemoteRun:
    """The records of ``pending``, each run as one Ray task and stored as soon as it ends."""
    if not pending:
        return RemoteRun({}, [])  # everything came from checkpoints: no cluster needed
    cpus = options.cpus_per_config or float(inputs.settings.concurrency)
    done: dict[str, ConfigRecord] = {}
    spans: list[TaskOutcome] = []
    with connected(options.address) as ray:
        _check_fits(ray, cpus)
        task = ray.remote(num_cpus=cpus, max_calls=1, max_retries=0)(run_task)
        shared = ray.put(inputs)
        expected = corpus_file(inputs)
        running = {
            task.options(name=f"rankscope:{p.config.name}").remote(shared, p.config, expected): p
            for p in pending
        }
        try:
            while running:
                ready, _ = ray.wait(list(running), num_returns=1)
                for ref in ready:
                    item = running.pop(ref)
                    try:
                        outcome: TaskOutcome = ray.get(ref)
                        record = outcome.record
                        spans.append(outcome)
                    except ray.exceptions.RayError as error:
                        record = failed_record(item.config, inputs, None, _task_error(error))
                    report.start(item.config, total=1)
                    report.advance(1)
                    done[item.config.name] = store(item, record)
        finally:
            for ref in running:  # interrupted: stop what is still running
                ray.cancel(ref, force=True)
    return RemoteRun(done, side_by_side_warnings(spans))


def side_by_side_warnings(outcomes: Sequence[TaskOutcome]) -> list[str]:
    """A warning per machine that ran successful configurations at the same time: they
    shared its CPUs, caches and memory bandwidth, so their timings are not those of a
    configuration running alone (quality is unaffected)."""
    by_host: dict[str, list[TaskOutcome]] = {}
    for outcome in outcomes:
        if outcome.record.ok:
            by_host.setdefault(outcome.host, []).append(outcome)
    warnings = []
    for host, runs in sorted(by_host.items()):
        # the most tasks running at one moment: +1 at each start, -1 at each end (ends first)
        events = sorted([(o.started, 1) for o in runs] + [(o.finished, -1) for o in runs])
        at_once = most = 0
        for _, step in events:
            at_once += step
            most = max(most, at_once)
        if most >= 2:
            warnings.append(
                f"with --ray, up to {most} configurations ran at the same time on {host} "
                f"({', '.join(o.record.name for o in runs)}): they shared its CPUs, so their "
                "index times and latencies are not those of a configuration running alone "
                "(quality is unaffected); for timings, give --ray-cpus the CPU count of a "
                "node, or run without --ray"
            )
    return warnings


@contextmanager
def connected(address: str | None) -> Iterator[ModuleType]:
    """``ray``, connected to the cluster ``address`` names (see :class:`RayOptions`); a
    connection made here is closed again (a local cluster started here stops)."""
    ray = ray_module()
    if ray.is_initialized():
        yield ray
        return
    target = address or LOCAL
    kwargs: dict[str, Any] = {"address": target, "logging_level": logging.WARNING}
    if target == LOCAL:
        kwargs["include_dashboard"] = False  # the plain ray package has no dashboard
        # a cluster started for one benchmark sends Ray's usage statistics nowhere, unless
        # the user asked for them
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    else:
        _check_reachable(target)
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError) as error:
        where = "a new local cluster" if target == LOCAL else target
        raise RankscopeError(
            f"cannot start or reach the Ray cluster ({where}): {error}",
        ) from None
    try:
        yield ray
    finally:
        ray.shutdown()


def _check_reachable(address: str) -> None:
    """Refuse a cluster address nothing answers at: Ray would keep retrying for minutes."""
    if address == "auto":
        address = os.environ.get("RAY_ADDRESS", "")
    host, colon, port = address.removeprefix("ray://").rpartition(":")
    if not colon or not port.isdigit() or not host:
        return  # auto without RAY_ADDRESS, or a form Ray itself explains
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=10):
            pass
    except OSError as error:
        raise RankscopeError(
            f"nothing answers at the Ray cluster address {address} ({error}); give the address "
            "of a running cluster's head: HOST:PORT (port 6379 unless it was started with "
            "another) or ray://HOST:10001 for Ray Client"
        ) from None


def _check_fits(ray: ModuleType, cpus: float) -> None:
    """Refuse a task no node can hold: Ray would wait for such a node forever."""
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    largest = max((float(n.get("Resources", {}).get("CPU", 0)) for n in nodes), default=0.0)
    if largest < cpus:
        raise RankscopeError(
            f"each configuration reserves {cpus:g} CPUs but the largest node of the Ray "
            f"cluster has {largest:g}, so no configuration could start; reserve fewer with "
            "--ray-cpus (or lower the suite's concurrency)"
        )


@dataclass(frozen=True)
class CorpusFile:
    """Where the corpus is, and its size (``None`` for a folder, ``-1`` when missing)."""

    path: str
    size: int | None


def corpus_file(inputs: RunInputs) -> CorpusFile | None:
    """The corpus file or folder as seen from this machine (``None``: no path, e.g. the
    Python docstrings corpus or ir_datasets)."""
    relative = getattr(inputs.corpus, "path", None)
    if not isinstance(relative, str):
        return None
    path = inputs.base_dir / relative
    if not path.exists():
        return CorpusFile(str(path), -1)
    return CorpusFile(str(path), path.stat().st_size if path.is_file() else None)


def run_task(inputs: RunInputs, config: BenchConfig, expected: CorpusFile | None) -> TaskOutcome:
    """A configuration's Ray task: check that this node sees the driver's corpus, run it."""
    started = time.time()
    record = _checked_run(inputs, config, expected)
    return TaskOutcome(record, socket.gethostname(), started, time.time())


def _checked_run(
    inputs: RunInputs, config: BenchConfig, expected: CorpusFile | None
) -> ConfigRecord:
    here = corpus_file(inputs)
    if expected is not None and here != expected:
        seen = "missing" if here is None or here.size == -1 else f"{here.size} bytes"
        theirs = "a folder" if expected.size is None else f"{expected.size} bytes"
        error = (
            f"index failed: the corpus {expected.path} on host {socket.gethostname()} is not "
            f"the driver's (here: {seen}; the driver's: {theirs}): Ray workers read "
            "the suite's files at the driver's paths, so put them on a filesystem every node "
            "mounts at that path"
        )
        return failed_record(config, inputs, "index", error)
    return inputs.run(config)


def failed_record(
    config: BenchConfig, inputs: RunInputs, stage: Stage | None, error: str
) -> ConfigRecord:
    """A failed configuration's record, for a failure outside :func:`run_config`."""
    now = datetime.now(UTC).isoformat(timespec="seconds")
    return ConfigRecord(
        name=config.name,
        config=config.json_safe(),
        status="failed",
        stage=stage,
        error=error,
        started_at=now,
        finished_at=now,
        host=socket.gethostname() if stage is not None else None,
        warmup=inputs.settings.warmup,
        repeats=inputs.settings.repeats,
    )


def _task_error(error: Exception) -> str:
    """A Ray failure (a worker that died, a cancelled task, an error outside the benchmark
    code) in one line."""
    lines = [line for line in str(error).splitlines() if line.strip()]
    first = lines[0] if lines else ""
    return f"the Ray task failed: {type(error).__name__}: {first}".rstrip(": ")
