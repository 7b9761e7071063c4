"""Secrets in config values: ``${VAR}`` expansion, ``secret://`` references and their resolvers, masking for display.

Shared by config (loading, resolving a server's settings), the builtins (the files
secrets are read from are protected), serving and the CLI (what they show a person).
A root package: every package may import it; what users need of it is published by
:mod:`toolsift.config.secrets`.
"""
