"""Tool discovery: ranked search over every tool and skill, and the ``search_tools`` meta-tool.

An agent connected to several 200-tool servers should not be sent thousands of
schemas to find the one tool that fits. :class:`SearchIndex` ranks every
registered tool (internal ones included) and every skill with fielded BM25
(or, with the semantic packages, local sentence embeddings, or both fused).
:class:`SearchToolsTool` puts it in front of the model as ``search_tools``;
the tools the model picks from what it finds are unlocked into the
conversation's :class:`Discovery`, whose :meth:`Discovery.scope_for_turn`
surfaces them in the next round and keeps them within a cap. Servers' prompts
become skills (:class:`McpPromptSkill`) that ``/use`` activates, gathered with
SKILL.md skills in a :class:`SkillCatalog`, and so do the skills servers offer through the MCP Skills
extension (:class:`McpServedSkill`, taken by :class:`ServedSkills`). :func:`index_tools` indexes a tool
list offline (no server runs), to measure search on one's own catalogue.

Wiring, for a conversation in ``tool_discovery: "auto"`` mode::

    catalog = SkillCatalog(loader, sessions)
    index = SearchIndex(registry, catalog, unsearchable={"secrets"})
    registry.register(SearchToolsTool(index), internal=True)
    await task_group.start(index.maintain)   # builds in a worker thread, now and after each change
    discovery = Discovery(registry, pinned_servers={"git"}, permissions=permissions, offer_search=True,
                          unsearchable=index.unsearchable)
    # per user message:   discovery.begin_turn()
    # per model round:    scope = discovery.scope_for_turn(base_scope)
    # per tool call:      await registry.execute(name, args, scope, permissions, discovery=discovery)
"""

from .._public import publish
from ._discovery import Discovery as Discovery
from ._index import SearchHit as SearchHit
from ._index import SearchIndex as SearchIndex
from ._offline import index_tools as index_tools
from ._search_tool import SearchToolsTool as SearchToolsTool
from ._semantic import available as semantic_available
from ._skill_catalog import SkillCatalog as SkillCatalog

__all__ = [
    "Discovery",
    "SearchHit",
    "SearchIndex",
    "SearchToolsTool",
    "SkillCatalog",
    "index_tools",
    "semantic_available",
]

publish(globals(), __name__, __all__)
