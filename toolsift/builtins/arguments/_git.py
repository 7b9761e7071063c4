"""The git policy: no configuration from the command line, no foreign repositories, no commands that run commands.

git runs programs in many ways, and most of them are configuration: an alias
starting with ``!``, ``core.sshCommand``, ``core.fsmonitor``, ``core.pager``,
filter and diff drivers, hooks. So the policy refuses every way to set
configuration from the arguments (``-c``, ``--config-env``, ``clone
--config``, ``git config`` writes), every repository outside the workspace
(``-C``, ``--git-dir``, ``--work-tree``, whose config and hooks git would
obey), the options that name a program (``--upload-pack``, ``--exec``,
``rebase -x``, ``grep -O``), the ``ext::`` transport, and the commands built
to run others (``filter-branch``, ``difftool``, ``submodule foreach``,
``bisect run``; see ``_git_tables``). Aliases and external ``git-<name>``
programs cannot be checked and are refused.

What it cannot see: the configuration already in the repository. A caller who
can write ``.git/config`` (``write_file``) can make the next ``git status``
run a program, so deny writes under ``.git/`` with an argument policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import final

from ._confine import confine
from ._declared import OptionRules
from ._git_tables import COMMAND_RULES, COMMANDS, GLOBAL_DENIED, GLOBAL_GRAMMAR, PATH_OPTIONS, REFUSED_COMMANDS
from ._options import Operand, Option, scan
from ._policy import Refusal

__all__ = ["GitPolicy"]

_GLOBAL = OptionRules(GLOBAL_GRAMMAR, OptionRules.of(GLOBAL_DENIED).denied)
_EXT = "ext::"

_CONFIG_WRITES = frozenset(("--add", "--replace-all", "--unset", "--unset-all", "--rename-section",
                            "--remove-section", "-e", "--edit"))
_CONFIG_READS = frozenset(("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool",
                           "-l", "--list"))
# Both listed so that abbreviations (--rep for --replace-all) resolve as git resolves them.
_CONFIG_GRAMMAR = OptionRules.of(values=("-f", "--file", "--blob", "--type", "--default", "--comment", "--value"),
                                 flags=_CONFIG_WRITES | _CONFIG_READS).grammar
_CONFIG_WRITE_VERBS = frozenset(("set", "unset", "rename-section", "remove-section", "edit"))


@final
class GitPolicy:
    """The argument policy of ``git``."""

    def check(self, args: Sequence[str], *, workspace: Path | None) -> Refusal | None:
        """The first refused argument of a git command line."""
        for word in args:
            if word.startswith(_EXT):
                return Refusal(word, "it names the ext:: transport, which runs the command it is given")
        command_at = len(args)
        paths: list[Option] = []
        for token in scan(args, _GLOBAL.grammar):
            if isinstance(token, Operand):
                command_at = token.index
                break
            refusal = _GLOBAL.refusal(token)
            if refusal is not None:
                return refusal
            if token.name in PATH_OPTIONS:
                paths.append(token)
        refusal = _check_paths(paths, workspace)
        if refusal is not None or command_at == len(args):
            return refusal
        return _check_command(args[command_at], args[command_at + 1:])


def _check_paths(options: list[Option], workspace: Path | None) -> Refusal | None:
    """``-C`` folders in turn, then ``--git-dir`` and ``--work-tree`` from the last of them, as git reads them."""
    cwd = PurePosixPath()
    for option in sorted(options, key=lambda option: option.name != "-C"):
        if option.value is None:  # git itself refuses an option without its folder
            continue
        landed = confine(option.value, cwd=cwd, workspace=workspace)
        if landed is None:
            written = option.word if option.value in option.word else f"{option.word} {option.value}"
            rule = "" if workspace is not None else " (paths must be relative and must not climb out with '..')"
            return Refusal(written, "it points git outside the workspace, at a repository whose config and hooks "
                                    f"git would obey{rule}")
        if option.name == "-C":
            cwd = landed
    return None


def _check_command(command: str, args: Sequence[str]) -> Refusal | None:
    if command in REFUSED_COMMANDS:
        return Refusal(command, f"the git command {command!r} {REFUSED_COMMANDS[command]}")
    if command not in COMMANDS:
        return Refusal(command, f"{command!r} is not a git command this policy knows; an alias or an external "
                                f"git-{command} program could run anything")
    if command == "config":
        return _check_config(args)
    rules = COMMAND_RULES.get(command)
    return rules.check(args) if rules is not None else None


def _check_config(args: Sequence[str]) -> Refusal | None:
    """``git config`` may read; writing could set an alias or a hook."""
    operands: list[str] = []
    reads = False
    for token in scan(args, _CONFIG_GRAMMAR):
        if isinstance(token, Operand):
            operands.append(token.word)
            continue
        names = {token.name, *token.candidates}
        if names & _CONFIG_WRITES:
            return Refusal(token.word, "it writes git configuration, which can run commands (alias.*=!cmd, "
                                       "core.fsmonitor, core.sshCommand)")
        reads = reads or bool(names & _CONFIG_READS)
    verb = operands[0] if operands else None
    if verb in _CONFIG_WRITE_VERBS or (not reads and verb not in ("get", "list") and len(operands) > 1):
        return Refusal(verb, "git config would write configuration, which can run commands (alias.*=!cmd, "
                             "core.fsmonitor, core.sshCommand); only reads are allowed")
    return None
