#!/usr/bin/env bash
# Fails when a line of code is longer than 100 columns (.clang-format's ColumnLimit), naming
# each file:line. Code is C++ sources and headers, CMake files, shell scripts and the Python
# package (python/); prose and data (Markdown, JSON, logs) are not checked. Run by ctest
# (test `line_length`), hence by CI.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=100
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- \
    '*.cc' '*.h' '*.cmake' '*.cmake.in' '*.sh' 'python/*.py' 'CMakeLists.txt' 'Makefile')
else
  mapfile -t files < <(find . -path ./build\* -prune -o -type f \( -name '*.cc' -o -name '*.h' \
    -o -name '*.cmake' -o -name '*.cmake.in' -o -name '*.sh' -o -name CMakeLists.txt \
    -o -name Makefile \) -print; find ./python -name '*.py' 2>/dev/null)
fi
long=0
for f in "${files[@]}"; do
  [[ -f $f ]] || continue
  # Columns are characters, not bytes: UTF-8 text in comments counts once per character.
  out=$(LC_ALL=C.UTF-8 awk -v limit="$limit" \
        'length($0) > limit { printf "%s:%d: %d columns\n", FILENAME, FNR, length($0) }' "$f")
  if [[ -n $out ]]; then
    echo "$out"
    long=$((long + $(wc -l <<<"$out")))
  fi
done
if ((long > 0)); then
  echo "$long line(s) longer than $limit columns (clang-format -i FILE wraps code)" >&2
  exit 1
fi
echo "${#files[@]} files, every line within $limit columns"
