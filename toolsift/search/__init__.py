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
SKILL.md skills in a :class:`SkillCatalog`. :func:`index_tools` indexes a tool
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
    # per tool call:      with discovery.bound(): await registry.execute(name, args, scope, permissions)
"""

from .._public import publish
from ._bm25 import Bm25Backend as Bm25Backend
from ._bm25 import Ranker as Ranker
from ._bm25 import SearchBackend as SearchBackend
from ._discovery import Discovery as Discovery
from ._discovery import UnlockMode as UnlockMode
from ._documents import IndexedSkill as IndexedSkill
from ._documents import SearchDocument as SearchDocument
from ._hybrid import HybridBackend as HybridBackend
from ._index import BACKENDS as BACKENDS
from ._index import BackendName as BackendName
from ._index import SearchHit as SearchHit
from ._index import SearchIndex as SearchIndex
from ._index import SkillProvider as SkillProvider
from ._index import server_descriptions as server_descriptions
from ._offline import ToolListing as ToolListing
from ._offline import index_tools as index_tools
from ._prompt_skills import McpPromptSkill as McpPromptSkill
from ._prompt_skills import PromptSession as PromptSession
from ._prompt_skills import prompt_skills as prompt_skills
from ._ranking import format_ranking as format_ranking
from ._search_tool import SEARCH_TOOL_NAME as SEARCH_TOOL_NAME
from ._search_tool import SearchToolsTool as SearchToolsTool
from ._semantic import Embedder as Embedder
from ._semantic import SemanticBackend as SemanticBackend
from ._semantic import available as semantic_available
from ._semantic import default_cache_folder as default_cache_folder
from ._semantic import load_local_embedder as load_local_embedder
from ._skill_catalog import SkillCatalog as SkillCatalog

__all__ = [
    "BACKENDS",
    "SEARCH_TOOL_NAME",
    "BackendName",
    "Bm25Backend",
    "Discovery",
    "Embedder",
    "HybridBackend",
    "IndexedSkill",
    "McpPromptSkill",
    "PromptSession",
    "Ranker",
    "SearchBackend",
    "SearchDocument",
    "SearchHit",
    "SearchIndex",
    "SearchToolsTool",
    "SemanticBackend",
    "SkillCatalog",
    "SkillProvider",
    "ToolListing",
    "UnlockMode",
    "default_cache_folder",
    "format_ranking",
    "index_tools",
    "load_local_embedder",
    "prompt_skills",
    "semantic_available",
    "server_descriptions",
]

publish(globals(), __name__, __all__)
