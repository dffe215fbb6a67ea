#!/usr/bin/env bash
# Checks that the project's C and C++ sources follow its .clang-format (clang-format 14, Debian 12's), and
# names each file that does not. A failing step of tools/test.sh, not a warning.
#
#   bash tools/check_format.sh          check; exit 1 and list the files that differ
#   bash tools/check_format.sh --fix    rewrite those files in place
#
# The files checked are the ones git tracks (or would track) under the source folders below; generated and
# third-party files are none of them.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

fix=0
case "${1:-}" in
  --fix) fix=1 ;;
  "") ;;
  -h | --help) sed -n '2,9s/^# \{0,1\}//p' "$0"; exit 0 ;;
  *) echo "check_format: unknown argument '$1'" >&2; exit 2 ;;
esac

if ! command -v clang-format > /dev/null; then
  echo "check_format: clang-format not found (Debian: apt-get install clang-format)" >&2
  exit 2
fi

folders=(framework drivers recipes tools test bench docs/examples test_package)
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- "${folders[@]}" |
  grep -E '\.(cpp|hpp|c|h)$' | while read -r f; do [ -f "$f" ] && echo "$f"; done)

if [ "$fix" -eq 1 ]; then
  clang-format -i "${files[@]}"
  exit 0
fi

bad=()
for f in "${files[@]}"; do
  clang-format --dry-run -Werror "$f" > /dev/null 2>&1 || bad+=("$f")
done
if [ "${#bad[@]}" -gt 0 ]; then
  echo "check_format: ${#bad[@]} of ${#files[@]} files differ from .clang-format (fix: bash tools/check_format.sh --fix):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "check_format: ${#files[@]} files follow .clang-format"
