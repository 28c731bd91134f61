"""Runs the vramfit command and reads its JSON: where the binary is, how keyword arguments
become flags, and how exit codes become results or VramfitError. Every public function of the
package goes through run()."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Any, Iterable, List, Mapping, Optional, Sequence

ENV_BINARY = "VRAMFIT_BIN"


class VramfitError(Exception):
    """The command refused its input (exit code 2: a usage error, an unreadable or invalid
    model, log or setting) or could not be run. `message` is what it printed on stderr."""

    def __init__(self, message: str, exit_code: int, argv: Sequence[str] = ()):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.argv = list(argv)

    def __str__(self) -> str:
        return f"{self.message} (exit code {self.exit_code})"


def find_binary(binary: Optional[str] = None) -> str:
    """The vramfit executable: `binary` when given, else $VRAMFIT_BIN, else `vramfit` on PATH."""
    chosen = binary or os.environ.get(ENV_BINARY) or shutil.which("vramfit")
    if not chosen:
        raise VramfitError(
            f"the vramfit command was not found: pass binary=, set ${ENV_BINARY} or put it on "
            "PATH", 127)
    if os.sep in chosen and not os.access(chosen, os.X_OK):
        raise VramfitError(f"{chosen}: not an executable file", 127, [chosen])
    return chosen


def flags(options: Mapping[str, Any]) -> List[str]:
    """Keyword arguments as command-line flags: max_model_len=32768 is --max-model-len 32768,
    True is the bare flag, False and None leave the flag out, a list repeats it."""
    out: List[str] = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            out.append(flag)
        elif isinstance(value, (list, tuple)):
            for v in value:
                out += [flag, str(v)]
        else:
            out += [flag, str(value)]
    return out


def run(argv: Iterable[str], binary: Optional[str] = None, ok_codes: Sequence[int] = (0,),
        stdin: Optional[str] = None, want_json: bool = True) -> Any:
    """Runs `vramfit ARGV...`; returns (parsed JSON or text, exit code). An exit code outside
    ok_codes raises VramfitError with the command's stderr."""
    cmd = [find_binary(binary)] + list(argv)
    try:
        proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, check=False)
    except OSError as e:
        raise VramfitError(f"{cmd[0]}: {e.strerror or e}", 127, cmd) from e
    if proc.returncode not in ok_codes:
        message = proc.stderr.strip() or proc.stdout.strip() or "no output"
        raise VramfitError(message, proc.returncode, cmd)
    if not want_json:
        return proc.stdout, proc.returncode
    try:
        return json.loads(proc.stdout), proc.returncode
    except ValueError as e:
        raise VramfitError(f"{cmd[0]} printed no JSON ({e}): {proc.stdout[:200]!r}",
                           proc.returncode, cmd) from e
