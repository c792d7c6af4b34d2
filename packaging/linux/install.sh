#!/bin/sh
# 梨园 Liyuan Desktop — per-user installer, run by the self-extracting .run (makeself) from its unpacked folder.
# No root needed. Installs:
#   ~/.local/opt/liyuan/                          the app (replaces an older install; your data is never touched)
#   ~/.local/share/applications/liyuan.desktop    the menu entry
#   ~/.local/share/icons/hicolor/*/apps/liyuan.*  the icon, 16–512 px + scalable SVG
#   ~/.local/bin/liyuan                           a link for the terminal (unless something else is there)
#   ~/.local/opt/liyuan/uninstall.sh              removes all of the above (--purge also removes your data)
# LIYUAN_PREFIX overrides the app folder. Data stays in ~/.local/share/liyuan (or $LIYUAN_HOME).
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
VERSION=$(cat "$HERE/VERSION" 2>/dev/null || echo "?")
: "${HOME:?HOME is not set}"
PREFIX=${LIYUAN_PREFIX:-$HOME/.local/opt/liyuan}
DATA=${XDG_DATA_HOME:-$HOME/.local/share}
APPS=$DATA/applications
ICONS=$DATA/icons/hicolor
BIN=$HOME/.local/bin

echo "梨园 Liyuan Desktop $VERSION → $PREFIX"
if [ "$(id -u)" = 0 ]; then
  echo "注意：正在以 root 安装，只会装给 root 自己。给所有用户安装请用 .deb 包。" >&2
  echo "Note: installing as root installs for root only; for all users use the .deb package." >&2
fi

# 1. the app: copy next to the old one, then swap, so a failed copy never leaves a half-installed app
mkdir -p "$(dirname "$PREFIX")"
rm -rf "$PREFIX.new" "$PREFIX.old"
cp -a "$HERE/app" "$PREFIX.new"
if [ -e "$PREFIX" ]; then mv "$PREFIX" "$PREFIX.old"; fi
mv "$PREFIX.new" "$PREFIX"
rm -rf "$PREFIX.old"

# 2. icons
for dir in "$HERE"/icons/hicolor/*/apps; do
  size=$(basename "$(dirname "$dir")")
  mkdir -p "$ICONS/$size/apps"
  cp -f "$dir"/liyuan.* "$ICONS/$size/apps/"
done
touch "$ICONS" 2>/dev/null || true  # desktops watch the folder's time stamp
if [ -f "$ICONS/index.theme" ] && command -v gtk-update-icon-cache >/dev/null 2>&1; then
  gtk-update-icon-cache -q -t -f "$ICONS" 2>/dev/null || true
fi

# 3. the menu entry (Exec is quoted only when the path has a space; TryExec is a plain path)
case "$PREFIX" in
  *" "*) EXEC="\"$PREFIX/liyuan\"" ;;
  *) EXEC="$PREFIX/liyuan" ;;
esac
mkdir -p "$APPS"
esc() { printf '%s' "$1" | sed 's/[\\|&]/\\&/g'; }
sed -e "s|@EXEC@|$(esc "$EXEC")|; s|@TRYEXEC@|$(esc "$PREFIX/liyuan")|" "$HERE/liyuan.desktop.in" > "$APPS/liyuan.desktop"
chmod 0644 "$APPS/liyuan.desktop"
if command -v desktop-file-validate >/dev/null 2>&1; then
  desktop-file-validate "$APPS/liyuan.desktop" || echo "warning: desktop-file-validate complained (see above)" >&2
fi
if command -v update-desktop-database >/dev/null 2>&1; then
  update-desktop-database -q "$APPS" 2>/dev/null || true
fi

# 4. a terminal command, if ~/.local/bin/liyuan is free (or already ours)
LINKED=""
if [ ! -e "$BIN/liyuan" ] || [ -L "$BIN/liyuan" ]; then
  mkdir -p "$BIN"
  ln -sfn "$PREFIX/liyuan" "$BIN/liyuan"
  LINKED="$BIN/liyuan"
fi

# 5. the uninstaller, with this install's paths written in
sed -e "s|@PREFIX@|$(esc "$PREFIX")|; s|@APPS@|$(esc "$APPS")|; s|@ICONS@|$(esc "$ICONS")|; s|@LINK@|$(esc "$LINKED")|" \
    "$HERE/uninstall.sh" > "$PREFIX/uninstall.sh"
chmod 0755 "$PREFIX/uninstall.sh"

# 6. libraries the app takes from the system (OpenGL, xcb …): say so now rather than fail silently from the menu
missing=$(for f in "$PREFIX"/_internal/PySide6/Qt/plugins/platforms/libqxcb.so "$PREFIX"/_internal/PySide6/Qt/lib/libQt6WebEngineCore.so.6; do
  LD_LIBRARY_PATH="$PREFIX/_internal" ldd "$f" 2>/dev/null | awk '/not found/ {print $1}'; done | sort -u | tr '\n' ' ')
if [ -n "$missing" ]; then
  echo "注意：系统缺少这些库，梨园可能无法启动 / missing system libraries: $missing" >&2
  echo "  Debian/Ubuntu: sudo apt-get install libgl1 libegl1 libxcb1 libxcb-dri3-0 libdrm2" >&2
fi

echo "装好了：在应用菜单里找「梨园」，或在终端运行 $PREFIX/liyuan"
echo "Installed: find Liyuan in the applications menu, or run $PREFIX/liyuan"
echo "卸载 / uninstall: $PREFIX/uninstall.sh   (加 --purge 同时删除对话数据 / --purge also deletes your chats)"
