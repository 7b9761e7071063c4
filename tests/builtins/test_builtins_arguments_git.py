"""The git argument policy: configuration, transports, commands that run commands, foreign repositories."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolsift import PolicyDenied
from toolsift.builtins import CommandPolicy

GIT = CommandPolicy(allowed_programs=("git",))


@pytest.mark.parametrize(
    ("command", "argument", "why"),
    [
        # Configuration from the command line.
        ("git -c alias.x=!cmd x", "-c", "sets git configuration"),
        ("git -calias.x=!cmd x", "-calias.x=!cmd", "sets git configuration"),
        ("git -c core.sshCommand=cmd fetch origin", "-c", "sets git configuration"),
        ("git --config-env=core.pager=HOME log", "--config-env=core.pager=HOME", "sets git configuration"),
        ("git --config-env core.pager=HOME log", "--config-env", "sets git configuration"),
        ("git -p -c core.pager=cmd log", "-c", "sets git configuration"),
        ("git --exec-path=bin status", "--exec-path=bin", "look for its commands in that folder"),
        ("git clone -c core.fsmonitor=cmd url dir", "-c", "sets git configuration"),
        ("git clone --config=core.fsmonitor=cmd url dir", "--config=core.fsmonitor=cmd", "sets git configuration"),
        ("git clone --conf core.fsmonitor=cmd url dir", "--conf", "abbreviates --config"),
        # Programs named for the other end of a transfer.
        ("git ls-remote --upload-pack=cmd .", "--upload-pack=cmd", "names the program run for the other end"),
        ("git ls-remote --upload-pack cmd .", "--upload-pack", "names the program"),
        ("git ls-remote --upl=cmd .", "--upl=cmd", "abbreviates --upload-pack"),
        ("git ls-remote -u cmd .", "-u", "names the program"),
        ("git ls-remote -ucmd .", "-ucmd", "names the program"),
        ("git ls-remote --exec=cmd .", "--exec=cmd", "names the program"),
        ("git fetch --upload-pack=cmd origin", "--upload-pack=cmd", "names the program"),
        ("git pull --upload-pack=cmd origin", "--upload-pack=cmd", "names the program"),
        ("git push --receive-pack=cmd origin", "--receive-pack=cmd", "names the program"),
        ("git push --rec=cmd origin", "--rec=cmd", "abbreviates --receive-pack"),
        ("git push --exec=cmd origin", "--exec=cmd", "names the program"),
        ("git clone -u cmd url dir", "-u", "names the program"),
        ("git clone -qu cmd url dir", "-qu", "includes -u"),
        ("git clone --upload-pack=cmd url dir", "--upload-pack=cmd", "names the program"),
        ("git archive --remote=url --exec=cmd HEAD", "--exec=cmd", "names the program"),
        ("git fetch-pack --upload-pack=cmd url", "--upload-pack=cmd", "names the program"),
        ("git send-pack --receive-pack=cmd url", "--receive-pack=cmd", "names the program"),
        ("git clone ext::cmd dir", "ext::cmd", "ext:: transport"),
        ("git fetch ext::cmd", "ext::cmd", "ext:: transport"),
        # Hooks from a template folder.
        ("git clone --template=tpl url dir", "--template=tpl", "copies hooks"),
        ("git init --template tpl", "--template", "copies hooks"),
        # Commands that run commands.
        ("git rebase --exec=cmd main", "--exec=cmd", "runs a shell command after each commit"),
        ("git rebase -x cmd main", "-x", "runs a shell command after each commit"),
        ("git rebase -ix cmd main", "-ix", "includes -x"),
        ("git rebase --exe cmd main", "--exe", "abbreviates --exec"),
        ("git grep -O cmd foo", "-O", "runs its value as the pager"),
        ("git grep -Ocmd foo", "-Ocmd", "runs its value as the pager"),
        ("git grep --open-files-in-pager=cmd foo", "--open-files-in-pager=cmd", "runs its value as the pager"),
        ("git submodule foreach cmd", "foreach", "runs a shell command in every submodule"),
        ("git submodule --quiet foreach cmd", "foreach", "runs a shell command in every submodule"),
        ("git bisect run cmd", "run", "runs a command to judge each commit"),
        ("git difftool --extcmd=cmd", "difftool", "launches external programs"),
        ("git difftool -x cmd", "difftool", "launches external programs"),
        ("git mergetool --tool=x", "mergetool", "launches external programs"),
        ("git filter-branch --tree-filter cmd", "filter-branch", "runs shell commands given as filters"),
        ("git instaweb --httpd=cmd", "instaweb", "--httpd names the program"),
        ("git daemon --access-hook=cmd", "daemon", "--access-hook names a program"),
        ("git for-each-repo --config=x status", "for-each-repo", "runs a git command line"),
        ("git merge-index cmd -a", "merge-index", "runs the merge program"),
        ("git upload-pack /elsewhere", "upload-pack", "runs that repository's hooks"),
        # Aliases and unknown options cannot be checked.
        ("git co -b x", "co", "'co' is not a git command this policy knows"),
        ("git --frobnicate status", "--frobnicate", "not an option this policy knows"),
        # Writing configuration.
        ("git config alias.x !cmd", "alias.x", "would write configuration"),
        ("git config --global core.sshCommand cmd", "core.sshCommand", "would write configuration"),
        ("git config --add alias.x !cmd", "--add", "writes git configuration"),
        ("git config --replace-all alias.x !cmd", "--replace-all", "writes git configuration"),
        ("git config --rep alias.x !cmd", "--rep", "writes git configuration"),
        ("git config -e", "-e", "writes git configuration"),
        ("git config set alias.x !cmd", "set", "would write configuration"),
        ("git config --file=other.cfg core.hooksPath hooks", "core.hooksPath", "would write configuration"),
    ],
)
def test_git_refuses_what_runs_commands(command: str, argument: str, why: str) -> None:
    with pytest.raises(PolicyDenied, match=re.escape(f"git: the argument {argument!r} is refused because") + ".*"
                       + re.escape(why)):
        GIT.parse(command)


@pytest.mark.parametrize(
    "command",
    [
        "git status", "git log -n 3", "git log --oneline -n 3", "git --no-pager log -p", "git -C sub status",
        "git --git-dir=.git --work-tree=. status", "git diff --stat HEAD~1", "git push -u origin main",
        "git add -u", "git fetch -u origin", "git clone https://example.com/r.git r", "git commit -m x",
        "git grep -n foo", "git rebase -i main", "git log -- -x", "git submodule status", "git bisect start",
        "git --exec-path", "git config user.name", "git config --get user.name", "git config --list",
        "git config -l", "git config get user.name", "git config --get-regexp alias", "git --version", "git",
        "git -C sub -C .. status", "git -C",
    ],
)
def test_git_allows_ordinary_commands(command: str) -> None:
    assert GIT.parse(command)[0] == "git"


@pytest.mark.parametrize(
    ("command", "argument"),
    [
        ("git -C /etc status", "-C /etc"),
        ("git -C .. status", "-C .."),
        ("git -C sub -C ../.. status", "-C ../.."),
        ("git --git-dir=../other/.git status", "--git-dir=../other/.git"),
        ("git --git-dir ../other/.git status", "--git-dir ../other/.git"),
        ("git --work-tree=/tmp status", "--work-tree=/tmp"),
        ("git -C sub --git-dir=../../x status", "--git-dir=../../x"),
    ],
)
def test_git_stays_in_the_workspace(tmp_path: Path, command: str, argument: str) -> None:
    (tmp_path / "sub").mkdir()
    with pytest.raises(PolicyDenied, match=re.escape(f"git: the argument {argument!r} is refused because it points "
                                                     "git outside the workspace")):
        GIT.parse(command, workspace=tmp_path)


def test_git_accepts_absolute_paths_inside_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    assert GIT.parse(f"git -C {tmp_path}/sub status", workspace=tmp_path)
    assert GIT.parse("git -C sub --git-dir=../.git status", workspace=tmp_path)
