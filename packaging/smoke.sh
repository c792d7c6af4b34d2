#!/usr/bin/env bash
# Smoke test of the BUILT app (not the source tree): run its --self-test offscreen in a clean environment — no venv,
# no PYTHONPATH, an empty HOME — and fail unless the self-test passes and the screenshot was written.
#
#   packaging/smoke.sh [APP_DIR]      default: $LIYUAN_BUILD_DIR/dist/liyuan (built first if it is not there)
#   packaging/smoke.sh --build        build the folder first (packaging/build.sh --folder-only), then test it
#
# The screenshot and the log are kept in $LIYUAN_BUILD_DIR/smoke/ (shot.png, shot-ask.png, stdout.json, stderr.txt).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
B=${LIYUAN_BUILD_DIR:-/tmp/liyuan-build}
APP=""
BUILD=0
for arg in "$@"; do
  case "$arg" in
    --build) BUILD=1 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
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

OUT=$B/smoke
rm -rf "$OUT"
mkdir -p "$OUT"
TMPHOME=$(mktemp -d /tmp/liyuan-smoke-home.XXXXXX)
trap 'rm -rf "$TMPHOME"' EXIT

echo "smoke.sh: $APP/liyuan --self-test --screenshot $OUT/shot.png (env -i, HOME=$TMPHOME, offscreen)"
t0=$(date +%s%N)
set +e
env -i PATH=/usr/bin:/bin HOME="$TMPHOME" LANG=C.UTF-8 QT_QPA_PLATFORM=offscreen TMPDIR="$TMPHOME" \
  timeout 300 "$APP/liyuan" --self-test --screenshot "$OUT/shot.png" >"$OUT/stdout.json" 2>"$OUT/stderr.txt"
rc=$?
set -e
t1=$(date +%s%N)
report=$(tail -n 1 "$OUT/stdout.json" || true)
echo "smoke.sh: exit $rc after $(( (t1 - t0) / 1000000 )) ms"
echo "smoke.sh: report $report"

fail() { echo "smoke.sh: FAILED: $*" >&2; tail -n 20 "$OUT/stderr.txt" >&2 || true; exit 1; }
[ "$rc" = 0 ] || fail "the self-test exited $rc"
python3 - "$report" <<'EOF' || fail "the report does not say passed (see above)"
import json, sys
r = json.loads(sys.argv[1])
assert r["passed"] and r["ledger_matches_seed"] and not r["errors"], r
assert [b["outcome"] for b in r["beats"]] == ["sealed", "sealed", "revised_previous"], r["beats"]
assert r.get("build") and r["build"] not in ("源码运行", "from source"), "the built app must carry its build date"
EOF
[ -s "$OUT/shot.png" ] || fail "no screenshot"
# the clean environment must not have leaked a venv or the source tree into the app
if grep -qF "$REPO/" "$OUT/stderr.txt"; then fail "the built app loaded files from the source tree"; fi
echo "smoke.sh: PASSED (screenshot $OUT/shot.png, $(du -k "$OUT/shot.png" | cut -f1) KB)"
