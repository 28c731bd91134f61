#!/usr/bin/env python3
"""Lists the flags `vllm serve` accepts at one upstream commit, read from the source without
importing vLLM: every option string of an add_argument call in the files that build the serve
parser (before v0.4 the OpenAI server's own api_server.py; from v0.5.2 the `vllm serve`
launcher), and the fields of the frontend dataclasses that become `--field-name` options. Used
to write src/engines/vllm/serve_flags_data.cc and serve_flags_history.cc (their comments name
the commits).

  tools/vllm-serve-flags.py GIT_DIR COMMIT > flags.txt
  tools/vllm-serve-flags.py --history GIT_DIR 0.2.0=COMMIT 0.2.1=COMMIT ... 0.9.0=FILE

The second form prints one C++ table row per flag, {"--flag", first, until}: the first listed
release whose commit has it and the first later one that has not (0: it is in the last one).
A value that is not a commit names a file of flags, one a line (the output of the first form).
"""
import ast
import os
import subprocess
import sys

FILES = [
    "vllm/engine/arg_utils.py",
    "vllm/entrypoints/openai/cli_args.py",
    "vllm/entrypoints/cli/serve.py",
    "vllm/entrypoints/openai/api_server.py",
    "vllm/scripts.py",
]
FRONTEND_CLASSES = {"FrontendArgs", "BaseFrontendArgs"}
# vllm/scripts.py (v0.5.2-v0.7.2) also builds `vllm chat` and `vllm complete`: only the serve
# subparser's own options count there.
RECEIVERS = {"vllm/scripts.py": {"serve_parser"}}


def show(git_dir, commit, path):
    r = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{path}"],
                       capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def flags_of(tree, receivers=None):
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            if receivers and getattr(node.func.value, "id", "") not in receivers:
                continue
            # action=argparse.BooleanOptionalAction also makes `--no-NAME`.
            negated = any(k.arg == "action" and
                          getattr(k.value, "attr", "") == "BooleanOptionalAction"
                          for k in node.keywords)
            for a in node.args:
                if isinstance(a, ast.Constant) and isinstance(a.value, str) \
                        and a.value.startswith("-"):
                    found.add(a.value)
                    if negated and a.value.startswith("--"):
                        found.add("--no-" + a.value[2:])
        if isinstance(node, ast.ClassDef) and node.name in FRONTEND_CLASSES:
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    found.add("--" + item.target.id.replace("_", "-"))
        # Extra spellings a frontend field gets: kwargs["name"]["flags"] = ["-x"].
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
            t = node.targets[0]
            if isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant) \
                    and t.slice.value == "flags":
                for e in node.value.elts:
                    if isinstance(e, ast.Constant) and isinstance(e.value, str):
                        found.add(e.value)
    return found


def flags_at(git_dir, commit):
    flags = set()
    for path in FILES:
        text = show(git_dir, commit, path)
        if text is not None:
            flags |= flags_of(ast.parse(text), RECEIVERS.get(path))
    return flags


def release_number(text):
    major, minor, patch = (int(p) for p in text.split("."))
    return major * 10000 + minor * 100 + patch


def history(git_dir, points):
    sets = []
    for point in points:
        release, where = point.split("=", 1)
        if os.path.isfile(where):
            with open(where) as f:
                sets.append((release_number(release), {l.strip() for l in f if l.strip()}))
        else:
            sets.append((release_number(release), flags_at(git_dir, where)))
    rows = []
    for flag in sorted(set().union(*(s for _, s in sets))):
        first = None
        for i, (release, s) in enumerate(sets):
            if flag in s and first is None:
                first = release
            if flag not in s and first is not None:
                rows.append((flag, first, release))
                first = None
        if first is not None:
            rows.append((flag, first, 0))
    for flag, first, until in rows:
        print(f'{{"{flag}", {first}, {until}}},')


def main():
    if sys.argv[1] == "--history":
        history(sys.argv[2], sys.argv[3:])
        return
    for f in sorted(flags_at(sys.argv[1], sys.argv[2])):
        print(f)


if __name__ == "__main__":
    main()
