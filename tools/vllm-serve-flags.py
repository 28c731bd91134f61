#!/usr/bin/env python3
"""Lists the flags `vllm serve` accepts at one upstream commit, read from the source without
importing vLLM: every option string of an add_argument call in the files that build the serve
parser, and the fields of the frontend dataclasses that become `--field-name` options. Used to
write src/engines/vllm/serve_flags.cc (its comment names the commits).

  tools/vllm-serve-flags.py GIT_DIR COMMIT > flags.txt
"""
import ast
import subprocess
import sys

FILES = [
    "vllm/engine/arg_utils.py",
    "vllm/entrypoints/openai/cli_args.py",
    "vllm/entrypoints/cli/serve.py",
]
FRONTEND_CLASSES = {"FrontendArgs", "BaseFrontendArgs"}


def show(git_dir, commit, path):
    r = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{path}"],
                       capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def flags_of(tree):
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            for a in node.args:
                if isinstance(a, ast.Constant) and isinstance(a.value, str) \
                        and a.value.startswith("-"):
                    found.add(a.value)
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


def main():
    git_dir, commit = sys.argv[1], sys.argv[2]
    flags = set()
    for path in FILES:
        text = show(git_dir, commit, path)
        if text is not None:
            flags |= flags_of(ast.parse(text))
    for f in sorted(flags):
        print(f)


if __name__ == "__main__":
    main()
