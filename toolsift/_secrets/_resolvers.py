"""``secret://<scheme>/<path>`` references and the resolvers behind them.

A setting whose whole value is ``secret://env/NAME`` or ``secret://file/PATH`` is
replaced at connect time by the secret it names. Other schemes (a vault, a
keychain) plug in through :class:`SecretResolver` and
:func:`register_secret_resolver`. Resolved values live only in the
``ResolvedServer`` handed to the transport; config objects keep the reference.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, final, runtime_checkable

from .._exceptions import SecretError

__all__ = [
    "SECRET_PREFIX",
    "EnvSecretResolver",
    "FileSecretResolver",
    "SecretReference",
    "SecretResolver",
    "is_secret_reference",
    "parse_secret_reference",
    "register_secret_resolver",
    "resolve_secret",
    "unregister_secret_resolver",
]

SECRET_PREFIX = "secret://"
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*")


@final
@dataclass(frozen=True)
class SecretReference:
    """A parsed ``secret://<scheme>/<path>`` reference and where it is resolved.

    Attributes:
        scheme: Which resolver handles it (``env``, ``file``, a plug-in's name).
        path: Everything after ``secret://<scheme>/``, verbatim.
        base_dir: The config file's folder, for resolvers that take relative paths.
        environ: The environment of the resolution (``os.environ`` unless the
            caller of ``resolve_server`` passed another), for ``env`` and for
            plug-ins that read their own settings (a vault's address) from it.
    """

    scheme: str
    path: str
    base_dir: Path
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ, repr=False, compare=False)

    def __str__(self) -> str:
        return f"{SECRET_PREFIX}{self.scheme}/{self.path}"


@runtime_checkable
class SecretResolver(Protocol):
    """Turns ``secret://<scheme>/...`` references into secret values.

    ``resolve`` runs at connect time, in the thread that calls
    ``resolve_server``; it may block (read a file, ask a vault). To refuse, raise
    an exception whose message says why WITHOUT any secret value (``LookupError``
    for "no such secret", ``OSError`` for I/O); toolsift wraps it in a
    ``SecretError`` naming the reference, server and field.
    """

    scheme: str

    def resolve(self, reference: SecretReference) -> str:
        """Return the secret ``reference`` names."""
        ...


class EnvSecretResolver:
    """``secret://env/NAME``: the environment variable ``NAME``.

    Unlike ``${NAME}`` it has no default and marks the value as a secret for the
    plaintext-credential check.
    """

    scheme = "env"

    def resolve(self, reference: SecretReference) -> str:
        """Return the variable's value, or raise ``LookupError`` when it is unset."""
        value = reference.environ.get(reference.path)
        if value is None:
            raise LookupError(f"environment variable {reference.path!r} is not set")
        return value


class FileSecretResolver:
    """``secret://file/PATH``: the contents of a UTF-8 file, one trailing newline removed.

    ``PATH`` is relative to the config file's folder; ``secret://file//run/secrets/x``
    (two slashes) is absolute and ``secret://file/~/.token`` is under the home folder.
    """

    scheme = "file"

    def resolve(self, reference: SecretReference) -> str:
        """Return the file's text; raise ``OSError`` or ``ValueError`` when it cannot be read."""
        path = Path(reference.path).expanduser()
        if not path.is_absolute():
            path = reference.base_dir / path
        try:
            data = path.read_bytes()
        except OSError as exc:
            # The OS message names the path, which is configuration, not the secret.
            raise OSError(f"cannot read {str(path)!r}: {exc.strerror or type(exc).__name__}") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{str(path)!r} is not UTF-8 text") from None
        # Editors add one final newline; strip exactly that so intended whitespace survives.
        return text.removesuffix("\n").removesuffix("\r")


_BUILTIN: dict[str, SecretResolver] = {r.scheme: r for r in (EnvSecretResolver(), FileSecretResolver())}
_RESOLVERS: dict[str, SecretResolver] = dict(_BUILTIN)


def register_secret_resolver(resolver: SecretResolver, *, replace: bool = False) -> None:
    """Make ``secret://<resolver.scheme>/...`` references resolve through ``resolver``.

    Args:
        resolver: Any object with a ``scheme`` and a ``resolve`` method.
        replace: Allow replacing the resolver already registered for the scheme
            (including the built-in ``env`` and ``file``).

    Raises:
        ValueError: When the scheme is not lowercase ``[a-z][a-z0-9+.-]*``, or is
            taken and ``replace`` is false.
    """
    scheme = resolver.scheme
    if not isinstance(scheme, str) or not _SCHEME.fullmatch(scheme):
        raise ValueError(f"Secret scheme {scheme!r} must match [a-z][a-z0-9+.-]*")
    if scheme in _RESOLVERS and not replace:
        raise ValueError(f"Secret scheme {scheme!r} already has a resolver; pass replace=True to replace it")
    _RESOLVERS[scheme] = resolver


def unregister_secret_resolver(scheme: str) -> None:
    """Remove the resolver for ``scheme``; the built-in ``env`` and ``file`` come back.

    Raises:
        LookupError: When no resolver is registered for ``scheme``.
    """
    if scheme not in _RESOLVERS:
        raise LookupError(f"No secret resolver for scheme {scheme!r}; registered: {', '.join(sorted(_RESOLVERS))}")
    if scheme in _BUILTIN:
        _RESOLVERS[scheme] = _BUILTIN[scheme]
    else:
        del _RESOLVERS[scheme]


def is_secret_reference(value: str) -> bool:
    """Return True when the whole of ``value`` is meant as a ``secret://`` reference."""
    return value.startswith(SECRET_PREFIX)


def parse_secret_reference(value: str, *, base_dir: Path, environ: Mapping[str, str] | None = None) -> SecretReference:
    """Split ``secret://<scheme>/<path>`` into its parts.

    Raises:
        ValueError: When the scheme or the path is missing or malformed; the
            message shows the expected shape, not the value.
    """
    scheme, sep, path = value.removeprefix(SECRET_PREFIX).partition("/")
    if not sep or not _SCHEME.fullmatch(scheme) or not path:
        raise ValueError("expected secret://<scheme>/<name>, e.g. secret://env/API_KEY or secret://file/token.txt")
    return SecretReference(scheme, path, base_dir, os.environ if environ is None else environ)


def resolve_secret(
    value: str,
    *,
    base_dir: Path,
    environ: Mapping[str, str] | None = None,
    server: str | None = None,
    field: str | None = None,
) -> str:
    """Resolve one ``secret://`` reference through its scheme's resolver.

    Raises:
        SecretError: When the reference is malformed, its scheme has no resolver
            (the message lists the known schemes), or the resolver refuses. The
            message names the reference, server and field, never a value.
    """
    try:
        reference = parse_secret_reference(value, base_dir=base_dir, environ=environ)
    except ValueError as exc:
        raise SecretError(SECRET_PREFIX + "...", str(exc), server=server, field=field) from None
    resolver = _RESOLVERS.get(reference.scheme)
    if resolver is None:
        known = ", ".join(sorted(_RESOLVERS))
        raise SecretError(
            str(reference),
            f"no resolver for scheme {reference.scheme!r}; known schemes: {known} "
            "(add one with register_secret_resolver)",
            server=server,
            field=field,
        )
    try:
        secret = resolver.resolve(reference)
    except Exception as exc:
        # No chaining: a plug-in's exception or traceback might carry what it fetched.
        reason = str(exc) or type(exc).__name__
        raise SecretError(str(reference), reason, server=server, field=field) from None
    if not isinstance(secret, str):
        raise SecretError(
            str(reference),
            f"the {reference.scheme!r} resolver returned {type(secret).__name__}, expected str",
            server=server,
            field=field,
        )
    return secret
