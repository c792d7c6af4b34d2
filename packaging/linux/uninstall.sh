#!/bin/sh
# 梨园 Liyuan Desktop — uninstall the per-user install (written by install.sh with this install's paths).
#   uninstall.sh           remove the app, its menu entry, icons and terminal link; keep your chats and settings
#   uninstall.sh --purge   also delete your data (~/.local/share/liyuan or $LIYUAN_HOME) and logs
set -eu

PREFIX='@PREFIX@'
APPS='@APPS@'
ICONS='@ICONS@'
LINK='@LINK@'

case "$PREFIX" in
  ""|/|"$HOME"|"$HOME/") echo "uninstall.sh: refusing to remove '$PREFIX'" >&2; exit 1 ;;
esac
[ -x "$PREFIX/liyuan" ] || { echo "uninstall.sh: no Liyuan install in $PREFIX" >&2; exit 1; }

rm -f "$APPS/liyuan.desktop"
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$APPS" 2>/dev/null || true
for f in "$ICONS"/*/apps/liyuan.png "$ICONS"/*/apps/liyuan.svg; do
  [ -e "$f" ] && rm -f "$f"
done
touch "$ICONS" 2>/dev/null || true
if [ -n "$LINK" ] && [ -L "$LINK" ] && [ "$(readlink "$LINK")" = "$PREFIX/liyuan" ]; then
  rm -f "$LINK"
fi

if [ "${1:-}" = "--purge" ]; then
  DATA=${LIYUAN_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/liyuan}
  LOGS=${XDG_STATE_HOME:-$HOME/.local/state}/liyuan
  rm -rf "$DATA" "$LOGS"
  echo "已删除数据 / data deleted: $DATA"
else
  echo "对话和设置都留着 / your chats and settings are kept: ${LIYUAN_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/liyuan}"
fi
rm -rf "$PREFIX"
echo "梨园已卸载 / Liyuan is uninstalled."
