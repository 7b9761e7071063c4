"""Reading an argument list the way ``getopt_long`` and git's parse-options read it.

Written by hand because the standard library's parsers (``getopt``,
``argparse``) reject what they do not know, while a policy must read any
argument list a caller sends, including options it has never heard of, and
must read it as the *program* will: ``--opt=value`` and ``--opt value``,
long options shortened to a unique prefix, short options glued into
clusters (``-xvfarchive``), a value glued to its short option (``-cfoo``),
``--`` ending the options, and options after operands (GNU programs permute).

Where the grammar cannot know how the program reads a word, the scanner takes
the reading that exposes more words as options: an unknown option never
swallows the next word as its value, and the letters after an unknown short
option are read as further options.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["Arity", "Grammar", "Operand", "Option", "scan"]


class Arity(enum.Enum):
    """Whether an option takes a value."""

    #: A flag: ``-n``, ``--quiet``.
    NONE = "none"
    #: A value glued (``-cVALUE``, ``--opt=VALUE``) or in the next word (``-c VALUE``).
    REQUIRED = "required"
    #: A value only when glued (``-iSUFFIX``, ``--in-place=SUFFIX``); never the next word.
    OPTIONAL = "optional"


@dataclass(frozen=True)
class Grammar:
    """How one program spells its options.

    Attributes:
        options: The spellings the grammar knows (``-e``, ``--expression``) and their arity.
        complete: Every option of the program is listed, so an unknown one
            means the arguments cannot be read as the program would read them.
        abbreviations: Long options may be shortened to a unique prefix, as
            ``getopt_long`` and git's parse-options allow.
    """

    options: Mapping[str, Arity] = field(default_factory=dict)
    complete: bool = False
    abbreviations: bool = True

    def long_names(self, prefix: str) -> tuple[str, ...]:
        """Known long options that ``prefix`` (``--upl``) could abbreviate."""
        if not self.abbreviations:
            return ()
        return tuple(sorted(name for name in self.options if name.startswith("--") and name.startswith(prefix)))


@dataclass(frozen=True)
class Option:
    """One option as the program would read it.

    Attributes:
        name: The known spelling (``--upload-pack`` for ``--upl=x``), or the
            spelling as written when the grammar does not know it.
        value: The value, glued or taken from the next word; None when none.
        word: The argument as written, for messages.
        known: The grammar knows this option (exactly or by a unique prefix).
        candidates: For an ambiguous abbreviation, every known option it could abbreviate.
    """

    name: str
    value: str | None
    word: str
    known: bool
    candidates: tuple[str, ...] = ()


@dataclass(frozen=True)
class Operand:
    """A word that is not an option: a file, a pattern, a subcommand, a script.

    Attributes:
        word: The argument.
        index: Its position in the argument list.
    """

    word: str
    index: int


def scan(args: Sequence[str], grammar: Grammar) -> Iterator[Option | Operand]:
    """Yield the options and operands of ``args`` in order, as the program would read them."""
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--":
            yield from (Operand(rest, position) for position, rest in enumerate(args[index:], start=index))
            return
        if word.startswith("--"):
            option, index = _long(word, args, index, grammar)
            yield option
        elif word.startswith("-") and word != "-":
            options, index = _cluster(word, args, index, grammar)
            yield from options
        else:
            yield Operand(word, index - 1)


def _long(word: str, args: Sequence[str], index: int, grammar: Grammar) -> tuple[Option, int]:
    written, equals, glued = word.partition("=")
    value = glued if equals else None
    arity = grammar.options.get(written)
    name, candidates = written, tuple[str, ...]()
    if arity is None:
        candidates = grammar.long_names(written)
        if len(candidates) != 1:
            return Option(written, value, word, known=False, candidates=candidates), index
        name, arity, candidates = candidates[0], grammar.options[candidates[0]], ()
    if value is None and arity is Arity.REQUIRED and index < len(args):
        return Option(name, args[index], word, known=True), index + 1
    return Option(name, value, word, known=True), index


def _cluster(word: str, args: Sequence[str], index: int, grammar: Grammar) -> tuple[list[Option], int]:
    """The options of ``-abc``; the first one taking a value ends the cluster and takes the rest (or the next word)."""
    options: list[Option] = []
    for position in range(1, len(word)):
        name = "-" + word[position]
        arity = grammar.options.get(name)
        rest = word[position + 1:]
        if arity is None or arity is Arity.NONE:
            options.append(Option(name, None, word, known=arity is not None))
            continue
        if rest:
            options.append(Option(name, rest, word, known=True))
        elif arity is Arity.REQUIRED and index < len(args):
            options.append(Option(name, args[index], word, known=True))
            index += 1
        else:
            options.append(Option(name, None, word, known=True))
        break
    return options, index
