#!/usr/bin/env bash
# make lint: formatting (clang-format), static analysis (cppcheck), and the
# banned-function check (strcpy, strcat, sprintf, gets, atoi have bounded or
# checked replacements in src/base/str.h and snprintf).
# needs: clang-format cppcheck git
set -u
cd "$(dirname "$0")/.."
status=0
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find src tests tools fuzz bench -name '*.[ch]')

echo "lint: clang-format"
if ! clang-format --dry-run --Werror $files; then
  echo "lint: clang-format found differences; run: clang-format -i \$(git ls-files '*.c' '*.h')" >&2
  status=1
fi

echo "lint: cppcheck"
if ! cppcheck --quiet --error-exitcode=1 --std=c11 --enable=warning,portability,performance \
     --inline-suppr --suppress=missingIncludeSystem -Isrc -Itests -Itests/support \
     -D_GNU_SOURCE -D__GNUC__ $files; then
  status=1
fi

echo "lint: banned functions"
if grep -nE '\b(strcpy|strcat|sprintf|vsprintf|gets|atoi|atol|atoll)[[:space:]]*\(' $files |
   grep -vE '(snprintf|vsnprintf)' ; then
  echo "lint: banned functions used above; use gi_strlcpy, gi_buf_*, snprintf or gi_parse_int64" >&2
  status=1
fi
[ $status -eq 0 ] && echo "lint: ok"
exit $status
