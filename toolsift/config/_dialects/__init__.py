"""Other MCP clients' config files ("dialects"), read as they are.

One module per concern: ``_dialect`` says what sets each client apart,
``_detect`` tells which client wrote a file, ``_jsonc`` reads comments and
trailing commas without moving a line, ``_file`` reads a client's own
top-level keys, ``_translate`` turns one server entry into toolsift's keys
with a warning for each key that means nothing here, and ``_variables``
rewrites each client's ``${...}`` forms into toolsift's ``${VAR}``.
"""

from ._detect import detect_dialect as detect_dialect
from ._detect import project_folder as project_folder
from ._dialect import DIALECTS as DIALECTS
from ._dialect import Dialect as Dialect
from ._file import FileSettings as FileSettings
from ._file import read_file_keys as read_file_keys
from ._jsonc import UnclosedComment as UnclosedComment
from ._jsonc import strip_jsonc as strip_jsonc
from ._translate import Translation as Translation
from ._translate import translate_entry as translate_entry
from ._variables import Places as Places
from ._variables import input_variable as input_variable

__all__ = [
    "DIALECTS",
    "Dialect",
    "FileSettings",
    "Places",
    "Translation",
    "UnclosedComment",
    "detect_dialect",
    "input_variable",
    "project_folder",
    "read_file_keys",
    "strip_jsonc",
    "translate_entry",
]
