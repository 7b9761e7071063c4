"""A session's tools: built from the server's listing, held against the pins, published to the registry.

The session hands each listing here (a first connection, a reconnect, a
``list_changed``); what comes out is the set of registry tools it offers now,
the tools held back because their definition changed (or they were added) since
the server was pinned (see ``_pins``), whether its instructions are held back
(see ``_instruction_pins``), and whether anything changed that the subscribers
should hear.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import mcp.types as types

from .._exceptions import ToolHeld
from ..config import ServerConfig
from ._pins import ToolChange, ToolPins
from ._publisher import ToolPublisher
from ._wrapper import McpToolWrapper

__all__ = ["SessionTools"]


class SessionTools:
    """The tools of one session, as last listed and reviewed.

    Args:
        config: The server's config.
        publisher: Where the tools are registered; None keeps them on the session only.
        pins: The pinned definitions to review each listing against; None reviews nothing.
        build: Makes the registry tools of a listing (after include/exclude and name checks).
    """

    def __init__(
        self,
        config: ServerConfig,
        publisher: ToolPublisher | None,
        pins: ToolPins | None,
        build: Callable[[Sequence[types.Tool]], Sequence[McpToolWrapper]],
    ) -> None:
        self._config = config
        self._publisher = publisher
        self._pins = pins
        self._build = build
        self.wrappers: tuple[McpToolWrapper, ...] = ()
        self.held: dict[str, str] = {}  # tool (the server's name) -> why it is held back (see ``_pins``)
        self.changes: tuple[ToolChange, ...] = ()  # changed since pinned: held back, or kept with a warning
        self.warning: str | None = None  # what the registry said of the last publication
        self._listed: tuple[types.Tool, ...] | None = None  # what the wrappers were built from, while registered
        self.instructions_held: str | None = None  # why the server's instructions are held back

    def review_instructions(self, instructions: str | None) -> None:
        """Review the handshake's instructions against their pin (a listing follows every handshake)."""
        pins = self._pins
        self.instructions_held = pins.review_instructions(self._config, instructions) if pins is not None else None

    @property
    def names(self) -> tuple[str, ...]:
        """The canonical names of the tools offered now."""
        return tuple(wrapper.spec.name for wrapper in self.wrappers)

    def apply(self, tools: Sequence[types.Tool], *, publish: bool) -> bool:
        """Take a listing: review it, rebuild the tools, and register them when ``publish``; whether they changed."""
        listed = tuple(tools)
        if listed == self._listed and not self.held:
            # Unchanged (a reconnect, a list_changed that changed nothing): swapping equal tools in would
            # only cost the registry its schema caches. With tools held back it is reviewed again, as
            # 'toolsift trust --tools' may have accepted them meanwhile.
            return False
        held_before = self.held
        kept = self._review(listed)
        if listed == self._listed and self.held == held_before:
            return False  # still held as it was
        previous, self.wrappers = self.wrappers, tuple(self._build(kept))
        self._listed = listed
        if self._publisher is not None and publish:
            self.warning = self._publisher.publish(self.wrappers, previous=previous, held=self.held_back())
        return True

    def accept(
        self, tools: Iterable[str] | None, listed: Sequence[types.Tool], instructions: str | None
    ) -> tuple[str, ...]:
        """Pin the changed definitions of ``tools`` (all when None, with the changed ``instructions`` too);
        ``listed`` is then reviewed again."""
        accepted = self._pins.accept(self._config.name, tools) if self._pins is not None else ()
        if self._pins is not None and tools is None and self._pins.accept_instructions(self._config.name):
            self.review_instructions(instructions)
        if accepted and listed:
            self._listed = None  # the same listing, reviewed again against the new pins
        return accepted

    def withdraw(self) -> None:
        """Take the tools out of the registry; the same listing, listed again, is registered again."""
        self._listed = None
        if self._publisher is not None:
            self._publisher.withdraw(self.wrappers)

    def refuse_held(self, tool: str) -> None:
        """Raise ``ToolHeld`` when ``tool`` (the server's name) is held back.

        Raises:
            ToolHeld: It is.
        """
        if tool in self.held:
            raise ToolHeld(f"{self._config.namespace}__{tool}", self._config.name, self.held[tool])

    def held_back(self) -> dict[str, tuple[str, str]]:
        """The held tools as the registry explains them: canonical name -> (server, why)."""
        namespace, server = self._config.namespace, self._config.name
        return {f"{namespace}__{tool}": (server, why) for tool, why in self.held.items()}

    def note(self) -> str | None:
        """What the status line says of the tools: the registry's warning, or the tools held back."""
        if self.warning is not None:
            return self.warning
        if self.held and not self.changes:  # the pins could not be read: everything is held
            return f"its tools are held back: {next(iter(self.held.values()))}"
        if not self.changes:
            return None
        names = ", ".join(change.tool for change in self.changes)
        if not self.held:
            return f"tools changed since pinned, kept usable (pinTools: warn): {names}"
        return (
            f"tools held back, changed since pinned: {names}; see the change with 'toolsift check', "
            f"accept it with 'toolsift trust --tools {self._config.name}'"
        )

    def _review(self, listed: tuple[types.Tool, ...]) -> tuple[types.Tool, ...]:
        """The listed tools that match their pins (or are new); the changed ones are held back or warned of."""
        if self._pins is None:
            return listed
        review = self._pins.review(self._config, listed)
        if review.problem is not None:
            self.held = {tool.name: review.problem for tool in listed}
        else:
            self.held = {change.tool: change.refusal() for change in review.held}
        self.changes = review.held + review.warned
        return review.kept
