#!/usr/bin/env bash
# Make the macOS disk image of 梨园 Liyuan Desktop (issue 32 §2): the .app and a link to /Applications in a compressed,
# read-only UDZO image, the drag-to-install layout macOS users expect. macOS only (hdiutil); run by the CI's build
# workflow after PyInstaller:
#
#   packaging/macos/make_dmg.sh dist/梨园.app dist/installer/liyuan-VERSION-macos-ARCH.dmg
#
# Unsigned and not notarized: Gatekeeper asks the user to open it with right-click → Open (packaging/README.md says
# how to sign and notarize once there is a Developer ID).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: make_dmg.sh APP DMG" >&2; exit 2; }
APP=$1
DMG=$2
[ -d "$APP/Contents/MacOS" ] || { echo "make_dmg.sh: $APP is not an .app bundle" >&2; exit 2; }
command -v hdiutil >/dev/null || { echo "make_dmg.sh: hdiutil is macOS-only" >&2; exit 2; }
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
# ditto keeps the bundle's symlinks, extended attributes and code signatures as they are
ditto "$APP" "$STAGE/$(basename "$APP")"
ln -s /Applications "$STAGE/Applications"
mkdir -p "$(dirname "$DMG")"
rm -f "$DMG"
hdiutil create -volname "Liyuan Desktop" -srcfolder "$STAGE" -fs HFS+ -format UDZO -imagekey zlib-level=9 -ov "$DMG"
hdiutil verify "$DMG"
echo "make_dmg.sh: $DMG ($(du -h "$DMG" | cut -f1))"
