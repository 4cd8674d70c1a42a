#!/bin/bash
# Opens an HTML report of loadsim in headless Chromium and checks that it renders: no console
# error, no network request made by the page (Chromium's net log, read by netlog.py; every host
# resolves to nothing besides), every inline figure in the DOM Chromium built, and a screenshot
# that is not blank (pngcheck.py).
#
#   contrib/html/check.sh REPORT.html [SCREENSHOT.png]
#
# With no SCREENSHOT the screenshot goes to a temporary file. Installs Debian's chromium when
# it is missing (needs root then). Needs python3 for netlog.py and pngcheck.py.
set -euo pipefail

say() { echo "html-check: $*"; }
fail() {
    echo "html-check: FAILED: $*" >&2
    exit 1
}

[ $# -ge 1 ] && [ -f "$1" ] || fail "usage: $0 REPORT.html [SCREENSHOT.png] (the report must exist)"
page=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/loadsim-html-check.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
shot=${2:-$tmp/screenshot.png}

if ! command -v chromium >/dev/null; then
    [ "$(id -u)" = 0 ] || fail "chromium is missing; install Debian's chromium package (needs root)"
    say "installing Debian's chromium"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

flags=(--headless --disable-gpu --no-sandbox --disable-dev-shm-usage --hide-scrollbars
    --no-first-run --disable-extensions --enable-logging=stderr --v=0
    --host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$tmp/profile")

# 1. The DOM, with the console on stderr.
timeout 120 chromium "${flags[@]}" --log-net-log="$tmp/net.json" --dump-dom "file://$page" \
    >"$tmp/dom.html" 2>"$tmp/dom.log" ||
    fail "chromium --dump-dom failed: $(tail -n 5 "$tmp/dom.log")"
if grep -E 'CONSOLE|Uncaught|ERR_NAME_NOT_RESOLVED|net::ERR_' "$tmp/dom.log" >"$tmp/errors"; then
    cat "$tmp/errors" >&2
    fail "the page logged console or network errors"
fi
requests=$(python3 "$here/netlog.py" "$tmp/net.json") || fail "the page made network requests: $requests"
figures_in_file=$(grep -o '<figure>' "$page" | wc -l)
svgs_in_dom=$(grep -o '<svg' "$tmp/dom.html" | wc -l)
tables_in_dom=$(grep -o '<table' "$tmp/dom.html" | wc -l)
[ "$figures_in_file" -gt 0 ] || fail "the report has no figure"
[ "$svgs_in_dom" -ge "$figures_in_file" ] ||
    fail "the DOM has $svgs_in_dom <svg> elements for $figures_in_file figures"
[ "$tables_in_dom" -gt 0 ] || fail "the DOM has no table"
say "loaded without console errors or network requests: $figures_in_file figures (inline SVG), $tables_in_dom tables"

# 2. A screenshot of the top of the page, not blank.
timeout 120 chromium "${flags[@]}" --window-size=1200,1600 --screenshot="$shot" "file://$page" \
    >"$tmp/shot.log" 2>&1 || fail "chromium --screenshot failed: $(tail -n 5 "$tmp/shot.log")"
[ -s "$shot" ] || fail "chromium wrote no screenshot"
stats=$(python3 "$here/pngcheck.py" "$shot") || fail "screenshot $shot: $stats"
say "screenshot $(basename "$shot"): $stats"
say "PASSED"
