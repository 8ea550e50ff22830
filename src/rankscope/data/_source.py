"""Opening inputs: paths, open files, gzip by magic bytes; locating problems for messages."""

from __future__ import annotations

import contextlib
import gzip
import mmap
import os
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from rankscope.errors import DataWarning, FormatError, InputError

GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"
#: what Windows tools often write first in a UTF-8 text file; read as nothing (trec_eval would
#: make it part of the first query id, splitting that query's judgments)
UTF8_BOM = b"\xef\xbb\xbf"

Buffer = bytes | mmap.mmap


@dataclass(frozen=True, slots=True)
class Where:
    """Names the input in messages: a file path, or ``<dict>`` / ``<DataFrame>``.

    ``unit`` is ``"line"`` for text files (rendered as ``path:17``) and ``"row"`` for tables.
    """

    name: str
    unit: str = "line"

    def error(
        self,
        problem: str,
        *,
        at: int | None = None,
        value: object = None,
        hint: str | None = None,
        cls: type[InputError] = FormatError,
    ) -> InputError:
        if at is not None and self.unit != "line":
            return cls(f"{self.unit} {at}: {problem}", path=self.name, value=value, hint=hint)
        return cls(problem, path=self.name, line=at, value=value, hint=hint)

    def prefix(self, at: int | None) -> str:
        if at is None:
            return f"{self.name}: "
        if self.unit == "line":
            return f"{self.name}:{at}: "
        return f"{self.name}: {self.unit} {at}: "


class Warner:
    """Reports oddities through ``on_warning``; past ``limit`` messages it only counts them."""

    def __init__(self, on_warning: Callable[[str], None] | None, limit: int = 20) -> None:
        self._sink = on_warning
        self._limit = limit
        self._count = 0

    def __call__(self, message: str) -> None:
        self._count += 1
        if self._count > self._limit:
            return
        if self._sink is None:
            warnings.warn(message, DataWarning, stacklevel=4)
        else:
            self._sink(message)

    def finish(self, where: Where) -> None:
        extra = self._count - self._limit
        if extra > 0:
            msg = f"{where.name}: {extra} more warning(s) like the above were not shown"
            if self._sink is None:
                warnings.warn(msg, DataWarning, stacklevel=4)
            else:
                self._sink(msg)
        self._count = 0


@dataclass(frozen=True, slots=True)
class Loaded:
    """The raw, decompressed bytes of one input."""

    where: Where
    data: Buffer
    path: Path | None  # the file on disk, when ``data`` is that file uncompressed


def display_name(source: object) -> str:
    if isinstance(source, str | os.PathLike):
        return os.fspath(source) if isinstance(source, str) else str(Path(source))
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else "<stream>"


def path_suffixes(source: object) -> list[str]:
    """Lower-case suffixes with a trailing ``.gz`` removed (``run.tsv.gz`` -> ``[".tsv"]``)."""
    name = display_name(source)
    suffixes = [s.lower() for s in Path(name).suffixes]
    if suffixes and suffixes[-1] in (".gz", ".gzip"):
        suffixes = suffixes[:-1]
    return suffixes[-1:] if suffixes else []


def load(source: str | os.PathLike[str] | IO[Any]) -> Loaded:
    """Read a path or an open file (text or binary), decompressing gzip by its magic bytes."""
    where = Where(display_name(source))
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if not path.exists():
            raise InputError(
                "file not found", path=where.name, hint="Check the path and the working directory"
            )
        if path.is_dir():
            raise InputError("is a directory, not a file", path=where.name, hint="Give a file")
        with path.open("rb") as fh:
            head = fh.read(2)
            if head == GZIP_MAGIC:
                fh.seek(0)
                return Loaded(where, _gunzip(fh.read(), where), None)
            size = os.fstat(fh.fileno()).st_size
            if size == 0:
                return Loaded(where, b"", path)
            return Loaded(where, _mapped(fh.fileno()), path)
    raw = source.read()
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogateescape")
    if not isinstance(raw, bytes | bytearray | memoryview):
        raise InputError(
            "cannot read this object", value=type(source).__name__, hint="Pass a path or open file"
        )
    data = bytes(raw)
    if data[:2] == GZIP_MAGIC:
        data = _gunzip(data, where)
    return Loaded(where, data, None)


def _mapped(fd: int) -> mmap.mmap:
    """The file, mapped read-only; where the system can, with its pages mapped at once (every
    byte is read: one call instead of a page fault per few pages)."""
    populate = getattr(mmap, "MAP_POPULATE", 0)
    if populate and hasattr(mmap, "MAP_SHARED") and hasattr(mmap, "PROT_READ"):
        return mmap.mmap(fd, 0, flags=mmap.MAP_SHARED | populate, prot=mmap.PROT_READ)
    return mmap.mmap(fd, 0, access=mmap.ACCESS_READ)


def _gunzip(data: bytes, where: Where) -> bytes:
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:
        raise where.error(
            f"corrupt gzip data ({exc})", hint="Re-create or re-download the compressed file"
        ) from None


def release_pages(data: Buffer) -> None:
    """Unmap the pages of a mapped file that were read (the page cache keeps them; they are
    mapped again if read again), so that they stop counting in this process's memory while
    the columns parsed from them are worked on."""
    if isinstance(data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        with contextlib.suppress(OSError, ValueError):  # closed, or refused: no matter
            data.madvise(mmap.MADV_DONTNEED)


def bom_length(data: Buffer) -> int:
    """The length of a leading UTF-8 byte-order mark (3), or 0 when there is none."""
    return len(UTF8_BOM) if data[: len(UTF8_BOM)] == UTF8_BOM else 0


def note_bom(data: Buffer, where: Where, warn: Callable[[str], None]) -> int:
    """Say once that the text starts with a byte-order mark, which is skipped; its length."""
    n = bom_length(data)
    if n:
        warn(f"{where.name}: starts with a UTF-8 byte-order mark; ignored")
    return n


def line_of(data: Buffer, pos: int) -> int:
    """1-based line number of byte offset ``pos``."""
    if isinstance(data, mmap.mmap):
        return data[:pos].count(b"\n") + 1
    return data.count(b"\n", 0, pos) + 1


def check_text(data: Buffer, where: Where, *, utf8: bool = True) -> None:
    """Refuse NUL bytes (trec_eval cannot read them) and, with ``utf8``, text that is not
    UTF-8, naming the line."""
    pos = data.find(b"\0")
    if pos >= 0:
        raise where.error(
            "binary data (NUL byte) in a text file",
            at=line_of(data, pos),
            hint="This does not look like a text file; check that you passed the right file",
        )
    if not utf8:
        return
    try:
        (data if isinstance(data, bytes) else bytes(data)).decode("utf-8")
    except UnicodeDecodeError as exc:
        line = line_of(data, exc.start)
        bad = bytes(data[exc.start : exc.start + 8])
        raise where.error(
            "text is not valid UTF-8",
            at=line,
            value=bad,
            hint="Convert the file to UTF-8 (for example with iconv)",
        ) from None
