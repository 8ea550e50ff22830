"""A rich progress bar for long benchmarks (one task per configuration)."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from rankscope.suite.sweep import BenchConfig


class RichReporter:
    """Shows one bar per configuration: indexing plus every query execution."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
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
        self._task = self.progress.add_task(config.name, total=total)

    def advance(self, steps: int = 1) -> None:
        if self._task is not None:
            self.progress.advance(self._task, steps)

    def finish(self, config: BenchConfig, status: str, resumed: bool) -> None:
        if resumed:
            self.progress.add_task(f"{config.name} (checkpoint)", total=1, completed=1)
        elif self._task is not None:
            label = config.name if status == "ok" else f"[red]{config.name} (failed)[/red]"
            self.progress.update(self._task, description=label)
            self._task = None
