# Sourced by the browser tests: skip/fail, Chromium found (exit 77 where none), a scratch folder
# $T removed on exit, and the two ways the tests open a page. Usage: source common.sh NAME
skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAILED: $*"; exit 1; }
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || skip "no Chromium (scripts/setup.sh --test-tools installs the chromium package)"
T=$(mktemp -d "/tmp/gpuprobe-$1.XXXXXX")
trap 'rm -rf "$T"' EXIT

# add_checker PAGE CHECKED: CHECKED is a copy of PAGE with a checker appended. Once the page has
# loaded, the checker runs the JavaScript read from stdin (a function body: `wide` holds the
# elements wider than the page) and writes what it returns into <pre id="gpuprobe-check">.
add_checker() {
  cp "$1" "$2"
  {
    printf '<script>\nwindow.addEventListener("load", () => {\n'
    printf '  const wide = [...document.body.querySelectorAll("*")]\n'
    printf '    .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1);\n'
    printf '  const text = (() => {\n'
    cat
    printf '  })();\n  const out = document.createElement("pre");\n  out.id = "gpuprobe-check";\n'
    printf '  out.textContent = text;\n  document.body.appendChild(out);\n});\n</script>\n'
  } >>"$2"
}

# check_page FILE: opens FILE (with a checker appended that writes <pre id="gpuprobe-check">) at
# 1400 px; `line` gets the checker's text. The pages have no script of their own and the checkers
# log nothing, so any console line is an error (Chromium gives console.error the same INFO:CONSOLE
# prefix as console.log): the test fails on one.
check_page() {
  local flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --allow-file-access-from-files
               --window-size=1400,900 --virtual-time-budget=15000 --enable-logging=stderr --v=0)
  timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$1" >"$T/dom.html" 2>"$T/console.txt"
  line=$(grep -o '<pre id="gpuprobe-check">[^<]*' "$T/dom.html" | sed 's/.*>//')
  echo "$line"
  if grep -E 'CONSOLE|Uncaught' "$T/console.txt"; then
    fail "the page wrote to the console"
  fi
}

# screenshot FILE SHOT HEIGHT: the first HEIGHT pixels of FILE at 1400 px into SHOT.
screenshot() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size="1400,$3" --screenshot="$2" "file://$1" >/dev/null 2>&1
  [ -s "$2" ] || fail "no screenshot"
  echo "screenshot: $2"
}
