"""What the git policy knows about git: its global options, its commands, and what each may not be given.

The commands are git's own (``git --list-cmds=main``), so that an alias or an
external ``git-<name>`` program, which could run anything, is not mistaken for
one. Subcommand options are read with git's parse-options rules: long options
abbreviate to a unique prefix and short ones cluster.
"""

from __future__ import annotations

from collections.abc import Mapping

from ._declared import OptionRules
from ._options import Arity, Grammar

__all__ = ["COMMANDS", "COMMAND_RULES", "GLOBAL_DENIED", "GLOBAL_GRAMMAR", "PATH_OPTIONS", "REFUSED_COMMANDS"]

# git.c reads its global options by exact spelling: no abbreviations, no clusters.
GLOBAL_GRAMMAR = Grammar(
    {
        **dict.fromkeys(("-C", "-c", "--config-env", "--git-dir", "--work-tree", "--namespace", "--super-prefix",
                         "--attr-source"), Arity.REQUIRED),
        **dict.fromkeys(("--exec-path", "--list-cmds"), Arity.OPTIONAL),
        **dict.fromkeys(("-p", "--paginate", "-P", "--no-pager", "--bare", "--no-replace-objects", "--no-lazy-fetch",
                         "--no-optional-locks", "--no-advice", "--literal-pathspecs", "--glob-pathspecs",
                         "--noglob-pathspecs", "--icase-pathspecs", "--html-path", "--man-path", "--info-path",
                         "-v", "--version", "-h", "--help"), Arity.NONE),
    },
    complete=True,
    abbreviations=False,
)

#: Global options naming a folder whose repository (config, hooks) git will obey.
PATH_OPTIONS = ("-C", "--git-dir", "--work-tree")

_CONFIG = "sets git configuration for this call, and configuration runs commands (alias.*=!cmd, core.sshCommand, " \
          "core.fsmonitor, core.pager)"
GLOBAL_DENIED: Mapping[str, str] = {
    "-c": _CONFIG,
    "--config-env": _CONFIG,
    "--exec-path=": "makes git look for its commands in that folder, so any program there runs as a git command",
}

_PACK = "names the program run for the other end of the transfer, which for a local or ssh:// remote runs here"
_TRANSPORT = {"--upload-pack": _PACK, "--receive-pack": _PACK, "--exec": _PACK}
_TEMPLATE = "copies hooks from a template folder into the new repository, where git runs them"

COMMAND_RULES: Mapping[str, OptionRules] = {
    **dict.fromkeys(("fetch", "pull", "push", "archive", "fetch-pack", "send-pack"), OptionRules.of(_TRANSPORT)),
    "ls-remote": OptionRules.of({**_TRANSPORT, "-u": _PACK}),
    "clone": OptionRules.of({**_TRANSPORT, "-u": _PACK, "--template": _TEMPLATE, "-c": _CONFIG, "--config": _CONFIG}),
    "init": OptionRules.of({"--template": _TEMPLATE}),
    "init-db": OptionRules.of({"--template": _TEMPLATE}),
    "rebase": OptionRules.of({"--exec": "runs a shell command after each commit", "-x": "runs a shell command after "
                                                                                          "each commit"}),
    "grep": OptionRules.of({"--open-files-in-pager": "runs its value as the pager", "-O": "runs its value as the "
                                                                                          "pager"}),
    "submodule": OptionRules.of(words={"foreach": "runs a shell command in every submodule"}),
    "submodule--helper": OptionRules.of(words={"foreach": "runs a shell command in every submodule"}),
    "bisect": OptionRules.of(words={"run": "runs a command to judge each commit"}),
}

_LAUNCHES = "launches external programs by design (--extcmd, --tool)"
_SERVER = "serves the repository it is pointed at and runs that repository's hooks"
REFUSED_COMMANDS: Mapping[str, str] = {
    "filter-branch": "runs shell commands given as filters",
    "difftool": _LAUNCHES,
    "mergetool": _LAUNCHES,
    "merge-index": "runs the merge program it is given",
    "merge-one-file": "is a helper of merge-index that runs merge programs",
    "for-each-repo": "runs a git command line, which this policy would not check, in other repositories",
    "instaweb": "starts a web server, and --httpd names the program to run",
    "daemon": "starts a server, and --access-hook names a program to run",
    "send-email": "runs programs given by --sendmail-cmd, --to-cmd and --cc-cmd",
    "svn": "runs the program given by --authors-prog",
    "shell": "runs the commands given to it with -c",
    "web--browse": "runs a browser command it is given",
    "remote-ext": "runs the command it is given as a transport",
    "remote-fd": "is a transport helper, not a command",
    "upload-pack": _SERVER,
    "receive-pack": _SERVER,
    "upload-archive": _SERVER,
    "http-backend": _SERVER,
}

#: git's commands (``git --list-cmds=main`` of git 2.39, and newer ones); anything else is an alias or a program.
_COMMAND_NAMES = """
    add am annotate apply archive backfill bisect blame branch bugreport bundle cat-file check-attr check-ignore
    check-mailmap check-ref-format checkout checkout-index cherry cherry-pick clean clone column commit commit-graph
    commit-tree config count-objects credential credential-cache credential-store describe diagnose diff diff-files
    diff-index diff-tree fast-export fast-import fetch fetch-pack fmt-merge-msg for-each-ref format-patch fsck
    fsck-objects gc get-tar-commit-id grep hash-object help hook http-fetch http-push imap-send index-pack init
    init-db interpret-trailers log ls-files ls-remote ls-tree mailinfo mailsplit maintenance merge merge-base
    merge-file merge-tree mktag mktree multi-pack-index mv name-rev notes pack-objects pack-redundant pack-refs
    patch-id prune prune-packed pull push quiltimport range-diff read-tree rebase reflog refs remote repack replace
    replay request-pull rerere reset restore rev-list rev-parse revert rm send-pack shortlog show show-branch
    show-index show-ref sparse-checkout stage stash status stripspace submodule submodule--helper switch symbolic-ref
    tag unpack-file unpack-objects update-index update-ref update-server-info var verify-commit verify-pack verify-tag
    version whatchanged worktree write-tree
"""
COMMANDS = frozenset(_COMMAND_NAMES.split()) | REFUSED_COMMANDS.keys()
