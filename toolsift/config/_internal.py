"""What other toolsift packages use of the config package and users do not.

Not public: a package imports from another either its public names or the names listed here, and
``tests/test_architecture.py`` checks both and pins this list.
"""

from ._commands import CommandSettings as CommandSettings
from ._fingerprint import configured_settings as configured_settings
from ._launch_folder import absolute_path as absolute_path
from ._launch_folder import expanded_now as expanded_now
from ._launch_folder import found_in as found_in
from ._launch_folder import launch_folder as launch_folder
from ._lint import permission_glob_warnings as permission_glob_warnings
from ._oauth import OAuthConfig as OAuthConfig
from ._policies import ArgumentRule as ArgumentRule
from ._policies import UrlPolicy as UrlPolicy
from ._report import ConfigReport as ConfigReport
from ._report import ConfigWarning as ConfigWarning
from ._resolve import child_environment as child_environment
from ._resolve import resolve_server as resolve_server
from ._serve import ServeSettings as ServeSettings
from ._serve import SharedSettings as SharedSettings
from ._serve import validate_serve_settings as validate_serve_settings
from ._toolsift import AgentConfig as AgentConfig
from ._toolsift import LimitsConfig as LimitsConfig
from ._trust import TrustCheck as TrustCheck

__all__ = [
    "AgentConfig",
    "ArgumentRule",
    "CommandSettings",
    "ConfigReport",
    "ConfigWarning",
    "LimitsConfig",
    "OAuthConfig",
    "ServeSettings",
    "SharedSettings",
    "TrustCheck",
    "UrlPolicy",
    "absolute_path",
    "child_environment",
    "configured_settings",
    "expanded_now",
    "found_in",
    "launch_folder",
    "permission_glob_warnings",
    "resolve_server",
    "validate_serve_settings",
]
