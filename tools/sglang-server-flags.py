#!/usr/bin/env python3
"""Lists the options SGLang's server parser accepts at one upstream tag, read from the source
without importing SGLang: every option string of an add_argument call in
python/sglang/srt/server_args.py (ServerArgs.add_cli_args, the parser that
`python -m sglang.launch_server` and `sglang serve` build with prepare_server_args), with how
many words it takes. Used to write src/engines/sglang/server_flags_data.cc (its comment names
the tags).

  tools/sglang-server-flags.py GIT_DIR TAG [TAG...] > flags.txt

Each line: NAME ARITIES, one character per TAG in the order given ('-': that release has no
such option), where an arity is
  0  no value (store_true, store_false, store_const, BooleanOptionalAction, the deprecated
     actions that take none)
  1  exactly one value (`--flag V` or `--flag=V`)
  ?  an optional value (nargs="?")
  *  zero or more values (nargs="*")
  +  one or more values (nargs="+")
"""
import ast
import subprocess
import sys

PATH = "python/sglang/srt/server_args.py"
BARE_ACTIONS = {"store_true", "store_false", "store_const", "count", "append_const"}
# Custom actions whose __init__ defaults nargs to 0 (server_args.py up to v0.5.x,
# srt/arg_groups/argparse_actions.py after).
BARE_CUSTOM = {"DeprecatedAction", "DeprecatedStoreTrueAction"}


def show(git_dir, tag, path):
    r = subprocess.run(["git", "--git-dir", git_dir, "show", f"{tag}:{path}"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"cannot read {path} at {tag}: {r.stderr.strip()}")
    return r.stdout


def arity(call):
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    action = kw.get("action")
    name = None
    if isinstance(action, ast.Constant):
        name = action.value
    elif isinstance(action, ast.Attribute):
        name = action.attr
    elif isinstance(action, ast.Name):
        name = action.id
    nargs = kw.get("nargs")
    if isinstance(nargs, ast.Constant):
        n = nargs.value
        if n == 0:
            return "0", name
        if n in ("?", "*", "+"):
            return n, name
        if n == 1 or n is None:
            return "1", name
        sys.exit(f"nargs={n!r} is not handled")
    if nargs is not None:  # nargs=VARIABLE: the caller's default
        sys.exit(f"nargs given as an expression at line {call.lineno}")
    if name in BARE_ACTIONS or name in BARE_CUSTOM or name == "BooleanOptionalAction":
        return "0", name
    return "1", name


def flags_at(git_dir, tag):
    tree = ast.parse(show(git_dir, tag, PATH))
    flags = {"-h": "0", "--help": "0"}  # argparse's own
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"):
            continue
        names = [a.value for a in node.args
                 if isinstance(a, ast.Constant) and isinstance(a.value, str)
                 and a.value.startswith("-")]
        if len(names) != len(node.args):
            sys.exit(f"an option name that is not a string at line {node.lineno}")
        a, action = arity(node)
        for n in names:
            if flags.get(n, a) != a:
                sys.exit(f"{n} added twice with different arity")
            flags[n] = a
            if action == "BooleanOptionalAction" and n.startswith("--"):
                flags["--no-" + n[2:]] = "0"
    return flags


def main():
    git_dir, tags = sys.argv[1], sys.argv[2:]
    per_tag = [flags_at(git_dir, t) for t in tags]
    for f in sorted(set().union(*per_tag)):
        print(f, "".join(p.get(f, "-") for p in per_tag))


if __name__ == "__main__":
    main()
