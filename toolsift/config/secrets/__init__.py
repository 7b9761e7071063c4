"""Secrets in config values: ``${VAR}`` expansion and ``secret://`` references.

Values stay references in the loaded config;
:func:`toolsift.config._internal.resolve_server` replaces them right before a session
connects, so a secret lives only as long as the connection needs it. Resolvers are plug-ins looked up by scheme
(:func:`register_secret_resolver`). What is shown to a person (a command's output, a repr, a log line) has its
secrets masked as ``***``.
"""

from ..._public import publish
from ..._secrets._resolvers import SecretReference as SecretReference
from ..._secrets._resolvers import SecretResolver as SecretResolver
from ..._secrets._resolvers import register_secret_resolver as register_secret_resolver
from ..._secrets._resolvers import unregister_secret_resolver as unregister_secret_resolver

__all__ = ["SecretReference", "SecretResolver", "register_secret_resolver", "unregister_secret_resolver"]

publish(globals(), __name__, __all__)
