"""Secrets in config values: ``${VAR}`` expansion and ``secret://`` references.

Values stay references in the loaded config;
:func:`toolsift.config.resolve_server` replaces them right before a session
connects, so a secret lives only as long as the connection needs it. Resolvers are plug-ins looked up by scheme
(:func:`register_secret_resolver`). What is shown to a person (a command's output, a repr, a log line) has its
secrets masked as ``***`` (:func:`mask_settings`, :func:`mask_url`).
"""

from ..._public import publish
from ._display import mask_settings as mask_settings
from ._display import mask_url as mask_url
from ._expand import expand_variables as expand_variables
from ._expand import has_references as has_references
from ._expand import reference_problem as reference_problem
from ._expand import rewrite_references as rewrite_references
from ._resolvers import EnvSecretResolver as EnvSecretResolver
from ._resolvers import FileSecretResolver as FileSecretResolver
from ._resolvers import SecretReference as SecretReference
from ._resolvers import SecretResolver as SecretResolver
from ._resolvers import is_secret_reference as is_secret_reference
from ._resolvers import parse_secret_reference as parse_secret_reference
from ._resolvers import register_secret_resolver as register_secret_resolver
from ._resolvers import resolve_secret as resolve_secret
from ._resolvers import unregister_secret_resolver as unregister_secret_resolver

__all__ = [
    "EnvSecretResolver",
    "FileSecretResolver",
    "SecretReference",
    "SecretResolver",
    "expand_variables",
    "has_references",
    "is_secret_reference",
    "mask_settings",
    "mask_url",
    "parse_secret_reference",
    "reference_problem",
    "register_secret_resolver",
    "resolve_secret",
    "rewrite_references",
    "unregister_secret_resolver",
]

publish(globals(), __name__, __all__)
