"""What the index reads of a tool and its server, and ``index_tools``: a tool list searched without servers."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import anyio
import mcp.types as types
import pytest
from mcp_helpers import in_memory_everywhere
from servers import example_module

from toolsift import ConfigError, InvalidToolName
from toolsift.registry import ToolRegistry, ToolSpec, TurnScope
from toolsift.search import SearchIndex, index_tools
from toolsift.search._documents import tool_document
from toolsift.search._internal import server_descriptions
from toolsift.toolbox import Toolbox

SCHEMA = {"type": "object"}
FILES = [
    {"name": "read_file", "description": "Read a text file.", "inputSchema": SCHEMA},
    {"name": "write_file", "description": "Write a text file.", "inputSchema": SCHEMA},
    # No description of its own: its name and its parameters say what it does.
    {
        "name": "geo",
        "description": "",
        "inputSchema": {
            "type": "object",
            "properties": {
                "street": {"type": "string", "description": "The postal address whose coordinates are wanted"}
            },
        },
    },
]


def test_index_tools_takes_json_mcp_tools_and_specs_and_hits_name_every_tool_they_stand_for() -> None:
    index = index_tools(
        {
            "files": FILES,
            "mirror": [types.Tool(name="read_file", description="Read a text file.", input_schema=SCHEMA)],
            "notes": [ToolSpec(name="notes__jot", description="Jot a note down.", server="notes")],
        }
    )
    hits = index.search("read a text file", limit=3)
    assert hits[0].names == ["files__read_file", "mirror__read_file"] and hits[0].servers == ["files", "mirror"]
    assert hits[0].document.local_name == "read_file"
    assert [hit.names for hit in index.search("jot a note")] == [["notes__jot"]]
    assert index_tools(FILES, server="fs").search("write")[0].names == ["fs__write_file"]


def test_a_tool_without_a_description_is_found_by_its_parameters() -> None:
    assert index_tools(FILES).search("coordinates of a postal address")[0].names == ["tools__geo"]
    document = tool_document(index_tools(FILES).registry.spec("tools__geo"))
    assert {"street", "postal", "address", "coordinate"} <= set(document.fields["parameters"])


def test_index_tools_names_what_it_cannot_read() -> None:
    with pytest.raises(ValueError, match="(?s)tool 'broken' of server 'tools' is not an MCP tool: .*inputSchema"):
        index_tools([{"name": "broken"}])
    with pytest.raises(ValueError, match="tool '#0' of server 'tools' is not an MCP tool"):
        index_tools([{"description": "no name"}])
    with pytest.raises(InvalidToolName, match="server name"):
        index_tools(FILES, server="two__parts")
    with pytest.raises(ConfigError, match="unknown search backend 'nope'"):
        index_tools(FILES, backend="nope")  # type: ignore[arg-type]


async def test_an_offline_tool_is_never_called() -> None:
    index = index_tools(FILES)
    result = await index.registry.execute("tools__read_file", {}, TurnScope().with_unlocked(["tools__read_file"]))
    assert result.is_error and "only indexed here (index_tools)" in result.text_content()


def test_what_a_server_says_of_itself_finds_its_tools() -> None:
    about = {"files": "A local file system: folders, directories and their documents."}
    assert index_tools({"files": FILES}).search("directories") == []
    assert index_tools({"files": FILES}, descriptions=about).search("directories")[0].servers == ["files"]


def test_a_changed_server_text_rebuilds_that_servers_documents_only() -> None:
    registry = ToolRegistry()
    places = [{"name": "route", "description": "A route between two points.", "inputSchema": SCHEMA}]
    for server, tools in (("files", FILES), ("maps", places)):
        registry.replace_server(server, list(index_tools(tools, server=server).registry), internal=True)
    texts = {"files": "Folders and documents."}
    index = SearchIndex(registry, server_descriptions=lambda: texts)
    before = {doc.name: doc for doc in index.documents}
    assert index.search("folders")[0].servers == ["files"] and not index.refresh()
    texts = {"files": "Folders and documents.", "maps": "Streets and places."}
    assert index.search("streets places")[0].servers == ["maps"]
    after = {doc.name: doc for doc in index.documents}
    assert all(after[name] is before[name] for name in before if name.startswith("files__"))
    assert all(after[name] is not before[name] for name in before if name.startswith("maps__"))


SERVER = """
    from mcp.server.mcpserver import MCPServer

    mcp = MCPServer("atlas", title="Atlas", description="Cartography for hikers.",
                    instructions="Call plot before export.", log_level="WARNING")


    @mcp.tool(description="")
    def plot(waypoints: list[str]) -> str:
        return ",".join(waypoints)


    if __name__ == "__main__":
        mcp.run()
"""


@pytest.mark.parametrize("instructions", [True, False])
async def test_a_connected_servers_info_and_instructions_are_indexed(
    tmp_path: Path, instructions: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "atlas.py").write_text(textwrap.dedent(SERVER))
    # What the index does with the server's words is the point, not its process: it runs in this process.
    in_memory_everywhere(monkeypatch, {"atlas": example_module(str(tmp_path / "atlas.py")).mcp})
    config = tmp_path / "toolsift.json"
    server = {"command": sys.executable, "args": [str(tmp_path / "atlas.py")], "instructions": instructions}
    config.write_text(json.dumps({"tools": {"mcpServers": {"atlas": server}}, "skills": {"userSkills": False}}))
    async with Toolbox.from_config(config) as box:
        with anyio.fail_after(60):
            await box.sessions.start_lazy(["atlas"])
        texts = server_descriptions(box.sessions)
        cartography = [hit.names for hit in box.index.search("cartography for hikers")]
        export = [hit.names for hit in box.index.search("before export")]
    expected = "Atlas Cartography for hikers." + (" Call plot before export." if instructions else "")
    assert texts == {"atlas": expected}
    assert cartography == [["atlas__plot"]]  # an empty description: found by what its server says
    assert export == ([["atlas__plot"]] if instructions else [])
