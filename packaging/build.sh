#!/usr/bin/env bash
# Build 梨园 Liyuan Desktop for Linux: the PyInstaller folder, a per-user self-extracting installer (.run, makeself)
# and a system-wide .deb (dpkg-deb). Everything goes OUTSIDE the source tree:
#
#   packaging/build.sh [--folder-only] [--no-run] [--no-deb]
#
#   $LIYUAN_BUILD_DIR (default /tmp/liyuan-build)
#     src/            staged copy of the source: the files git tracks plus new untracked ones (.gitignore'd files,
#                     .venv, build outputs and node_modules never), with the generated liyuan_desktop/_build_info.py
#     venv/           the build venv: the app's dependencies + the [build] extra (PyInstaller); reused when unchanged
#     dist/liyuan/    the app folder (run dist/liyuan/liyuan)
#     out/            liyuan-VERSION-linux-ARCH.run and liyuan_VERSION_ARCH.deb
#
# Environment: LIYUAN_BUILD_DIR; PYTHON (python used to make the build venv, default python3, must be >= 3.11);
# LIYUAN_BUILD_PYTHON (use this interpreter, e.g. a venv that already has the app's deps and '.[build]', instead of
# making the build venv). As root, makeself and desktop-file-utils are apt-get installed when missing.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=packaging/apt.sh
. "$REPO/packaging/apt.sh"
B=${LIYUAN_BUILD_DIR:-/tmp/liyuan-build}
WANT_RUN=1
WANT_DEB=1
for arg in "$@"; do
  case "$arg" in
    --folder-only) WANT_RUN=0; WANT_DEB=0 ;;
    --no-run) WANT_RUN=0 ;;
    --no-deb) WANT_DEB=0 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "build.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
mkdir -p "$B"
B=$(cd "$B" && pwd)
case "$B/" in
  "$REPO"/*) echo "build.sh: the build folder ($B) must be outside the source tree ($REPO)" >&2; exit 2 ;;
esac
T0=$(date +%s)
say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
elapsed() { echo $(( $(date +%s) - $1 )); }

# --- 1. stage the source ---------------------------------------------------------------------------------------
say "staging the source into $B/src"
STAGE=$B/src
rm -rf "$STAGE"
mkdir -p "$STAGE"
if git -C "$REPO" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # tracked files + new files not ignored: exactly what a clone with the working changes would hold
  (cd "$REPO" && git ls-files -z --cached --others --exclude-standard \
     | while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done \
     | tar --null -T - -cf -) | tar -xf - -C "$STAGE"
  COMMIT=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
  [ -n "$(git -C "$REPO" status --porcelain 2>/dev/null)" ] && COMMIT="$COMMIT+changes"
else
  (cd "$REPO" && tar --exclude=.git --exclude=.venv --exclude=./build --exclude=./dist --exclude=node_modules \
     --exclude=__pycache__ --exclude='*.egg-info' --exclude=.pytest_cache -cf - .) | tar -xf - -C "$STAGE"
  COMMIT=unknown
fi
rm -rf "$STAGE/liyuan_desktop/resources/web/vendor/node_modules"
VERSION=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$STAGE/liyuan_desktop/__init__.py")
BUILD_DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
cat > "$STAGE/liyuan_desktop/_build_info.py" <<EOF
"""Written by packaging/build.sh into the build's staged copy of the source (never present in a source checkout)."""

VERSION = "$VERSION"
BUILD_DATE = "$BUILD_DATE"
COMMIT = "$COMMIT"
PLATFORM = "$(uname -s | tr 'A-Z' 'a-z')-$(uname -m)"
EOF
echo "    version $VERSION, commit $COMMIT, build date $BUILD_DATE"

# the X libraries the app carries (slim.XCB_BUNDLE; Qt's xcb plugin needs them and a bare desktop may lack them) are
# copied from the build machine: a fresh build machine (CI runs as root on a new Debian) installs them first. The
# tests never need them (issue 24: they run before this, on a machine without them).
XCB_PKGS=(libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxkbcommon-x11-0
          libxcb-util1 libxcb-randr0 libxcb-shm0 libxcb-sync1 libxcb-xfixes0 libxcb-render0 libxcb-shape0 libxcb-xkb1
          libx11-xcb1 libxkbcommon0)
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && command -v dpkg-query >/dev/null; then
  missing_pkgs=()
  for p in "${XCB_PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing_pkgs+=("$p")
  done
  if [ "${#missing_pkgs[@]}" -gt 0 ]; then
    echo "    apt-get install ${missing_pkgs[*]} (the X libraries the app carries)"
    apt_install "${missing_pkgs[@]}" \
      || echo "build.sh: could not install ${missing_pkgs[*]}; the bundle step will name what is missing" >&2
  fi
fi

# the fallback fonts (issue 24): WenQuanYi Micro Hei (Chinese) and OpenMoji (colour emoji) are part of the package's
# resources (liyuan_desktop/resources/fonts, licences beside them) and reach the bundle with the rest of resources/
# (slim.source_datas) — nothing is copied from the build machine, so the app carries each font exactly once
for f in cjk/wqy-microhei.ttc emoji/OpenMoji-color-glyf_colr0.ttf; do
  if [ ! -f "$STAGE/liyuan_desktop/resources/fonts/$f" ]; then
    echo "build.sh: liyuan_desktop/resources/fonts/$f is missing from the source: the app would show boxes" >&2
    exit 1
  fi
done
echo "    fallback fonts: $(du -sk "$STAGE/liyuan_desktop/resources/fonts" | cut -f1) KB (resources/fonts)"

# --- 2. the build venv -----------------------------------------------------------------------------------------
if [ -n "${LIYUAN_BUILD_PYTHON:-}" ]; then
  VPY=$LIYUAN_BUILD_PYTHON
  say "using $VPY for the build"
else
  PY=${PYTHON:-python3}
  REQS=$B/requirements.txt
  "$PY" - "$STAGE/pyproject.toml" > "$REQS.new" <<'EOF'
import sys, tomllib
p = tomllib.load(open(sys.argv[1], "rb"))["project"]
print("\n".join(p["dependencies"] + p["optional-dependencies"]["build"]))
EOF
  # the lock's digest is part of what decides whether the build venv can be reused (issue 25: the shipped versions
  # are the tested ones)
  echo "# constraints.txt $(sha256sum "$STAGE/constraints.txt" | cut -d' ' -f1)" >> "$REQS.new"
  if [ ! -x "$B/venv/bin/python" ] || ! cmp -s "$REQS.new" "$REQS"; then
    say "making the build venv $B/venv (the app's dependencies + PyInstaller)"
    t=$(date +%s)
    rm -rf "$B/venv"
    "$PY" -m venv "$B/venv"
    "$B/venv/bin/pip" install -q --disable-pip-version-check -c "$STAGE/constraints.txt" -r "$REQS.new" 2>&1 | { grep -v "is ignored: it is neither a file" || true; }
    mv "$REQS.new" "$REQS"
    echo "    venv ready in $(elapsed "$t") s"
  else
    rm -f "$REQS.new"
    say "reusing the build venv $B/venv"
  fi
  VPY=$B/venv/bin/python
fi

# translators' catalogs (liyuan_desktop/resources/locale/<lang>/LC_MESSAGES/liyuan.po) → .mo, shipped with resources/
"$VPY" "$STAGE/scripts/catalog.py" compile

# --- 3. PyInstaller ----------------------------------------------------------------------------------------------
say "PyInstaller (one folder, slimmed)"
t=$(date +%s)
rm -rf "$B/dist" "$B/work"
(cd "$B" && "$VPY" -m PyInstaller --noconfirm --log-level WARN --distpath "$B/dist" --workpath "$B/work" \
   "$STAGE/packaging/liyuan.spec")
APP=$B/dist/liyuan
[ -x "$APP/liyuan" ] || { echo "build.sh: PyInstaller did not produce $APP/liyuan" >&2; exit 1; }
"$APP/liyuan" --version >/dev/null 2>&1 || "$APP/liyuan" --help >/dev/null
FOLDER_MB=$(du -sm "$APP" | cut -f1)
echo "    built $APP in $(elapsed "$t") s: $FOLDER_MB MB unpacked"
if [ "$FOLDER_MB" -ge 480 ]; then
  echo "build.sh: WARNING: the folder is $FOLDER_MB MB, over the 480 MB target" >&2
fi

if [ "$WANT_RUN" = 0 ] && [ "$WANT_DEB" = 0 ]; then
  say "done in $(elapsed "$T0") s: $APP ($FOLDER_MB MB)"
  exit 0
fi

# --- 4. tools for the installers ---------------------------------------------------------------------------------
need=()
[ "$WANT_RUN" = 1 ] && ! command -v makeself >/dev/null && need+=(makeself)
! command -v desktop-file-validate >/dev/null && need+=(desktop-file-utils)
if [ "${#need[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "apt-get install ${need[*]}"
    apt_install "${need[@]}"
  else
    echo "build.sh: the installers need: ${need[*]}. Install them (Debian/Ubuntu: sudo apt-get install ${need[*]})" \
         "and run this again, or use --folder-only." >&2
    exit 1
  fi
fi
command -v dpkg-deb >/dev/null || { [ "$WANT_DEB" = 1 ] && { echo "build.sh: dpkg-deb is missing (use --no-deb)" >&2; exit 1; }; }

ARCH=$(dpkg --print-architecture 2>/dev/null || uname -m)
OUT=$B/out
rm -rf "$OUT"
mkdir -p "$OUT"
LIN=$STAGE/packaging/linux
ICONS=$STAGE/liyuan_desktop/resources/icons

# the hicolor icon tree, shared by both installers: <root>/<N>x<N>/apps/liyuan.png + scalable/apps/liyuan.svg
icon_tree() {
  local root=$1 n
  for n in 16 32 48 64 128 256 512; do
    install -D -m 0644 "$ICONS/liyuan-$n.png" "$root/${n}x${n}/apps/liyuan.png"
  done
  install -D -m 0644 "$ICONS/liyuan.svg" "$root/scalable/apps/liyuan.svg"
}

# --- 5. the per-user .run (makeself) ------------------------------------------------------------------------------
if [ "$WANT_RUN" = 1 ]; then
  say "self-extracting installer (.run) for the current user"
  t=$(date +%s)
  RS=$B/run-stage
  rm -rf "$RS"
  mkdir -p "$RS"
  cp -al "$APP" "$RS/app"  # hard links: no second copy on disk
  icon_tree "$RS/icons/hicolor"
  install -m 0644 "$LIN/liyuan.desktop.in" "$RS/liyuan.desktop.in"
  install -m 0755 "$LIN/install.sh" "$RS/install.sh"
  install -m 0755 "$LIN/uninstall.sh" "$RS/uninstall.sh"
  echo "$VERSION" > "$RS/VERSION"
  RUN=$OUT/liyuan-$VERSION-linux-$ARCH.run
  makeself --quiet --gzip --complevel 6 --tar-format gnu --sha256 "$RS" "$RUN" "梨园 Liyuan Desktop $VERSION" ./install.sh
  rm -rf "$RS"
  echo "    $RUN: $(du -m "$RUN" | cut -f1) MB in $(elapsed "$t") s"
fi

# --- 6. the system-wide .deb (dpkg-deb) ---------------------------------------------------------------------------
if [ "$WANT_DEB" = 1 ]; then
  say "Debian package (.deb) for a system-wide install"
  t=$(date +%s)
  DR=$B/deb-root
  rm -rf "$DR"
  mkdir -p "$DR/opt" "$DR/usr/bin" "$DR/usr/share/applications" "$DR/DEBIAN"
  cp -al "$APP" "$DR/opt/liyuan"
  ln -s /opt/liyuan/liyuan "$DR/usr/bin/liyuan"
  icon_tree "$DR/usr/share/icons/hicolor"
  sed -e 's|@EXEC@|/opt/liyuan/liyuan|; s|@TRYEXEC@|/opt/liyuan/liyuan|' "$LIN/liyuan.desktop.in" > "$DR/usr/share/applications/liyuan.desktop"
  desktop-file-validate "$DR/usr/share/applications/liyuan.desktop"
  install -D -m 0644 "$LIN/copyright" "$DR/usr/share/doc/liyuan/copyright"
  SIZE_KB=$(du -sk --exclude=DEBIAN "$DR" | cut -f1)
  sed -e "s|@VERSION@|$VERSION|; s|@ARCH@|$ARCH|; s|@SIZE@|$SIZE_KB|" "$LIN/deb-control.in" > "$DR/DEBIAN/control"
  install -m 0755 "$LIN/deb-postinst" "$DR/DEBIAN/postinst"
  install -m 0755 "$LIN/deb-postrm" "$DR/DEBIAN/postrm"
  DEB=$OUT/liyuan_${VERSION}_$ARCH.deb
  dpkg-deb --root-owner-group -Zgzip -z6 --build "$DR" "$DEB" >/dev/null
  rm -rf "$DR"
  echo "    $DEB: $(du -m "$DEB" | cut -f1) MB in $(elapsed "$t") s"
fi

say "done in $(elapsed "$T0") s"
echo "    folder     $APP  ($FOLDER_MB MB unpacked)"
[ "$WANT_RUN" = 1 ] && echo "    installer  $RUN  ($(du -m "$RUN" | cut -f1) MB; sh it as a normal user: installs into ~/.local/opt/liyuan)"
[ "$WANT_DEB" = 1 ] && echo "    package    $DEB  ($(du -m "$DEB" | cut -f1) MB; sudo apt install ./$(basename "$DEB"))"
exit 0
