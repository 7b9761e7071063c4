"""Properties of the argument policies: a refused option is refused in every spelling, wherever it stands.

The cases come from the policies' own tables, so an option added to a table
is covered without a new test.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from toolsift.builtins.arguments import BUILTIN_POLICIES, argument_policy
from toolsift.builtins.arguments._awk import _RULES as AWK_RULES
from toolsift.builtins.arguments._awk import awk_refusal
from toolsift.builtins.arguments._declared import OptionRules
from toolsift.builtins.arguments._git import _GLOBAL as GIT_GLOBAL
from toolsift.builtins.arguments._git_tables import COMMAND_RULES as GIT_COMMANDS
from toolsift.builtins.arguments._options import Arity
from toolsift.builtins.arguments._rsync import _RULES as RSYNC_RULES
from toolsift.builtins.arguments._sed import _RULES as SED_RULES
from toolsift.builtins.arguments._sed import sed_refusal
from toolsift.builtins.arguments._tar import _RULES as TAR_RULES
from toolsift.config import ProgramRule

USER_RULE = ProgramRule(denied_options={"--hook": "runs a hook", "-x": "runs a hook", "--dump=": "writes a file"},
                        value_options=("-o",))
USER_RULES = OptionRules.of(USER_RULE.denied_options, values=USER_RULE.value_options)


@dataclass(frozen=True)
class Case:
    """A denied option of one program, and the words that must come before and after it."""

    program: str
    rules: OptionRules
    option: str
    lead: tuple[str, ...] = ()
    tail: tuple[str, ...] = ()


def _cases() -> list[Case]:
    tables: list[tuple[str, OptionRules, tuple[str, ...], tuple[str, ...]]] = [
        ("tar", TAR_RULES, ("-v",), ()),  # a first word without '-' would be an old-style bundle
        ("rsync", RSYNC_RULES, (), ()),
        ("sed", SED_RULES, (), ()),
        ("awk", AWK_RULES, (), ()),
        ("git", GIT_GLOBAL, (), ("status",)),
        ("mytool", USER_RULES, (), ()),
        *((name, policy, (), ()) for name, policy in BUILTIN_POLICIES.items()
          if isinstance(policy, OptionRules) and policy.denied),
        *(("git", rules, (command,), ()) for command, rules in GIT_COMMANDS.items()),
    ]
    return [Case(program, rules, option, lead, tail) for program, rules, lead, tail in tables
            for option in rules.denied]


CASES = _cases()
VALUES = st.text(st.sampled_from("abcxyz019=./:"), min_size=1, max_size=8)
OPERANDS = st.sampled_from(["src", "dst/", "x.tar", "origin", "main", "notes.txt", "1p"])


@st.composite
def spellings(draw: st.DrawFn, case: Case) -> list[str]:
    """The words of one way to write ``case.option``, as the program would accept it."""
    name, grammar = case.option, case.rules.grammar
    only_with_value = case.rules.denied[name].only_with_value
    value = draw(VALUES)
    if name.startswith("--"):
        written = name
        shorter = [name[:end] for end in range(3, len(name)) if name[:end] not in grammar.options]
        if grammar.abbreviations and shorter and draw(st.booleans()):
            written = draw(st.sampled_from(shorter))
        if only_with_value or draw(st.booleans()):
            return [f"{written}={value}"]
        return [written, value]
    flags = sorted(n[1] for n, arity in grammar.options.items() if len(n) == 2 and arity is Arity.NONE
                   and n not in case.rules.denied)
    before = "".join(draw(st.lists(st.sampled_from(flags), max_size=3))) if flags else ""
    if only_with_value or draw(st.booleans()):
        return [f"-{before}{name[1]}{value}"]
    return [f"-{before}{name[1]}", value]


def benign(case: Case) -> st.SearchStrategy[list[str]]:
    """Words that are not refused and do not take the next word as their value."""
    grammar = case.rules.grammar
    flags = [name for name, arity in grammar.options.items() if arity is Arity.NONE and name not in case.rules.denied]
    if not grammar.complete:
        flags += ["-q", "--verbose"]  # unknown to the grammar, so read as flags
    if case.program == "git" and not case.lead:
        return st.lists(st.sampled_from(flags), max_size=4)  # before the command, any operand would be the command
    return st.lists(st.sampled_from(flags) | OPERANDS, max_size=4)


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_no_spelling_of_a_denied_option_passes(data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(CASES))
    spelled = data.draw(spellings(case))
    args = [*case.lead, *data.draw(benign(case)), *spelled, *data.draw(benign(case)), *case.tail]
    rules = {"mytool": USER_RULE} if case.program == "mytool" else {}
    refusal = argument_policy(case.program, rules).check(args, workspace=None)
    assert refusal is not None, args
    assert refusal.argument == spelled[0], (args, refusal)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_denied_words_are_refused_anywhere(data: st.DataObject) -> None:
    find = BUILTIN_POLICIES["find"]
    assert isinstance(find, OptionRules)
    word = data.draw(st.sampled_from(sorted(find.words)))
    before = data.draw(st.lists(st.sampled_from([".", "src", "-name", "*.py", "-type", "f", "--", "(", ")", "!"])))
    args = [*before, word, *data.draw(st.lists(st.sampled_from(["x", "{}", "+", "-print"])))]
    refusal = find.check(args, workspace=None)
    assert refusal is not None and refusal.argument == word


SED_SAFE = st.sampled_from(["p", "d", "1d", "$!N", "s/a/b/g", "s/e/w/", "/e/p", "y/ew/we/", "a text e w",
                            "1,3{p\n}", "=", "l 3", "q", ":top", "b top", "# e w", "\\,e,d", "5~2p"])
SED_REFUSED = st.sampled_from(["e", "1e", "e touch x", "w out", "W out", "$!e", "s/a/b/e", "s/a/b/w out",
                               "/x/,/y/e", "s,a,b,gw out"])


@settings(max_examples=300, deadline=None)
@given(st.lists(SED_SAFE, max_size=5), SED_REFUSED, st.lists(SED_SAFE, max_size=5), st.sampled_from(["\n", ";"]))
def test_sed_scripts_with_a_command_that_runs_or_writes_are_refused(
    before: list[str], refused: str, after: list[str], separator: str
) -> None:
    # a/i/c text and labels run to the end of the line, so they are only ever followed by a newline.
    joined = ""
    for command in [*before, refused, *after]:
        joined += command + ("\n" if command[:1] in "a:b#" else separator)
    assert sed_refusal(joined) is not None, joined
    assert sed_refusal("\n".join(before + after)) is None


AWK_CODE = st.sampled_from(["{ print $1 }", "NR > 1 { n++ }", "BEGIN { FS = \",\" }", "/x/ { c += 1 }",
                            "END { printf \"%d\", n }", "{ a[$1] = $2 }", " ", "\n", "a || b"])
AWK_REFUSED = st.sampled_from(["system(\"id\")", "system (x)", "print | \"sh\"", "\"date\" | getline d",
                               "print > \"f\"", "printf(\"x\") >> \"f\"", "@load \"x\"", "@f()", "x |& y"])


@settings(max_examples=300, deadline=None)
@given(AWK_CODE, AWK_REFUSED, AWK_CODE)
def test_awk_programs_with_a_command_pipe_or_redirection_are_refused(before: str, refused: str, after: str) -> None:
    program = f"{before} {{ {refused} }} {after}"
    assert awk_refusal(program) is not None, program
