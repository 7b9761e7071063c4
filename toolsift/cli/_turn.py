"""The turn a command acts as (agent, skill, its arguments), and the servers the command needs started."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from .._assembly import skills_loader
from .._exceptions import SkillNotFound
from .._globs import literal_server
from .._names import split_name
from ..agent import Conversation
from ..config import ToolsiftConfig
from ..registry import Approver, TurnScope
from ..toolbox import Toolbox
from ._output import reported_here

SkillOption = Annotated[str | None, typer.Option("--skill", "-s", help="Act as if '/use SKILL' were active.")]
ArgsOption = Annotated[
    str,
    typer.Option(
        "--args", help="Argument text for the skill's variables; when given, checked as '/use SKILL ARGS' would be."
    ),
]
AgentOption = Annotated[str | None, typer.Option("--agent", "-a", help="Agent profile from the config.")]


async def turn_conversation(
    box: Toolbox, agent: str | None, skill: str | None, arguments: str, approver: Approver | None = None
) -> tuple[Conversation, TurnScope]:
    """The agent's conversation and the scope of a turn with ``skill`` active.

    The scope comes from the skill's front matter, so no variables are needed to
    see it; argument text, when given, is bound and rendered as ``/use`` would.
    """
    conversation = box.conversation(agent, approver=approver)
    if not skill:
        return conversation, conversation.scope()
    if arguments:
        await conversation.use(skill, arguments)
        return conversation, conversation.scope()
    catalog = box.catalog
    found = catalog.get(skill)
    if not found.user_invocable:
        raise SkillNotFound(skill, [s.name for s in catalog.invocable()])
    owner = box.parts.skill_servers
    others: tuple[str, ...] = ()
    if owner is not None:
        # The servers the skill brings (a plugin's, its own .mcp.json) start as at '/use', held until the end;
        # other skills' own servers stay out of its turn, as they do there.
        await owner.acquire(found.name)
        others = tuple(owner.hidden_from(found.name))
    # Pinned and unlocked tools depend on the skill (search_tools is offered only without one): start from
    # the agent's base scope and let the conversation's discovery add them, as a real turn does.
    base = TurnScope(
        agent_allowed=conversation.allowed_tools,
        agent=conversation.agent,
        read_only=conversation.plan_mode,
        skill_allowed=found.allowed_tools,
        skill_disallowed=(*found.disallowed_tools, *others),
        skill=found.name,
        permissions=conversation.permissions,
    )
    discovery = conversation.discovery
    return conversation, discovery.scope_for_turn(base) if discovery is not None else base


def server_of(tool: str) -> Callable[[ToolsiftConfig], set[str] | None]:
    """The server a call needs: the one whose namespace prefixes the tool's name (``/use`` starts the skill's).

    Without one (a bare name, or a prefix no server has), the name may be a provider alias of any server's tool.
    """

    def needs(config: ToolsiftConfig) -> set[str] | None:
        namespace = split_name(tool)[0]
        return {namespace} if namespace in {server.namespace for server in config.servers.values()} else None

    return needs


def named_servers(patterns: list[str] | None, skill: str | None) -> Callable[[ToolsiftConfig], set[str] | None]:
    """The servers a listing needs: those its patterns and its skill's allowed-tools name literally.

    Neither given (or a skill that is no SKILL.md file ``/use`` offers, such as a server's prompt): every server.
    """

    def needs(config: ToolsiftConfig) -> set[str] | None:
        if not patterns and not skill:
            return None
        named = list(patterns or ())
        if skill:
            with reported_here("toolsift.skills"):
                loaded = skills_loader(config).load()
            found = next((s for s in loaded if s.name == skill and s.user_invocable), None)
            if found is None:  # a server's prompt, or a refusal whose message lists every skill /use offers
                return None
            named += found.allowed_tools
        return {server for pattern in named if (server := literal_server(pattern))}

    return needs
