"""Argument policies: reading options like the programs do, find/tar/rsync/sort/wget, wrappers, configured rules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from toolsift import ConfigError, PolicyDenied
from toolsift.builtins import CommandPolicy
from toolsift.builtins.arguments import BUILTIN_POLICIES, Refusal, argument_policy
from toolsift.builtins.arguments._defaults import WRAPPERS
from toolsift.builtins.arguments._options import Arity, Grammar, Operand, Option, scan
from toolsift.config import ProgramRule, ServeSettings

PROGRAMS = ("find", "tar", "rsync", "sort", "wget", "mytool")


def refuses(command: str, argument: str, **policy: object) -> None:
    """``command`` is refused, and the message names ``argument`` (as written) and the program."""
    program = command.split()[0]
    settings = CommandPolicy.model_validate({"allowed_programs": (program,), **policy})
    with pytest.raises(PolicyDenied, match=re.escape(f"{program}: the argument {argument!r} is refused because")):
        settings.parse(command)


def accepts(command: str, **policy: object) -> None:
    program = command.split()[0]
    assert CommandPolicy.model_validate({"allowed_programs": (program,), **policy}).parse(command)


GRAMMAR = Grammar({"-f": Arity.REQUIRED, "-i": Arity.OPTIONAL, "-v": Arity.NONE, "--file": Arity.REQUIRED,
                   "--fixed": Arity.NONE, "--in-place": Arity.OPTIONAL})


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--file=a", "b"], [Option("--file", "a", "--file=a", known=True), Operand("b", 1)]),
        (["--file", "a"], [Option("--file", "a", "--file", known=True)]),
        (["--fil", "a"], [Option("--file", "a", "--fil", known=True)]),
        (["--fi"], [Option("--fi", None, "--fi", known=False, candidates=("--file", "--fixed"))]),
        (["--in-place", "x"], [Option("--in-place", None, "--in-place", known=True), Operand("x", 1)]),
        (["-vfa"], [Option("-v", None, "-vfa", known=True), Option("-f", "a", "-vfa", known=True)]),
        (["-vf", "a"], [Option("-v", None, "-vf", known=True), Option("-f", "a", "-vf", known=True)]),
        (["-i.bak", "x"], [Option("-i", ".bak", "-i.bak", known=True), Operand("x", 1)]),
        (["-qz"], [Option("-q", None, "-qz", known=False), Option("-z", None, "-qz", known=False)]),
        (["--unknown", "x"], [Option("--unknown", None, "--unknown", known=False), Operand("x", 1)]),
        (["a", "--", "-f", "-"], [Operand("a", 0), Operand("-f", 2), Operand("-", 3)]),
        (["-f"], [Option("-f", None, "-f", known=True)]),
    ],
)
def test_scan_reads_options_like_getopt_long(args: list[str], expected: list[object]) -> None:
    assert list(scan(args, GRAMMAR)) == expected


def test_scan_without_abbreviations_keeps_prefixes_unknown() -> None:
    grammar = Grammar({"--file": Arity.REQUIRED}, abbreviations=False)
    assert list(scan(["--fil", "a"], grammar)) == [Option("--fil", None, "--fil", known=False), Operand("a", 1)]


@pytest.mark.parametrize(
    ("command", "argument"),
    [(f"find . -name x {word} y", word)
     for word in ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprintf", "-fprint0", "-fls")]
    + [("find -- . -exec x {} +", "-exec"), ("find . ( -name a -o -execdir x {} + )", "-execdir")],
)
def test_find_refuses_actions_that_run_delete_or_write(command: str, argument: str) -> None:
    refuses(command, argument)


@pytest.mark.parametrize("command", ["find . -name *.py", "find . -type f -print", "find src -newer x -ls"])
def test_find_allows_searching(command: str) -> None:
    accepts(command)


@pytest.mark.parametrize(
    ("command", "argument"),
    [
        ("tar -x --to-command=cmd -f a.tar", "--to-command=cmd"),
        ("tar -x --to-command cmd -f a.tar", "--to-command"),
        ("tar -x --to-com=cmd -f a.tar", "--to-com=cmd"),
        ("tar -c --checkpoint-action=exec=cmd -f a.tar x", "--checkpoint-action=exec=cmd"),
        ("tar -c --checkpoint-act=exec=cmd -f a.tar x", "--checkpoint-act=exec=cmd"),
        ("tar -c --use-compress-program=cmd -f a.tar x", "--use-compress-program=cmd"),
        ("tar -c --use=cmd -f a.tar x", "--use=cmd"),
        ("tar -c -I cmd -f a.tar x", "-I"),
        ("tar -c -Icmd -f a.tar x", "-Icmd"),
        ("tar -xvI cmd -f a.tar", "-xvI"),
        ("tar xIf cmd a.tar", "-I"),
        ("tar -c --info-script=cmd -f a.tar x", "--info-script=cmd"),
        ("tar -c -F cmd -f a.tar x", "-F"),
        ("tar -c --new-volume-script=cmd -f a.tar x", "--new-volume-script=cmd"),
        ("tar -c --rsh-command=cmd -f a.tar x", "--rsh-command=cmd"),
        ("tar -tf host:a.tar", "host:a.tar"),
        ("tar --file=user@host:a.tar -t", "user@host:a.tar"),
        ("tar tf -oProxyCommand=cmd:a", "-oProxyCommand=cmd:a"),
    ],
)
def test_tar_refuses_programs_and_remote_archives(command: str, argument: str) -> None:
    refuses(command, argument)


@pytest.mark.parametrize("command", ["tar -tf x.tar", "tar tf x.tar", "tar -xvf x.tar -C out", "tar -czf a.tgz src",
                                     "tar --checkpoint=10 -cf a.tar src", "tar -tf ./host:a.tar",
                                     "tar cf --to-command=x.tar src"])
def test_tar_allows_archiving(command: str) -> None:
    accepts(command)


@pytest.mark.parametrize(
    ("command", "argument"),
    [
        ("rsync -e cmd src host:dst", "-e"),
        ("rsync -ecmd src host:dst", "-ecmd"),
        ("rsync -avze cmd src host:dst", "-avze"),
        ("rsync --rsh=cmd src host:dst", "--rsh=cmd"),
        ("rsync --rsh cmd src host:dst", "--rsh"),
        ("rsync --rsync-path=cmd src host:dst", "--rsync-path=cmd"),
        ("rsync --rsync-p=cmd src host:dst", "--rsync-p=cmd"),
        ("rsync --rs=cmd src host:dst", "--rs=cmd"),
        ("rsync -M --log-file=x src host:dst", "-M"),
        ("rsync --daemon --config=x", "--daemon"),
        ("rsync -a -- -oProxyCommand=cmd:/a dst", "-oProxyCommand=cmd:/a"),
    ],
)
def test_rsync_refuses_remote_shells_and_programs(command: str, argument: str) -> None:
    refuses(command, argument)


@pytest.mark.parametrize("command", ["rsync -a src/ dst/", "rsync -avz src user@host:dst",
                                     "rsync -a -T /tmp/eggs src dst", "rsync -aT/tmp/eggs src dst"])
def test_rsync_allows_copies(command: str) -> None:
    accepts(command)


@pytest.mark.parametrize(
    ("command", "argument"),
    [
        ("sort --compress-program=gzip f", "--compress-program=gzip"),
        ("sort --compress-prog gzip f", "--compress-prog"),
        ("wget -e use_askpass=x http://a.example", "-e"),
        ("wget --execute=use_askpass=x http://a.example", "--execute=use_askpass=x"),
        ("wget --use-askpass=x http://a.example", "--use-askpass=x"),
    ],
)
def test_sort_and_wget_refuse_their_program_options(command: str, argument: str) -> None:
    refuses(command, argument)


@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_wrappers_are_refused_as_programs(wrapper: str) -> None:
    policy = CommandPolicy(allowed_programs=(wrapper,))
    with pytest.raises(PolicyDenied, match=re.escape(f"the program {wrapper!r} is refused because it runs the "
                                                     "program named in its arguments")):
        policy.parse(f"{wrapper} ls")


def test_policies_are_looked_up_by_base_name() -> None:
    assert argument_policy("/usr/bin/find", {}) is BUILTIN_POLICIES["find"]
    assert argument_policy("ls", {}).check(["-exec", "-c"], workspace=None) is None
    with pytest.raises(PolicyDenied, match="find: the argument '-delete' is refused"):
        CommandPolicy(allowed_programs=("/usr/bin/find",)).parse("/usr/bin/find . -delete")


@pytest.mark.parametrize(
    ("command", "argument"),
    [
        ("mytool --hook=x run", "--hook=x"),
        ("mytool --hook x run", "--hook"),
        ("mytool --ho x run", "--ho"),
        ("mytool -x run", "-x"),
        ("mytool -ax run", "-ax"),
        ("mytool run now", "now"),
    ],
)
def test_configured_rules_refuse_every_spelling(command: str, argument: str) -> None:
    rules = {"mytool": {"deniedOptions": {"--hook": "runs a hook script", "-x": "runs a hook script"},
                        "valueOptions": ["-o"], "deniedWords": ["now"]}}
    refuses(command, argument, programs=rules)


def test_configured_rules_read_values_as_values() -> None:
    accepts("mytool -o -x --output-dir=a", programs={"mytool": {"deniedOptions": ["-x", "--hook"],
                                                                "valueOptions": ["-o"]}})


def test_configured_rules_without_reasons_say_where_the_rule_is() -> None:
    with pytest.raises(PolicyDenied, match=r"'--hook' is refused because it is denied by commands\.programs\.mytool"):
        CommandPolicy.model_validate({"allowedPrograms": ["mytool"],
                                      "programs": {"mytool": {"deniedOptions": ["--hook"]}}}).parse("mytool --hook")


def test_configured_rules_add_to_the_builtin_policy() -> None:
    rules = {"git": {"deniedWords": {"push": "publishes commits"}}}
    refuses("git push origin", "push", programs=rules)
    refuses("git -c a.b=c status", "-c", programs=rules)
    accepts("git status", programs=rules)


def test_builtin_selects_or_drops_a_builtin_policy() -> None:
    refuses("mysed 1e f", "1e", programs={"mysed": {"builtin": "sed"}})
    accepts("env ls", programs={"env": {"builtin": "none"}})
    accepts("git -c a.b=c status", programs={"git": {"builtin": "none"}})


@pytest.mark.parametrize(
    ("programs", "message"),
    [
        ({"git": {"builtin": "nope"}}, "no built-in argument policy is named 'nope'; available: awk, busybox"),
        ({"x": {"deniedOptions": ["hook"]}}, "'hook' is not an option spelling: expected -x or --long"),
        ({"x": {"valueOptions": ["---o"]}}, "'---o' is not an option spelling"),
        ({"/usr/bin/git": {}}, "keyed by a program's base name"),
        ({"x": {"deniedOption": ["-x"]}}, "Extra inputs are not permitted"),
    ],
)
def test_program_rules_are_validated(programs: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        CommandPolicy.model_validate({"programs": programs})


def test_program_rules_load_from_the_serve_section() -> None:
    settings = ServeSettings.model_validate({"commands": {"allowedPrograms": ["mytool"], "programs": {
        "mytool": {"deniedOptions": {"--hook": "runs a hook"}, "builtin": "none"}}}})
    assert settings.commands.programs == {"mytool": ProgramRule(denied_options={"--hook": "runs a hook"},
                                                                builtin="none")}
    with pytest.raises(PolicyDenied, match="mytool: the argument '--hook=x' is refused because it runs a hook"):
        CommandPolicy.from_settings(settings.commands).parse("mytool --hook=x")


def test_an_unknown_builtin_policy_is_a_config_error_naming_the_field() -> None:
    settings = ServeSettings.model_validate({"commands": {"programs": {"gsed": {"builtin": "sedd"}}}})
    with pytest.raises(ConfigError, match=r"serve\.commands\.programs\.gsed\.builtin: no built-in argument policy "
                                          r"is named 'sedd'"):
        CommandPolicy.from_settings(settings.commands)


def test_paths_without_a_workspace_are_judged_by_spelling(tmp_path: Path) -> None:
    policy = CommandPolicy(allowed_programs=("git",))
    assert policy.parse("git -C sub status") == ["git", "-C", "sub", "status"]
    with pytest.raises(PolicyDenied, match=r"paths must be relative and must not climb out"):
        policy.parse(f"git -C {tmp_path} status")
    assert policy.parse(f"git -C {tmp_path} status", workspace=tmp_path)


def test_refusal_names_the_argument() -> None:
    assert BUILTIN_POLICIES["find"].check([".", "-delete"], workspace=None) == Refusal("-delete", "it deletes every "
                                                                                                  "file found")
