"""Rebuild the status-bar frame libraries in ``liyuan_desktop/resources/web/vendor/lib/`` from the npm lock file.

Runs ``npm ci --include=dev --ignore-scripts`` in ``liyuan_desktop/resources/web/vendor/`` (versions pinned by
``package-lock.json``), then:

- copies the ready browser builds (UMD/IIFE, single file) out of ``node_modules`` into ``vendor/lib/``: jQuery,
  jQuery UI (+ its base theme CSS), lodash, Vue 3, vue-router, pinia, toastr (+ CSS), showdown;
- bundles the packages that ship only ES modules, zod 4 (global ``z``, alias ``Zod``) and yaml (``YAML``), into
  IIFE scripts with esbuild (``vendor/build.mjs``, entries in ``vendor/entries/``), and so the small helpers
  status-bar templates import from CDNs: async-wait-until, klona, dedent, json5, mitt, @vueuse/core,
  pinia-plugin-persistedstate (each one global with its module namespace; Vue and pinia inside them are the frame's
  globals);
- builds Font Awesome Free's ``css/all.min.css`` with its web fonts inlined as ``data:`` URLs (a frame can load
  nothing else), split by font family so that a frame carries only the fonts it can use: ``fontawesome`` (the rules
  and "Font Awesome 7 Free", solid + regular), ``fontawesome_brands``, ``fontawesome_v5`` ("Font Awesome 5
  Free/Brands") and ``fontawesome_v4`` ("FontAwesome"); the jQuery UI theme's icon images are inlined the same way;
- writes ``vendor/lib/frame_libs.js``: all of these texts as JSON strings in ``window.__liyuanFrameLibs``;
- copies the host page's own libraries (``HOST``: DOMPurify, the message sanitiser) into ``vendor/lib/`` only; they
  are loaded by ``conversation.html`` with a ``<script src>`` and never go into a frame.

The host page (``conversation.js``) loads that one file with a ``<script>`` tag (its CSP allows ``script-src 'self'``
but no ``connect-src``, so it cannot ``fetch`` the bundles) and inlines the libraries a card's HTML needs into the
frame's ``srcdoc``. ``node_modules`` is never committed (``vendor/.gitignore``).

Usage: ``python scripts/vendor_libs.py [--skip-install]``; prints each file's size and the total.
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENDOR = ROOT / "liyuan_desktop" / "resources" / "web" / "vendor"
LIB = VENDOR / "lib"
MODULES = VENDOR / "node_modules"

# key -> (npm package, file inside the package, kind, file name in lib/). The keys are the names conversation.js
# uses. CSS files have their relative url(...) references inlined as data: URLs.
BUNDLES = {
    "jquery": ("jquery", "dist/jquery.min.js", "js", "jquery.min.js"),
    "jqueryui": ("jquery-ui", "dist/jquery-ui.min.js", "js", "jquery-ui.min.js"),
    "jqueryui_css": ("jquery-ui", "dist/themes/base/jquery-ui.min.css", "css", "jquery-ui.min.css"),
    "lodash": ("lodash", "lodash.min.js", "js", "lodash.min.js"),
    "vue": ("vue", "dist/vue.global.prod.js", "js", "vue.global.prod.js"),
    "vuerouter": ("vue-router", "dist/vue-router.global.prod.js", "js", "vue-router.global.prod.js"),
    "pinia": ("pinia", "dist/pinia.iife.prod.js", "js", "pinia.iife.prod.js"),
    "toastr": ("toastr", "build/toastr.min.js", "js", "toastr.min.js"),
    "toastr_css": ("toastr", "build/toastr.min.css", "css", "toastr.min.css"),
    "showdown": ("showdown", "dist/showdown.min.js", "js", "showdown.min.js"),
}

# Libraries of the host page itself (not of frames): npm package, file inside the package, file name in lib/.
# Their trailing ``//# sourceMappingURL`` line is dropped (the map is not shipped).
HOST = {
    "dompurify": ("dompurify", "dist/purify.min.js", "purify.min.js"),
}

# key -> (npm package, file name in lib/ written by vendor/build.mjs)
ESBUILD = {
    "zod": ("zod", "zod.min.js"),
    "yaml": ("yaml", "yaml.min.js"),
    # helpers status-bar templates import from CDNs (build.mjs HELPERS: one global holding the module namespace)
    "asyncwaituntil": ("async-wait-until", "async-wait-until.min.js"),
    "klona": ("klona", "klona.min.js"),
    "dedent": ("dedent", "dedent.min.js"),
    "json5": ("json5", "json5.min.js"),
    "mitt": ("mitt", "mitt.min.js"),
    "vueuse": ("@vueuse/core", "vueuse.min.js"),
    "piniapersist": ("pinia-plugin-persistedstate", "pinia-plugin-persistedstate.min.js"),
}

FONTAWESOME = "@fortawesome/fontawesome-free"
# @font-face family -> the key its face goes into (all other rules go into "fontawesome")
FA_FAMILIES = {
    "Font Awesome 7 Free": "fontawesome",
    "Font Awesome 7 Brands": "fontawesome_brands",
    "Font Awesome 5 Free": "fontawesome_v5",
    "Font Awesome 5 Brands": "fontawesome_v5",
    "FontAwesome": "fontawesome_v4",
}
FA_FILES = {
    "fontawesome": "fontawesome.min.css",
    "fontawesome_brands": "fontawesome-brands.min.css",
    "fontawesome_v5": "fontawesome-v5.min.css",
    "fontawesome_v4": "fontawesome-v4.min.css",
}

MIME = {".png": "image/png", ".gif": "image/gif", ".svg": "image/svg+xml", ".woff2": "font/woff2",
        ".woff": "font/woff", ".ttf": "font/ttf"}
URL_RE = re.compile(r"""url\(\s*(["']?)(?!data:|https?:|//|#)([^"')]+)\1\s*\)""")


def npm_ci() -> None:
    """Install exactly what package-lock.json pins; no package needs its install scripts (esbuild's binary comes in
    its platform package)."""
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("npm is not on PATH")
    subprocess.run([npm, "ci", "--include=dev", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=VENDOR, check=True)


def run_esbuild() -> None:
    """Bundle zod and yaml into ``lib/`` with ``vendor/build.mjs``."""
    node = shutil.which("node")
    if node is None:
        sys.exit("node is not on PATH")
    subprocess.run([node, str(VENDOR / "build.mjs"), str(LIB)], cwd=VENDOR, check=True)


def inline_urls(css: str, base: Path) -> str:
    """``css`` with every relative ``url(...)`` replaced by a ``data:`` URL of the file it names (relative to
    ``base``); a reference to a missing file is an error."""
    def data_url(m: re.Match) -> str:
        rel = m.group(2).split("?")[0].split("#")[0]
        path = (base / rel).resolve()
        mime = MIME.get(path.suffix.lower())
        if mime is None or not path.is_file():
            raise SystemExit(f"cannot inline {rel!r} (from {base})")
        return f'url("data:{mime};base64,{base64.b64encode(path.read_bytes()).decode("ascii")}")'
    return URL_RE.sub(data_url, css)


def split_fontawesome(css: str) -> dict[str, str]:
    """Font Awesome's all.min.css split by key (see FA_FAMILIES): the @font-face rules go to their family's key,
    everything else to "fontawesome"."""
    parts: dict[str, list[str]] = {key: [] for key in FA_FILES}

    def face(m: re.Match) -> str:
        fam = re.search(r"""font-family\s*:\s*["']?([^"';}]+)""", m.group(0))
        key = FA_FAMILIES.get(fam.group(1).strip() if fam else "")
        if key is None:
            raise SystemExit(f"unknown Font Awesome family in {m.group(0)[:80]!r}")
        parts[key].append(m.group(0))
        return ""
    rules = re.sub(r"@font-face\s*\{[^}]*\}", face, css)
    out = {key: "".join(faces) for key, faces in parts.items()}
    out["fontawesome"] = rules.rstrip() + "\n" + out["fontawesome"]
    return out


def package_version(pkg: str) -> str:
    """The installed version of ``pkg``."""
    return json.loads((MODULES / pkg / "package.json").read_text(encoding="utf-8"))["version"]


def main(argv: list[str] | None = None) -> int:
    """Install, build and copy the frame libraries; write frame_libs.js; print sizes."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-install", action="store_true", help="use the node_modules already installed")
    args = ap.parse_args(argv)
    if not args.skip_install:
        npm_ci()
    LIB.mkdir(parents=True, exist_ok=True)
    run_esbuild()

    # (key, package, kind, lib file, text); a text is written to its lib file unless it is None (copied / built)
    items: list[tuple[str, str, str, str, str | None]] = []
    for key, (pkg, rel, kind, name) in BUNDLES.items():
        src = MODULES / pkg / rel
        if kind == "css":
            items.append((key, pkg, kind, name, inline_urls(src.read_text(encoding="utf-8"), src.parent)))
        else:
            shutil.copyfile(src, LIB / name)
            items.append((key, pkg, kind, name, None))
    for key, (pkg, name) in ESBUILD.items():
        items.append((key, pkg, "js", name, None))
    fa_css = MODULES / FONTAWESOME / "css" / "all.min.css"
    for key, text in split_fontawesome(fa_css.read_text(encoding="utf-8")).items():
        items.append((key, FONTAWESOME, "css", FA_FILES[key], inline_urls(text, fa_css.parent)))

    index: dict[str, dict[str, str]] = {}
    total = 0
    for key, pkg, kind, name, text in items:
        dst = LIB / name
        if text is None:
            text = dst.read_text(encoding="utf-8")
        else:
            dst.write_text(text, encoding="utf-8", newline="")
        if "<!--" in text:  # would put an inline <script> into the HTML "escaped" state
            print(f"warning: {name} contains '<!--'", file=sys.stderr)
        version = package_version(pkg)
        index[key] = {"package": pkg, "version": version, "kind": kind, "text": text}
        size = dst.stat().st_size
        total += size
        print(f"{dst.relative_to(ROOT)}  {key}  {pkg}@{version}  {size / 1024:.1f} KiB")
    for key, (pkg, rel, name) in HOST.items():
        text = (MODULES / pkg / rel).read_text(encoding="utf-8")
        text = re.sub(r"\n//# sourceMappingURL=\S+\s*$", "\n", text)
        dst = LIB / name
        dst.write_text(text, encoding="utf-8", newline="")
        print(f"{dst.relative_to(ROOT)}  {key}  {pkg}@{package_version(pkg)}  {dst.stat().st_size / 1024:.1f} KiB"
              "  (host page only)")
    out = LIB / "frame_libs.js"
    out.write_text("// Generated by scripts/vendor_libs.py from package-lock.json; do not edit.\n"
                   "window.__liyuanFrameLibs = " + json.dumps(index, ensure_ascii=False, indent=0) + ";\n",
                   encoding="utf-8")
    size = out.stat().st_size
    print(f"{out.relative_to(ROOT)}  (all of the above as JSON strings)  {size / 1024:.1f} KiB")
    print(f"total: bundles {total / 1024:.1f} KiB, frame_libs.js {size / 1024:.1f} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
