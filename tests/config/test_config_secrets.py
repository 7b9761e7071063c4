"""``${VAR}`` expansion, ``secret://`` resolvers, connect-time resolution and the child environment."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolsift import ConfigError, SecretError
from toolsift._secrets._expand import expand_variables, reference_problem
from toolsift._secrets._resolvers import EnvSecretResolver, FileSecretResolver, resolve_secret
from toolsift.config import HttpServer, ServerConfig, StdioServer, parse_config
from toolsift.config._internal import child_environment, resolve_server
from toolsift.config._resolve import ResolvedHttp, ResolvedStdio
from toolsift.config.secrets import (
    SecretReference,
    SecretResolver,
    register_secret_resolver,
    unregister_secret_resolver,
)

SECRET = "s3cr3t-Value-9f2c"


def server(**settings: object) -> ServerConfig:
    model = StdioServer if "command" in settings else HttpServer
    return model.model_validate(settings).with_name("srv")


# --- ${VAR} expansion -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("${A}", "alpha"),
        ("x-${A}-${B}-y", "x-alpha--y"),
        ("${MISSING:-fallback}", "fallback"),
        ("${MISSING:-}", ""),
        ("${B:-unused}", ""),  # set but empty: used as is, as Claude Code does
        ("${A:-a:-b}", "alpha"),
        ("${MISSING:-a:-b}", "a:-b"),
        ("$A and $$ and $", "$A and $$ and $"),  # only the braced form expands
        ("${MISSING:-https://h/mcp}", "https://h/mcp"),
        ("plain", "plain"),
    ],
)
def test_expand_replaces_braced_references(value: str, expected: str) -> None:
    assert expand_variables(value, {"A": "alpha", "B": ""}) == expected


def test_expand_unset_variable_names_reference_server_and_field() -> None:
    with pytest.raises(
        SecretError,
        match=r"Cannot resolve '\$\{NOPE\}' in server 'git' field 'env.X': environment "
        r"variable 'NOPE' is not set; set it or write \$\{NOPE:-default\}",
    ):
        expand_variables("pre-${NOPE}", {}, server="git", field="env.X")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("${", r"a '\$\{' is not closed"),
        ("${A} ${B", r"a '\$\{' is not closed"),
        ("${}", r"the reference to '' is not valid"),
        ("${1ABC}", r"the reference to '1ABC' is not valid"),
        ("${A B:-x}", r"the reference to 'A B' is not valid"),
        ("${A-B}", r"the reference to 'A-B' is not valid"),
    ],
)
def test_expand_refuses_malformed_references(value: str, message: str) -> None:
    assert reference_problem(value) is not None
    with pytest.raises(SecretError, match=message):
        expand_variables(value, {"A": "1", "B": "2"})


NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
LITERALS = st.text(alphabet=st.characters(blacklist_characters="$"), max_size=12)
VALUES = st.text(max_size=12)


@given(
    st.lists(st.one_of(LITERALS.map(lambda t: ("lit", t)), NAMES.map(lambda n: ("ref", n))), max_size=6),
    st.dictionaries(NAMES, VALUES, max_size=6),
)
def test_expand_is_the_concatenation_of_its_parts(parts: list[tuple[str, str]], environ: dict[str, str]) -> None:
    """Each reference becomes its value (or its default), literal text stays, nothing is expanded twice."""
    text = "".join(t if kind == "lit" else f"${{{t}:-<{t}>}}" for kind, t in parts)
    expected = "".join(t if kind == "lit" else environ.get(t, f"<{t}>") for kind, t in parts)
    assert expand_variables(text, environ) == expected


@given(st.text(alphabet=st.characters(blacklist_characters="$"), max_size=30))
def test_expand_leaves_text_without_dollar_alone(text: str) -> None:
    assert expand_variables(text, {}) == text
    assert reference_problem(text) is None


@given(NAMES, st.text(max_size=20))
def test_expand_never_rescans_substituted_values(name: str, value: str) -> None:
    assert expand_variables(f"${{{name}}}", {name: value, "OTHER": "x"}) == value


# --- secret:// resolvers ----------------------------------------------------------------------


def test_env_secret_reads_the_variable() -> None:
    resolver = EnvSecretResolver()
    assert resolver.resolve(SecretReference("env", "TOKEN", Path(), {"TOKEN": SECRET})) == SECRET
    with pytest.raises(LookupError, match="environment variable 'NOPE' is not set"):
        resolver.resolve(SecretReference("env", "NOPE", Path(), {}))
    assert resolve_server(server(command="x", env={"K": "secret://env/TOKEN"}), environ={"TOKEN": SECRET}).env == {
        "K": SECRET
    }


def test_env_secret_unset_names_server_and_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLSIFT_TEST_NOPE", raising=False)
    with pytest.raises(
        SecretError,
        match=r"Cannot resolve 'secret://env/TOOLSIFT_TEST_NOPE' in server 'srv' field "
        r"'env.K': environment variable 'TOOLSIFT_TEST_NOPE' is not set",
    ):
        resolve_server(server(command="x", env={"K": "secret://env/TOOLSIFT_TEST_NOPE"}))


def test_file_secret_strips_one_trailing_newline(tmp_path: Path) -> None:
    (tmp_path / "token").write_text(SECRET + "\n\n")
    (tmp_path / "crlf").write_bytes(SECRET.encode() + b"\r\n")
    resolver = FileSecretResolver()
    assert resolver.resolve(SecretReference("file", "token", tmp_path)) == SECRET + "\n"
    assert resolver.resolve(SecretReference("file", "crlf", tmp_path)) == SECRET
    absolute = f"/{(tmp_path / 'crlf').as_posix().lstrip('/')}"
    assert resolve_secret(f"secret://file/{absolute}", base_dir=Path("/elsewhere")) == SECRET


def test_file_secret_relative_to_config_folder_and_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".tok").write_text(SECRET)
    config = parse_config(
        {"mcpServers": {"a": {"command": "x", "env": {"T": "secret://file/.tok", "H": "secret://file/~/.tok"}}}},
        path=tmp_path / "toolsift.json",
    )
    assert resolve_server(config.servers["a"]).env == {"T": SECRET, "H": SECRET}


def test_file_secret_errors_name_the_file_not_its_content(tmp_path: Path) -> None:
    (tmp_path / "bin").write_bytes(b"\xff" + SECRET.encode())
    with pytest.raises(SecretError, match=r"field 'env.K': cannot read '.*missing': No such file"):
        resolve_server(server(command="x", env={"K": "secret://file/missing"}), base_dir=tmp_path)
    with pytest.raises(SecretError, match=r"'.*bin' is not UTF-8 text") as caught:
        resolve_server(server(command="x", env={"K": "secret://file/bin"}), base_dir=tmp_path)
    assert SECRET not in str(caught.value)
    # No chained exception could carry the file's bytes.
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_secret_reference_may_hold_variables(tmp_path: Path) -> None:
    (tmp_path / "t").write_text("${NOT_EXPANDED}")
    resolved = resolve_server(server(command="x", env={"K": "secret://file/${DIR}/t"}), environ={"DIR": str(tmp_path)})
    assert resolved.env == {"K": "${NOT_EXPANDED}"}  # a secret's text is never expanded


class VaultResolver:
    scheme = "vault"

    def __init__(self) -> None:
        self.seen: list[SecretReference] = []

    def resolve(self, reference: SecretReference) -> str:
        self.seen.append(reference)
        if reference.path == "missing":
            raise LookupError(f"no secret at {reference.path!r}")
        if reference.path == "number":
            return 42  # type: ignore[return-value]
        return SECRET


@pytest.fixture
def vault() -> Iterator[VaultResolver]:
    resolver = VaultResolver()
    register_secret_resolver(resolver)
    yield resolver
    unregister_secret_resolver("vault")


def test_plugged_in_resolver_handles_its_scheme(vault: VaultResolver, tmp_path: Path) -> None:
    assert isinstance(vault, SecretResolver)
    resolved = resolve_server(
        server(url="https://h/mcp", headers={"Authorization": "secret://vault/kv/app#token"}), base_dir=tmp_path
    )
    assert resolved.headers == {"Authorization": SECRET}
    assert vault.seen == [SecretReference("vault", "kv/app#token", tmp_path, {})]
    assert str(vault.seen[0]) == "secret://vault/kv/app#token"


def test_plugged_in_resolver_failures_become_secret_errors(vault: VaultResolver) -> None:
    with pytest.raises(
        SecretError, match=r"'secret://vault/missing' in server 'srv' field 'url': no secret at 'missing'"
    ):
        resolve_server(server(url="secret://vault/missing"))
    with pytest.raises(SecretError, match=r"the 'vault' resolver returned int, expected str"):
        resolve_server(server(url="secret://vault/number"))


def test_unknown_scheme_lists_the_known_ones() -> None:
    with pytest.raises(
        SecretError,
        match=r"no resolver for scheme 'keychain'; known schemes: env, file "
        r"\(add one with register_secret_resolver\)",
    ):
        resolve_server(server(command="secret://keychain/tool"))


def test_malformed_reference_at_resolve_time_is_a_secret_error() -> None:
    with pytest.raises(SecretError, match=r"expected secret://<scheme>/<name>"):
        resolve_secret("secret://ENV/X", base_dir=Path())


def test_resolver_registration_rules(vault: VaultResolver) -> None:
    with pytest.raises(ValueError, match=r"Secret scheme 'vault' already has a resolver; pass replace=True"):
        register_secret_resolver(VaultResolver())
    bad = VaultResolver()
    bad.scheme = "Bad Scheme"
    with pytest.raises(ValueError, match=r"Secret scheme 'Bad Scheme' must match"):
        register_secret_resolver(bad)
    with pytest.raises(LookupError, match=r"No secret resolver for scheme 'nope'; registered: env, file, vault"):
        unregister_secret_resolver("nope")


class UpperEnvResolver(EnvSecretResolver):
    def resolve(self, reference: SecretReference) -> str:
        return super().resolve(reference).upper()


def test_builtin_resolver_can_be_replaced_and_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSIFT_TEST_X", "from-os")
    register_secret_resolver(UpperEnvResolver(), replace=True)
    try:
        assert resolve_secret("secret://env/TOOLSIFT_TEST_X", base_dir=Path()) == "FROM-OS"
    finally:
        unregister_secret_resolver("env")
    assert resolve_secret("secret://env/TOOLSIFT_TEST_X", base_dir=Path()) == "from-os"


# --- resolve_server ---------------------------------------------------------------------------


def test_resolve_stdio_server_expands_every_setting(tmp_path: Path) -> None:
    config = server(
        command="${BIN:-uvx}",
        args=["--repo", "${REPO}", "--token=${TOKEN}"],
        env={"API_KEY": "${TOKEN}", "PLAIN": "1"},
        cwd="${SUB}",
    )
    resolved = resolve_server(config, base_dir=tmp_path, environ={"REPO": "/r", "TOKEN": SECRET, "SUB": "work"})
    assert resolved == ResolvedStdio(
        name="srv",
        command="uvx",
        args=("--repo", "/r", f"--token={SECRET}"),
        env={"API_KEY": SECRET, "PLAIN": "1"},
        cwd=tmp_path / "work",
    )
    # ${BIN:-uvx} took the default written in the file: nothing of it is secret.
    assert resolved.redacted == {"args[1]", "args[2]", "env.API_KEY", "cwd"}


def test_a_reference_that_takes_its_written_default_is_not_secret() -> None:
    config = server(url="${NOTES_URL:-http://127.0.0.1:8765/mcp}")
    assert resolve_server(config, environ={}).redacted == set()
    assert "127.0.0.1:8765" in repr(resolve_server(config, environ={}))
    assert resolve_server(config, environ={"NOTES_URL": "http://h/mcp"}).redacted == {"url"}
    assert resolve_server(config, environ={"NOTES_URL": ""}).redacted == {"url"}
    mixed = server(url="${HOST:-http://h}/${PATH_PART}")
    assert resolve_server(mixed, environ={"PATH_PART": "p"}).redacted == {"url"}


def test_resolve_http_server_resolves_url_and_headers() -> None:
    config = server(url="${BASE}/mcp", type="sse", headers={"Authorization": "Bearer ${TOKEN}"})
    resolved = resolve_server(config, environ={"BASE": "https://h", "TOKEN": SECRET})
    assert resolved == ResolvedHttp(
        name="srv", transport="sse", url="https://h/mcp", headers={"Authorization": f"Bearer {SECRET}"}
    )
    assert resolved.redacted == {"url", "headers.Authorization"} and not hasattr(resolved, "command")


def test_resolve_server_absolute_and_home_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_server(server(command="x", cwd="/srv/x")).cwd == Path("/srv/x")
    assert resolve_server(server(command="x", cwd="~/w")).cwd == tmp_path / "w"
    assert resolve_server(server(command="x")).cwd is None


def test_resolved_repr_masks_secrets() -> None:
    config = server(
        command="secret://env/CMD",
        args=["--plain", "--token=${TOKEN}"],
        env={"API_KEY": "${TOKEN}", "LOG": "debug-visible-but-masked"},
        cwd="${TOKEN}",
    )
    resolved = resolve_server(config, environ={"TOKEN": SECRET, "CMD": SECRET}, base_dir=Path("/"))
    text = repr(resolved)
    assert SECRET not in text and "debug-visible" not in text
    assert "'--plain'" in text and "API_KEY" in text and "LOG" in text
    assert str(resolved) == text
    http = resolve_server(
        server(url="https://u:pw-1@h/mcp?key=${TOKEN}", headers={"A": "b"}), environ={"TOKEN": SECRET}
    )
    assert SECRET not in repr(http) and "pw-1" not in repr(http)
    assert "url='***'" in repr(http)
    plain = resolve_server(server(url="https://u:pw-2@h/mcp"))
    assert "pw-2" not in repr(plain) and "h/mcp" in repr(plain)


def test_secrets_never_reach_logs_or_errors(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "tok").write_text(SECRET)
    text = (
        '{"mcpServers": {"a": {"command": "x", "env": {"API_KEY": "' + SECRET + '", "F": "secret://file/tok"},'
        ' "args": ["--token", "' + SECRET + '"], "timeout": -1},'
        ' "b": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ' + SECRET + '"}}}}'
    )
    with caplog.at_level(logging.DEBUG, logger="toolsift"):
        config = parse_config(text, path=tmp_path / "toolsift.json", lenient=True)
        with pytest.raises(ConfigError) as caught:
            parse_config(text, path=tmp_path / "toolsift.json")
        resolved = resolve_server(config.servers["b"])
    assert resolved.headers["Authorization"] == f"Bearer {SECRET}"
    for shown in (caplog.text, str(caught.value), repr(config), repr(config.servers["b"]), repr(resolved)):
        assert SECRET not in shown
    assert re.search(r"b.headers.Authorization: 'Authorization' looks like a credential", caplog.text)


# --- the child environment --------------------------------------------------------------------


def test_child_environment_is_minimal_plus_configured_env() -> None:
    parent = {
        "PATH": "/usr/bin",
        "HOME": "/home/me",
        "LANG": "C.UTF-8",
        "TMPDIR": "/tmp/x",
        "OPENAI_API_KEY": "sk-parent",
        "AWS_SECRET_ACCESS_KEY": "aws-parent",
        "SHELL": "() { evil; }",
    }
    resolved = resolve_server(server(command="x", env={"PATH": "/opt/bin", "TOKEN": "${T}"}), environ={"T": SECRET})
    env = child_environment(resolved, environ=parent)
    assert env == {"PATH": "/opt/bin", "HOME": "/home/me", "LANG": "C.UTF-8", "TMPDIR": "/tmp/x", "TOKEN": SECRET}


def test_child_environment_defaults_to_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/bin-for-test")
    monkeypatch.setenv("TOOLSIFT_PARENT_ONLY", "1")
    env = child_environment(resolve_server(server(command="x")))
    assert env["PATH"] == "/bin-for-test"
    assert "TOOLSIFT_PARENT_ONLY" not in env
