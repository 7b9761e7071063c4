"""Finding SKILL.md files in the skill folders, and keeping them fresh.

Folders are scanned in precedence order: the project's ``.toolsift/skills``, the
user's folder, then extra folders from the config. Each holds one folder per
skill with a ``SKILL.md`` inside (``<folder>/code-assist/SKILL.md``). When two
folders define the same name the first wins and the clash is recorded as a
problem naming both files, so it is never resolved silently. A broken skill is
recorded as a problem and the others load. A skill broken by an edit keeps its
last good version, so a half-saved file never takes a working skill away.
A skill loaded with warnings (see ``Skill.warnings``) has them logged once.

Templated bodies compile in a :class:`TemplateSandbox`, so one skill's load
costs at most the sandbox's time budget. The scan blocks its thread for that
long per templated skill: async code calls :meth:`SkillsLoader.aload` or
:meth:`SkillsLoader.areload`, which scan in a worker thread.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import final

import anyio
from anyio.abc import TaskStatus

from .._exceptions import SkillParseError
from ._folder_watch import watch_folders
from ._model import Skill
from ._parse import parse_skill_text, read_skill_file
from ._sandbox import TemplateSandbox
from ._skillset import SkillProblem, SkillSet, SkillsReloaded

__all__ = ["SkillsLoader"]

logger = logging.getLogger("toolsift.skills")

Subscriber = Callable[[SkillsReloaded], object]
_SKILL_FILE = "SKILL.md"
_Scan = tuple[dict[str, Skill], dict[str, tuple[Path, str]], list[SkillProblem], dict[Path, tuple[str, Skill]]]


@final
class SkillsLoader:
    """Discovers, loads and (optionally) watches skills.

    Nothing is read on construction: the first :meth:`load`, :meth:`reload`,
    :attr:`skills` access or :meth:`watch` scans the folders. Folders that do not
    exist are skipped; one that appears later is picked up by the next
    :meth:`reload`, and by a running :meth:`watch` at once (which also follows a
    folder that is deleted and recreated).

    Args:
        project: The project's skill folder (usually ``<project>/.toolsift/skills``).
        user: The user's skill folder, or several in order; pass
            :func:`default_user_dirs` for ``~/.toolsift/skills`` and
            ``~/.claude/skills``. None (the default) reads no user folder, so a
            loader never touches the home folder unless told to.
        extra: More folders, lowest precedence, in order.
        debounce_ms: While watching, how long to gather a burst of file events
            into one reload.
        sandbox: Where templated bodies compile, with which limits (the shared
            default when None).
    """

    def __init__(
        self,
        *,
        project: str | os.PathLike[str] | None = None,
        user: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
        extra: Iterable[str | os.PathLike[str]] = (),
        debounce_ms: int = 300,
        sandbox: TemplateSandbox | None = None,
    ) -> None:
        if debounce_ms < 0:
            raise ValueError(f"debounce_ms must be >= 0, got {debounce_ms!r}")
        folders: dict[Path, None] = {}
        users = [user] if isinstance(user, (str, os.PathLike)) else list(user or ())
        for folder in (project, *users, *extra):
            if folder is not None:
                # The same folder given twice (the project folder also listed in the
                # config's paths) would clash with itself.
                folders.setdefault(Path(folder).expanduser().resolve())
        self._folders = tuple(folders)
        self._debounce_ms = debounce_ms
        self._sandbox = sandbox
        # Scans may run in worker threads (aload, watch) and in the caller's (load):
        # one at a time, numbered, so an older scan never replaces a newer one's result.
        self._scan_lock = threading.Lock()
        self._scans = 0
        self._applied = 0
        self._good: dict[Path, tuple[str, Skill]] = {}
        self._sources: dict[str, tuple[Path, str]] = {}
        self._snapshot: SkillSet | None = None
        self._subscribers: list[Subscriber] = []
        self._watching = False

    @property
    def folders(self) -> tuple[Path, ...]:
        """The skill folders, resolved, in precedence order."""
        return self._folders

    @property
    def sandbox(self) -> TemplateSandbox | None:
        """Where templated bodies compile and render (None: the shared default sandbox)."""
        return self._sandbox

    @property
    def skills(self) -> SkillSet:
        """The current snapshot (scanning the folders on first access)."""
        return self._snapshot if self._snapshot is not None else self.load()

    @property
    def problems(self) -> tuple[SkillProblem, ...]:
        """The current snapshot's problems."""
        return self.skills.problems

    def get(self, name: str) -> Skill:
        """The loaded skill called ``name``.

        Raises:
            SkillNotFound: Listing the skills that are loaded.
        """
        return self.skills.get(name)

    def invocable(self) -> list[Skill]:
        """The loaded skills ``/use`` and ``/skills`` offer."""
        return self.skills.invocable()

    def load(self) -> SkillSet:
        """Scan the folders and return the snapshot; same as ``reload().skills``.

        Blocks for at most the sandbox's time budget per templated skill; async
        code calls :meth:`aload`.
        """
        return self.reload().skills

    async def aload(self) -> SkillSet:
        """:meth:`load` without blocking other tasks; same as ``(await areload()).skills``."""
        return (await self.areload()).skills

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(event)`` after every reload that changed something.

        Callbacks run in the task that reloads (the :meth:`watch` task, or the
        caller of :meth:`reload`); one that raises is logged and the others
        still run.

        Returns:
            A function that removes the subscription.
        """
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):  # already removed
                self._subscribers.remove(callback)

        return unsubscribe

    def reload(self) -> SkillsReloaded:
        """Re-scan the folders now, notify subscribers if anything changed.

        Unchanged files are not re-parsed. A file that fails and had loaded
        before keeps its last good version; the problem is reported either way.

        Returns:
            What changed (falsy when nothing did).
        """
        return self._apply(self._scan())

    async def areload(self) -> SkillsReloaded:
        """:meth:`reload`, scanning in a worker thread so other tasks run meanwhile.

        Subscribers are called in the calling task. If the caller is cancelled,
        the scan finishes in its thread (each templated skill within the
        sandbox's budget) and its result is dropped.
        """
        return self._apply(await anyio.to_thread.run_sync(self._scan, abandon_on_cancel=True))

    def _apply(self, scan: tuple[int, _Scan]) -> SkillsReloaded:
        number, (skills, sources, problems, good) = scan
        if number < self._applied:
            return SkillsReloaded(self.skills)  # a newer scan was applied meanwhile
        self._applied = number
        old = self._sources
        previous_problems = self._snapshot.problems if self._snapshot is not None else ()
        previous_warnings = set(self._snapshot.warnings) if self._snapshot is not None else set()
        snapshot = SkillSet(skills, tuple(problems))
        event = SkillsReloaded(
            snapshot,
            added=tuple(name for name in sources if name not in old),
            changed=tuple(name for name in sources if name in old and old[name] != sources[name]),
            removed=tuple(name for name in old if name not in sources),
            problems_changed=snapshot.problems != previous_problems,
        )
        self._good, self._sources, self._snapshot = good, sources, snapshot
        for problem in snapshot.problems:
            if problem not in previous_problems:
                logger.warning("%s", problem.message)
        for warning in snapshot.warnings:
            if warning not in previous_warnings:
                logger.warning("%s", warning.message)
        if event:
            self._notify(event)
        return event

    async def watch(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Watch the folders and reload on change, until cancelled.

        Run it in a task group: ``await tg.start(loader.watch)`` returns once the
        file-system watches are in place and the folders have been scanned.
        Bursts of events are debounced into one reload; subscribers are told of
        every reload that changed something. A folder that does not exist yet is
        picked up when it appears, and one that is deleted and recreated (a
        ``git checkout``) is watched again.

        On cancellation the watch thread is told to stop and the call returns
        within about one polling step (50 ms).

        Raises:
            RuntimeError: When this loader is already watching.
        """
        if self._watching:
            raise RuntimeError("This SkillsLoader is already watching its folders")
        self._watching = True
        try:
            await watch_folders(
                self._folders, self._watched_reload, debounce_ms=self._debounce_ms, task_status=task_status
            )
        finally:
            self._watching = False

    async def _watched_reload(self) -> None:
        try:
            await self.areload()
        except Exception:
            # A bug in a subscriber is already contained by _notify; anything
            # else must not end the watch, but must not go unseen either.
            logger.exception("Reloading skills from %s failed", ", ".join(map(str, self._folders)))

    def _notify(self, event: SkillsReloaded) -> None:
        for callback in list(self._subscribers):
            try:
                callback(event)
            except Exception:
                logger.exception("A skills reload subscriber failed: %r", callback)

    def _scan(self) -> tuple[int, _Scan]:
        with self._scan_lock:
            self._scans += 1
            return self._scans, self._scan_files()

    def _scan_files(self) -> _Scan:
        skills: dict[str, Skill] = {}
        sources: dict[str, tuple[Path, str]] = {}
        problems: list[SkillProblem] = []
        good: dict[Path, tuple[str, Skill]] = {}
        for file in self._files(problems):
            loaded = self._load_one(file, problems)
            if loaded is None:
                continue
            good[file] = loaded
            text, skill = loaded
            if skill.name in skills:
                winner = sources[skill.name][0]
                problems.append(
                    SkillProblem(
                        file,
                        f"{file}: skill {skill.name!r} is ignored: {winner} defines the same name and comes "
                        "first (project, then user, then extra folders); rename or remove one of them",
                        shadowed_by=winner,
                    )
                )
                continue
            skills[skill.name] = skill
            sources[skill.name] = (file, text)
        return skills, sources, problems, good

    def _files(self, problems: list[SkillProblem]) -> list[Path]:
        files: list[Path] = []
        for folder in self._folders:
            if not folder.exists():
                continue
            if not folder.is_dir():
                problems.append(SkillProblem(folder, f"{folder}: a skill folder must be a directory"))
                continue
            try:
                found = sorted(folder.glob(f"*/{_SKILL_FILE}"))
            except OSError as exc:
                problems.append(SkillProblem(folder, f"{folder}: cannot list the folder: {exc.strerror or exc}"))
                continue
            files.extend(file for file in found if not file.parent.name.startswith("."))
        return files

    def _load_one(self, file: Path, problems: list[SkillProblem]) -> tuple[str, Skill] | None:
        previous = self._good.get(file)
        try:
            text = read_skill_file(file)
            if previous is not None and previous[0] == text:
                return previous
            return text, parse_skill_text(text, file, sandbox=self._sandbox)
        except SkillParseError as exc:
            if previous is None:
                problems.append(SkillProblem(file, str(exc), exc))
                return None
            problems.append(SkillProblem(file, f"{exc}; keeping the last good version", exc))
            return previous
