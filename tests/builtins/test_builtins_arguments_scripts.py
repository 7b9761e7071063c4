"""sed and awk: the scripts they are given are read, and what runs commands or writes files is refused."""

from __future__ import annotations

import re

import pytest

from toolsift import PolicyDenied
from toolsift.builtins import CommandPolicy
from toolsift.builtins.arguments import argument_policy
from toolsift.builtins.arguments._awk import awk_refusal
from toolsift.builtins.arguments._sed import sed_refusal

SED = CommandPolicy(allowed_programs=("sed",))
AWK = CommandPolicy(allowed_programs=("awk", "gawk"))


@pytest.mark.parametrize(
    ("command", "argument", "why"),
    [
        ("sed 1e f", "1e", "its 'e' command runs a shell command"),
        ("sed e f", "e", "its 'e' command runs a shell command"),
        ("sed /x/e f", "/x/e", "its 'e' command runs a shell command"),
        ("sed 2,5!e f", "2,5!e", "its 'e' command runs a shell command"),
        ("sed s/a/b/e f", "s/a/b/e", "its s///e flag runs the result as a shell command"),
        ("sed s/a/b/ge f", "s/a/b/ge", "its s///e flag"),
        ("sed s|a|b|e f", None, None),  # '|' never reaches sed: only a shell understands it
        ("sed 's/a/b/w out' f", "s/a/b/w out", "its s///w flag writes to a file"),
        ("sed 's/a/b/gpw out' f", "s/a/b/gpw out", "its s///w flag writes to a file"),
        ("sed 'w out' f", "w out", "its 'w' command writes to a file"),
        ("sed '1W out' f", "1W out", "its 'W' command writes to a file"),
        ("sed -e p -e 1e f", "p\n1e", "its 'e' command"),
        ("sed --expression=1e f", "1e", "its 'e' command"),
        ("sed --expression 1e f", "1e", "its 'e' command"),
        ("sed --expr=1e f", "1e", "its 'e' command"),
        ("sed -ne 1e f", "1e", "its 'e' command"),
        ("sed -e 'a\\' -e 'x' -e 'e' f", "a\\\nx\ne", "its 'e' command"),
        ("sed -f script.sed f", "-f", "reads the script from a file"),
        ("sed --file=script.sed f", "--file=script.sed", "reads the script from a file"),
        ("sed -nf script.sed f", "-nf", "includes -f, which reads the script from a file"),
        ("sed --fi=script.sed f", "--fi=script.sed", "abbreviates --file"),
        ("sed --frobnicate s/a/b/ f", "--frobnicate", "not an option this policy knows"),
        ("sed --s s/a/b/ f", "--s", "it could abbreviate --sandbox, --separate, --silent"),
        ("sed 1k f", "1k", "cannot be checked: 'k' at offset 1 is not a sed command"),
        ("sed s/a/b f", "s/a/b", "cannot be checked: unterminated '/'-delimited part"),
    ],
)
def test_sed_refuses_commands_that_run_or_write(command: str, argument: str | None, why: str | None) -> None:
    if argument is None:
        with pytest.raises(PolicyDenied, match="only a shell understands"):
            SED.parse(command)
        return
    assert why is not None
    with pytest.raises(PolicyDenied, match=re.escape(f"sed: the argument {argument!r} is refused because") + ".*"
                       + re.escape(why)):
        SED.parse(command)


@pytest.mark.parametrize(
    "command",
    [
        "sed s/a/b/g f", "sed -n 1p f", "sed -i s/a/b/ f", "sed -i.bak s/a/b/ f", "sed --in-place=.bak s/a/b/ f",
        "sed -E s/(a+)/[\\1]/ f", "sed -e s/a/b/ -e s/c/d/ f", "sed /re/d f",
        "sed 1,3d f", "sed $!N f", "sed :a f", "sed y/abc/xyz/ f", "sed 'a hello e world' f", "sed s/e/w/ f",
        "sed s/x/y/gI f", "sed /e/p f", "sed s,e,w,g f",
        "sed 0~4d f", "sed 5q f", "sed '1{p}' f", "sed 's/a\\/e/b/' f", "sed -s -n $p f g", "sed --posix 1d f",
        "sed -n p example.txt", "sed --quiet --regexp-extended 1p f",
    ],
)
def test_sed_allows_editing(command: str) -> None:
    assert SED.parse(command)[0] == "sed"


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        ("s/a/b/;e", "its 'e' command runs a shell command"),
        ("1{\ns/a/b/\nw out\n}", "its 'w' command writes to a file"),
        ("a foo;e id\n$e", "its 'e' command runs a shell command"),
        ("# comment e\ns/x/y/e", "its s///e flag runs the result as a shell command"),
        ("b end;e\n:end", "its 'e' command runs a shell command"),
        ("1", "the script cannot be checked: an address without a command at the end"),
        ("1,p", "the script cannot be checked: missing second address"),
        ("s\na\nb\n", "the script cannot be checked: no usable delimiter"),
        ("p x", "the script cannot be checked: unexpected 'x'"),
    ],
)
def test_sed_scripts_are_read_command_by_command(script: str, reason: str) -> None:
    assert (sed_refusal(script) or "").startswith(reason)


@pytest.mark.parametrize("script", ["a foo;e id", "r file;e", "s/a/b/;s/c/d/", ":a\nN\n$!ba\ns/\\n/ /g", "1~2d",
                                    "/a/,/b/{/c/d\n}", "l 5", "y/e/w/", "\\,e,d", "/x/I,+3p", "$!{N}", "v 4.2"])
def test_sed_scripts_without_commands_that_run_or_write_pass(script: str) -> None:
    assert sed_refusal(script) is None


@pytest.mark.parametrize(
    ("command", "argument", "why"),
    [
        ("awk BEGIN{system(\"id\")}", "BEGIN{system(id)}", "it calls system()"),
        ("awk -e BEGIN{system(1)}", "BEGIN{system(1)}", "it calls system()"),
        ("gawk --source=BEGIN{system(1)}", "BEGIN{system(1)}", "it calls system()"),
        ("awk -f prog.awk f", "-f", "reads the program from a file"),
        ("awk --file=prog.awk f", "--file=prog.awk", "reads the program from a file"),
        ("gawk -E prog.awk f", "-E", "reads the program from a file"),
        ("gawk --exec=prog.awk f", "--exec=prog.awk", "reads the program from a file"),
        ("gawk -i inc.awk {print}", "-i", "includes awk source from a file"),
        ("gawk --include=inc.awk {print}", "--include=inc.awk", "reads the program from a file"),
        ("gawk -l ext {print}", "-l", "loads a compiled extension"),
        ("gawk --load=ext {print}", "--load=ext", "loads a compiled extension"),
        ("awk -W exec prog.awk", "-W", "passes an implementation option"),
        ("gawk -D {print}", "-D", "starts the debugger"),
        ("gawk --profile=/home/u/.bashrc {print}", "--profile=/home/u/.bashrc", "writes to the file it names"),
        ("gawk -pout {print}", "-pout", "writes to the file it names"),
        ("gawk '@load \"x\"'", '@load "x"', "it uses @"),
        ("gawk BEGIN{f=\"system\"}", "BEGIN{f=system}", "it calls system()"),
        ("gawk --frobnicate {print}", "--frobnicate", "not an option this policy knows"),
    ],
)
def test_awk_refuses_programs_that_run_or_write(command: str, argument: str, why: str) -> None:
    program = command.split()[0]
    with pytest.raises(PolicyDenied, match=re.escape(f"{program}: the argument {argument!r} is refused because")
                       + ".*" + re.escape(why)):
        AWK.parse(command)


@pytest.mark.parametrize(
    ("program", "reason"),
    [
        ('{ print | "sh" }', "it uses '|', which pipes to or from a shell command"),
        ('BEGIN { "date" | getline d }', "it uses '|'"),
        ('BEGIN { print "x" |& "/inet/tcp/0/h/80" }', "it uses '|'"),
        ("{ a ||| b }", "it uses '|'"),
        ('{ print > "/home/u/.bashrc" }', "it prints and uses '>'"),
        ('{ printf("%s", $0) >> "log" }', "it prints and uses '>'"),
        ('@include "x.awk"', "it uses @"),
        ('BEGIN { f = "system"; @f("id") }', "it calls system()"),
        ('function g(){} BEGIN { f = "g"; @ f() }', "it uses @"),
        ("BEGIN { system (\"id\") }", "it calls system()"),
    ],
)
def test_awk_programs_are_searched_for_commands_pipes_and_redirections(program: str, reason: str) -> None:
    assert (awk_refusal(program) or "").startswith(reason)
    assert argument_policy("gawk", {}).check([program, "data"], workspace=None) is not None


@pytest.mark.parametrize("program", ["{print $1}", "NR==1", "a || b { n++ } END { print n }", "$3 > 100 { n++ }",
                                     "{ s = mysystem }", "{ print $1, $2 }"])
def test_awk_programs_without_them_pass_the_search(program: str) -> None:
    assert awk_refusal(program) is None


def test_awk_search_reads_regular_expressions_as_code() -> None:
    # Telling /x|y/ from a division needs awk's grammar; the search refuses rather than guess.
    assert awk_refusal("/x|y/") == "it uses '|', which pipes to or from a shell command"


@pytest.mark.parametrize("command", ["awk {print}", "awk -F, {print$2} f", "awk -v x=1 BEGIN{print(x)}",
                                     "gawk --sandbox -e {print} f", "awk NR==1 system.log", "gawk -d {print}",
                                     "gawk --lint=fatal {print}", "mawk -F: {print$1} f"])
def test_awk_allows_reading_programs(command: str) -> None:
    assert AWK.model_copy(update={"allowed_programs": ("awk", "gawk", "mawk")}).parse(command)
