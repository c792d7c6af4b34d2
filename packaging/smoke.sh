#!/usr/bin/env bash
# Smoke test of the BUILT app (not the source tree) on a real X server: Xvfb, Qt's xcb platform (not offscreen),
# started under `env -i` with only PATH, HOME, DISPLAY, LANG and TMPDIR — no venv, no PYTHONPATH, an empty HOME.
#
#   packaging/smoke.sh [APP_DIR]      default: $LIYUAN_BUILD_DIR/dist/liyuan (built first if it is not there)
#   packaging/smoke.sh --build        build the folder first (packaging/build.sh --folder-only), then test it
#
# 1. the start-up library check of the built app: one library made to look missing (LIYUAN_TEST_MISSING_LIBS) must
#    give exit 3 with the library and the install command, nothing else but the log path;
# 2. the self-test plays the demo through the real window on Xvfb; the app's own grab and a screenshot of the whole
#    X screen (xwd, made PNG by packaging/xwd2png.py) are taken;
# 3. the report must say passed. Kept in $LIYUAN_BUILD_DIR/smoke/ and copied to packaging/out/ (ignored by git; CI
#    keeps that folder): smoke.png (the X screen while the demo window was up), smoke-window.png (the app's grab),
#    stdout.json, stderr.txt, missing-libs.txt.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
B=${LIYUAN_BUILD_DIR:-/tmp/liyuan-build}
APP=""
BUILD=0
for arg in "$@"; do
  case "$arg" in
    --build) BUILD=1 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) APP=$arg ;;
  esac
done
APP=${APP:-$B/dist/liyuan}
if [ "$BUILD" = 1 ] || [ ! -x "$APP/liyuan" ]; then
  LIYUAN_BUILD_DIR=$B "$REPO/packaging/build.sh" --folder-only
  APP=$B/dist/liyuan
fi
APP=$(cd "$APP" && pwd)
[ -x "$APP/liyuan" ] || { echo "smoke.sh: no built app at $APP" >&2; exit 2; }

# the X server and the screenshot tools (CI runs as root on a fresh Debian: install them)
need=()
command -v Xvfb >/dev/null || need+=(xvfb)
command -v xwd >/dev/null || need+=(x11-apps)
command -v xdotool >/dev/null || need+=(xdotool)
if [ "${#need[@]}" -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "smoke.sh: apt-get install ${need[*]}"
  . "$REPO/packaging/apt.sh"
  apt_install "${need[@]}" || true
fi
command -v Xvfb >/dev/null || { echo "smoke.sh: Xvfb is needed (Debian: sudo apt install xvfb)" >&2; exit 2; }

OUT=$B/smoke
KEEP=$REPO/packaging/out
rm -rf "$OUT"
mkdir -p "$OUT" "$KEEP"
TMPHOME=$(mktemp -d /tmp/liyuan-smoke-home.XXXXXX)
XPID=""
SHOTPID=""
cleanup() {
  [ -n "$SHOTPID" ] && kill "$SHOTPID" 2>/dev/null || true
  [ -n "$XPID" ] && kill "$XPID" 2>/dev/null || true
  rm -rf "$TMPHOME"
}
trap cleanup EXIT
fail() { echo "smoke.sh: FAILED: $*" >&2; tail -n 20 "$OUT/stderr.txt" >&2 2>/dev/null || true; exit 1; }

# a free display number
N=${LIYUAN_SMOKE_DISPLAY:-}
if [ -z "$N" ]; then
  for n in $(seq 90 140); do
    [ -e "/tmp/.X$n-lock" ] || [ -e "/tmp/.X11-unix/X$n" ] || { N=$n; break; }
  done
fi
Xvfb ":$N" -screen 0 1400x900x24 -nolisten tcp >"$OUT/xvfb.txt" 2>&1 &
XPID=$!
for _ in $(seq 1 100); do [ -e "/tmp/.X11-unix/X$N" ] && break; sleep 0.05; done
[ -e "/tmp/.X11-unix/X$N" ] || fail "Xvfb :$N did not start"
CLEAN=(env -i PATH=/usr/bin:/bin HOME="$TMPHOME" DISPLAY=":$N" LANG=C.UTF-8 TMPDIR="$TMPHOME")

# --- 1. the library check of the built app (simulated: one library looks missing) ------------------------------
echo "smoke.sh: library check of the built app (libxcb-cursor.so.0 made to look missing)"
set +e
"${CLEAN[@]}" LIYUAN_TEST_MISSING_LIBS=libxcb-cursor.so.0 timeout 60 "$APP/liyuan" </dev/null \
  >"$OUT/missing-libs.stdout" 2>"$OUT/missing-libs.txt"
rc=$?
set -e
[ "$rc" = 3 ] || fail "with a library missing the app exited $rc, not 3 ($(head -c 400 "$OUT/missing-libs.txt"))"
grep -q "libxcb-cursor.so.0" "$OUT/missing-libs.txt" || fail "the missing library is not named"
grep -q "liyuan.log" "$OUT/missing-libs.txt" || fail "the log path is not named"
[ ! -s "$OUT/missing-libs.stdout" ] || fail "something was printed on stdout"
if grep -qE '^ID(_LIKE)?=.*(debian|ubuntu)' /etc/os-release 2>/dev/null; then
  grep -q "sudo apt install libxcb-cursor0" "$OUT/missing-libs.txt" || fail "no apt install command"
fi
echo "smoke.sh: exit 3, message: $(tr '\n' ' ' < "$OUT/missing-libs.txt" | head -c 300)"
rm -rf "${TMPHOME:?}"/* 2>/dev/null || true

# --- 2. the demo through the real window on Xvfb (xcb) --------------------------------------------------------
(  # while the app runs: a dump of the X screen every second a window is mapped, the last one kept (xwd is cheap;
   # the PNG is made once at the end)
  while true; do
    if DISPLAY=":$N" xdotool search --onlyvisible --class liyuan >/dev/null 2>&1; then
      xwd -display ":$N" -root -silent >"$OUT/.screen.xwd" 2>/dev/null && [ -s "$OUT/.screen.xwd" ] \
        && mv "$OUT/.screen.xwd" "$OUT/screen.xwd"
    fi
    sleep 1
  done
) &
SHOTPID=$!

echo "smoke.sh: $APP/liyuan --self-test (env -i, HOME=$TMPHOME, Xvfb :$N, QT_QPA_PLATFORM=xcb)"
t0=$(date +%s%N)
set +e
"${CLEAN[@]}" QT_QPA_PLATFORM=xcb timeout 300 "$APP/liyuan" --self-test --screenshot "$OUT/smoke-window.png" \
  </dev/null >"$OUT/stdout.json" 2>"$OUT/stderr.txt"
rc=$?
set -e
t1=$(date +%s%N)
kill "$SHOTPID" 2>/dev/null || true
wait "$SHOTPID" 2>/dev/null || true
SHOTPID=""
if [ -s "$OUT/screen.xwd" ]; then  # standard-library converter: no ImageMagick needed
  python3 "$REPO/packaging/xwd2png.py" "$OUT/smoke.png" <"$OUT/screen.xwd" && rm -f "$OUT/screen.xwd"
fi
report=$(tail -n 1 "$OUT/stdout.json" || true)
echo "smoke.sh: exit $rc after $(( (t1 - t0) / 1000000 )) ms"
echo "smoke.sh: report $report"

[ "$rc" = 0 ] || fail "the self-test exited $rc"
python3 - "$report" <<'EOF' || fail "the report does not say passed (see above)"
import json, sys
r = json.loads(sys.argv[1])
assert r["passed"] and r["ledger_matches_seed"] and not r["errors"], r
assert [b["outcome"] for b in r["beats"]] == ["sealed", "sealed", "revised_previous"], r["beats"]
assert r.get("build") and r["build"] not in ("源码运行", "from source"), "the built app must carry its build date"
EOF
[ -s "$OUT/smoke-window.png" ] || fail "no screenshot from the app"
# the window really ran on the X server with the xcb plugin (not offscreen)
if grep -qi "offscreen" "$OUT/stderr.txt"; then fail "the app ran offscreen"; fi
# the clean environment must not have leaked a venv or the source tree into the app
if grep -qF "$REPO/" "$OUT/stderr.txt"; then fail "the built app loaded files from the source tree"; fi
cp "$OUT/smoke-window.png" "$OUT/stdout.json" "$OUT/stderr.txt" "$OUT/missing-libs.txt" "$KEEP/"
if [ -s "$OUT/smoke.png" ]; then
  cp "$OUT/smoke.png" "$KEEP/"
  echo "smoke.sh: PASSED (X screen $KEEP/smoke.png, $(du -k "$OUT/smoke.png" | cut -f1) KB; window $KEEP/smoke-window.png)"
else
  echo "smoke.sh: PASSED (window $KEEP/smoke-window.png; no X screen shot: install x11-apps and xdotool)"
fi
