"""Argument policies: what an allowlisted program may be told to do.

``exec_shell`` checks each command line against the policy of its program,
looked up by base name: the built-in ones (``git``, ``find``, ``tar``,
``rsync``, ``sed``, ``awk``, ``sort``, ``wget``, and wrappers such as ``env``
and ``xargs``, which are refused) plus the rules configured under
``commands.programs`` (:class:`toolsift.config.ProgramRule`). A policy is any object with the
:class:`ArgumentPolicy` ``check`` method.
"""

from ..._public import publish
from ._defaults import BUILTIN_POLICIES as BUILTIN_POLICIES
from ._policy import ArgumentPolicy as ArgumentPolicy
from ._policy import Refusal as Refusal
from ._rule import argument_policy as argument_policy
from ._rule import rule_problems as rule_problems

__all__ = ["BUILTIN_POLICIES", "ArgumentPolicy", "Refusal", "argument_policy", "rule_problems"]

publish(globals(), __name__, __all__)
