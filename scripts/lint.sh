#!/usr/bin/env bash
# Style checks (CONVENTIONS.md): every C++ file follows .clang-format, and the C++ sources a change touches pass
# .clang-tidy. Exit status is non-zero on any finding; the message names the file, line and check.
#   scripts/lint.sh            the change: commits since the merge base with origin/main, or the last commit where
#                              HEAD is origin/main (CI's clean clone), plus uncommitted edits
#   scripts/lint.sh BASE       the commits since BASE (a commit or branch)
#   scripts/lint.sh --all      clang-tidy on every source (about 15 s of CPU per file: tens of minutes)
# clang-tidy reads a compile database from a configure-only folder (build-lint: nothing is built there) without the
# precompiled headers, which are g++'s in the normal build and which clang cannot read.
set -euo pipefail
cd "$(dirname "$0")/.."

cpp_files() { grep -E '\.(cpp|h)$' | grep -E '^(apps|engine|models|tests|bench|fuzz)/' | grep -v '^tests/corpus/' || true; }

status=0
mapfile -t all < <(git ls-files | cpp_files)
if ! clang-format --dry-run --Werror "${all[@]}"; then
  echo "lint: the files above do not follow .clang-format (fix: clang-format -i FILE)" >&2
  status=1
fi

base=""
case "${1:-}" in
  --all) ;;
  "") if git rev-parse -q --verify origin/main >/dev/null && [ "$(git rev-parse HEAD)" != "$(git rev-parse origin/main)" ]; then
        base=$(git merge-base HEAD origin/main)
      else
        base=$(git rev-parse -q --verify HEAD^ || git rev-parse HEAD)
      fi ;;
  *) base=$(git rev-parse --verify "$1^{commit}") ;;
esac
if [ "${1:-}" = --all ]; then
  mapfile -t changed < <(printf '%s\n' "${all[@]}" | grep '\.cpp$')
else
  mapfile -t changed < <( { git diff --name-only --diff-filter=d "$base" HEAD; git diff --name-only --diff-filter=d HEAD; } |
                          sort -u | cpp_files)
fi
# A changed header is checked through the sources that include it (HeaderFilterRegex in .clang-tidy); a header no
# source includes is checked on its own.
sources=()
for f in "${changed[@]}"; do
  case "$f" in
    *.cpp) sources+=("$f") ;;
    *.h) user=$(git grep -l -F "#include \"$f\"" -- '*.cpp' | head -1 || true)
         sources+=("${user:-$f}") ;;
  esac
done
if [ ${#sources[@]} -gt 0 ]; then
  mapfile -t sources < <(printf '%s\n' "${sources[@]}" | sort -u)
  cmake -S . -B build-lint -DTESSEL_PCH=OFF -DTESSEL_UNITY=OFF -DTESSEL_FUZZ=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
  echo "lint: clang-tidy on ${#sources[@]} file(s) changed since ${base:-the start}"
  # Findings only in the changed files: a source also reports the project headers it includes (HeaderFilterRegex),
  # and an unchanged header's findings are not this change's (--all checks everything).
  filter=()
  if [ "${1:-}" != --all ]; then
    filter=(--line-filter="[$(printf '{"name":"%s"},' "${changed[@]}" | sed 's/,$//')]")
  fi
  # -Wno-unknown-warning-option: the database's flags are g++'s (-Wno-maybe-uninitialized).
  if ! printf '%s\n' "${sources[@]}" |
       xargs -P "$(nproc)" -n 4 clang-tidy -p build-lint --quiet --extra-arg=-Wno-unknown-warning-option \
         "${filter[@]}"; then
    echo "lint: clang-tidy findings above (.clang-tidy says which checks and why)" >&2
    status=1
  fi
fi
exit $status
