"""The built-in argument policies, by program name.

A program the allowlist names is checked by the policy of its base name
(``/usr/bin/git`` by ``git``). Programs without one run with any arguments;
interpreters (``sh``, ``python``, ``node``) are among them, because whoever
may run an interpreter may run anything.
"""

from __future__ import annotations

from collections.abc import Mapping

from ._awk import AwkPolicy
from ._declared import OptionRules
from ._git import GitPolicy
from ._policy import ArgumentPolicy, ProgramRefused
from ._rsync import RsyncPolicy
from ._sed import SedPolicy
from ._tar import TarPolicy

__all__ = ["BUILTIN_POLICIES", "WRAPPERS"]

#: Programs whose job is to run another program, which the allowlist would then never see.
WRAPPERS = ("xargs", "env", "nohup", "timeout", "nice", "ionice", "sudo", "su", "doas", "pkexec", "runuser",
            "watch", "strace", "ltrace", "time", "chroot", "setsid", "stdbuf", "flock", "taskset", "chrt",
            "unshare", "nsenter", "script", "parallel", "busybox", "systemd-run")

_EACH = "runs a command for each file found"
_WRITES = "writes to the file it names"
_FIND = OptionRules.of(words={
    "-exec": _EACH, "-execdir": _EACH, "-ok": _EACH, "-okdir": _EACH, "-delete": "deletes every file found",
    "-fprint": _WRITES, "-fprintf": _WRITES, "-fprint0": _WRITES, "-fls": _WRITES,
})
_WRAPPED = ProgramRefused("it runs the program named in its arguments, so the allowlist would not decide what runs")
_WGET = "runs a .wgetrc command, and use_askpass=PROGRAM runs a program"

BUILTIN_POLICIES: Mapping[str, ArgumentPolicy] = {
    "git": GitPolicy(),
    "find": _FIND,
    **dict.fromkeys(("tar", "gtar"), TarPolicy()),
    "rsync": RsyncPolicy(),
    **dict.fromkeys(("sed", "gsed"), SedPolicy()),
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), AwkPolicy()),
    "sort": OptionRules.of({"--compress-program": "runs its value to compress temporary files"}),
    "wget": OptionRules.of({"-e": _WGET, "--execute": _WGET, "--use-askpass": "runs its value to ask for passwords"}),
    **dict.fromkeys(WRAPPERS, _WRAPPED),
}
