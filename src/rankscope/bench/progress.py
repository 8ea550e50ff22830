"""A rich progress bar for long benchmarks (one task per configuration)."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from rankscope.suite.schema import BenchConfig


class RichReporter:
    """Shows one bar per configuration: indexing (one step, however long: embedding the
    corpus happens there) plus every query execution (a step each), and which of the two it
    is doing."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.progress = Progress(
            TextColumn("{task.description}"),
            TextColumn("{task.fields[stage]}", style="dim"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total} steps"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self._task: TaskID | None = None

    def __enter__(self) -> RichReporter:
        self.progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.progress.stop()

    def start(self, config: BenchConfig, total: int) -> None:
        # the first step is indexing (embedding the documents, for dense engines); then one
        # step per query execution
        stage = "indexing (embedding, building)" if config.needs_embeddings else "indexing"
        self._task = self.progress.add_task(config.name, total=total, stage=stage)

    def advance(self, steps: int = 1) -> None:
        if self._task is not None:
            self.progress.advance(self._task, steps)
            self.progress.update(self._task, stage="searching")

    def finish(self, config: BenchConfig, status: str, resumed: bool) -> None:
        if resumed:
            self.progress.add_task(
                f"{config.name} (checkpoint)", total=1, completed=1, stage="reused"
            )
        elif self._task is not None:
            label = config.name if status == "ok" else f"[red]{config.name} (failed)[/red]"
            self.progress.update(self._task, description=label, stage="done")
            self._task = None
