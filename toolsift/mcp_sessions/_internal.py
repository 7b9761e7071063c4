"""What other toolsift packages use of the sessions package (and its ``reload``) and users do not.

Not public: a package imports from another either its public names or the names listed here, and
``tests/test_architecture.py`` checks both and pins this list.
"""

from ._as_client import send_as_client as send_as_client
from ._catalog import ServerCatalog as ServerCatalog
from ._events import ManagerEvent as ManagerEvent
from ._instruction_pins import InstructionsChange as InstructionsChange
from ._instructions import server_instructions as server_instructions
from ._masking import mask_wire as mask_wire
from ._oauth import FileTokenStorage as FileTokenStorage
from ._oauth import token_file as token_file
from ._pins import ToolChange as ToolChange
from ._pins import ToolPins as ToolPins
from ._resources import ListMcpResources as ListMcpResources
from ._resources import ReadMcpResource as ReadMcpResource
from ._resources import resource_context as resource_context
from ._sender import Era as Era
from ._sender import Sender as Sender
from ._state import SessionState as SessionState
from ._untrusted import guard_result as guard_result
from ._wrapper import McpToolWrapper as McpToolWrapper
from ._wrapper import present_result as present_result
from ._wrapper import tool_spec as tool_spec

__all__ = [
    "Era",
    "FileTokenStorage",
    "InstructionsChange",
    "ListMcpResources",
    "ManagerEvent",
    "McpToolWrapper",
    "ReadMcpResource",
    "Sender",
    "ServerCatalog",
    "SessionState",
    "ToolChange",
    "ToolPins",
    "guard_result",
    "mask_wire",
    "present_result",
    "resource_context",
    "send_as_client",
    "server_instructions",
    "token_file",
    "tool_spec",
]
