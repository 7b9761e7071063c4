"""``OptionRules``: options and words a program may not be given, declared as data.

Most programs need nothing more than a list: the options that run commands
(``--to-command``), the words that do (``find``'s ``-exec``), and the options
that take a value, so that a value is not mistaken for an option. Both the
built-in policies and the ones configured under ``commands.programs`` are
built from this.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import final

from ._options import Arity, Grammar, Option, scan
from ._policy import Refusal

__all__ = ["Denial", "OptionRules"]


@final
@dataclass(frozen=True)
class Denial:
    """Why an option is refused.

    Attributes:
        reason: What the option does, as a verb phrase ("runs a command for each file").
        only_with_value: Refused only when given a value (git's ``--exec-path=DIR``;
            ``--exec-path`` alone prints a folder).
    """

    reason: str
    only_with_value: bool = False


@final
@dataclass(frozen=True)
class OptionRules:
    """A policy made of denied options and denied words.

    Attributes:
        grammar: How the program spells its options.
        denied: Denied option spellings (``-c``, ``--upload-pack``); their
            abbreviations are refused too, where the grammar allows them.
        words: Arguments refused wherever they appear, ``--`` or not (``-exec``).
    """

    grammar: Grammar = field(default_factory=Grammar)
    denied: Mapping[str, Denial] = field(default_factory=dict)
    words: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        denied: Mapping[str, str] = {},
        *,
        words: Mapping[str, str] = {},
        values: Iterable[str] = (),
        optional: Iterable[str] = (),
        flags: Iterable[str] = (),
        complete: bool = False,
        abbreviations: bool = True,
    ) -> OptionRules:
        """Rules from plain tables.

        Args:
            denied: Option spelling to reason. A spelling ending in ``=`` is
                refused only with a value, which it then takes only when glued.
            words: Word to reason, refused anywhere.
            values: Options that take a value, glued or in the next word.
            optional: Options that take a value only when glued.
            flags: Options that take no value (listed so that a complete
                grammar knows them, or so that they are not read as
                abbreviations of a denied option).
            complete: Every option of the program is listed.
            abbreviations: Long options may be shortened to a unique prefix.
        """
        options = {name: Arity.NONE for name in flags}
        options.update({name: Arity.OPTIONAL for name in optional})
        options.update({name: Arity.REQUIRED for name in values})
        denials: dict[str, Denial] = {}
        for spelling, reason in denied.items():
            name = spelling.removesuffix("=")
            only_with_value = name != spelling
            denials[name] = Denial(reason, only_with_value=only_with_value)
            options.setdefault(name, Arity.OPTIONAL if only_with_value else Arity.NONE)
        return cls(Grammar(options, complete=complete, abbreviations=abbreviations), denials, dict(words))

    def check(self, args: Sequence[str], *, workspace: Path | None = None) -> Refusal | None:
        """The first denied word or option of ``args``."""
        for word in args:
            if word in self.words:
                return Refusal(word, f"it {self.words[word]}")
        for token in scan(args, self.grammar):
            if isinstance(token, Option):
                refusal = self.refusal(token)
                if refusal is not None:
                    return refusal
        return None

    def refusal(self, option: Option) -> Refusal | None:
        """Why ``option`` is refused, or None."""
        for name in (option.name, *option.candidates):
            denial = self.denied.get(name)
            if denial is None or (denial.only_with_value and option.value is None):
                continue
            return Refusal(option.word, f"{_how(option, name)}{denial.reason}")
        if self.grammar.complete and not option.known:
            also = f" (it could abbreviate {', '.join(option.candidates)})" if option.candidates else ""
            return Refusal(option.word, f"it is not an option this policy knows{also}, so the arguments after it "
                                        "cannot be read the way the program reads them")
        return None


def _how(option: Option, name: str) -> str:
    """How the word as written stands for the option ``name``, for the message."""
    head = option.word.partition("=")[0]
    if head == name or (not name.startswith("--") and head.startswith(name)):
        return "it "
    if name.startswith("--"):
        return f"it {'may abbreviate' if option.candidates else 'abbreviates'} {name}, which "
    return f"it includes {name}, which "
