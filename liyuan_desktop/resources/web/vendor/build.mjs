// Bundles the frame libraries whose npm packages ship no single-file browser build (zod 4, yaml, and the small
// helpers status-bar templates import from CDNs: entries/helpers.js) into IIFE scripts with esbuild. Run by
// scripts/vendor_libs.py after `npm ci`: `node build.mjs OUT_DIR`. A helper that imports Vue or pinia gets the
// frame's one global copy (window.Vue / window.Pinia, injected before it), never a second bundled one.
// zod's `z.locales` keeps English (zod's default) and the two Chinese locales; the other ~50 would add ~250 KB
// to every frame that uses `z`.
import { build } from "esbuild";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.resolve(process.argv[2] || path.join(here, "lib"));

const zodLocales = {
  name: "zod-locales",
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${path.sep}zod${path.sep}`) ? { path: "zod-locales", namespace: "liyuan" } : undefined);
    b.onLoad({ filter: /^zod-locales$/, namespace: "liyuan" }, () => ({
      resolveDir: here,
      contents: 'export { default as en } from "zod/v4/locales/en.js";\n' +
        'export { default as zhCN } from "zod/v4/locales/zh-CN.js";\n' +
        'export { default as zhTW } from "zod/v4/locales/zh-TW.js";\n',
    }));
  },
};

// "vue" / "pinia" inside a helper: the globals the frame already has
const frameGlobals = {
  name: "frame-globals",
  setup(b) {
    b.onResolve({ filter: /^(vue|pinia)$/ }, (args) => ({ path: args.path, namespace: "liyuan-global" }));
    b.onLoad({ filter: /.*/, namespace: "liyuan-global" }, (args) => ({
      contents: `module.exports = window.${args.path === "vue" ? "Vue" : "Pinia"};`,
    }));
  },
};

// The small helpers status-bar templates import from CDNs (jsDelivr "+esm", esm.sh, unpkg …): each becomes one
// global holding the package's module namespace (named exports and `default`), which conversation.js hands to a
// rewritten `import { waitUntil } from "https://…/async-wait-until/+esm"`; those whose UMD builds set a global of
// their own (JSON5, mitt, VueUse) set that too, for classic <script src> tags.
// key: [npm package, lib file, namespace global, UMD global, member of the namespace the UMD global is]
const HELPERS = {
  asyncwaituntil: ["async-wait-until", "async-wait-until.min.js", "__liyuanAsyncWaitUntil"],
  klona: ["klona", "klona.min.js", "__liyuanKlona"],
  dedent: ["dedent", "dedent.min.js", "__liyuanDedent"],
  json5: ["json5", "json5.min.js", "__liyuanJSON5", "JSON5", "default"],
  mitt: ["mitt", "mitt.min.js", "__liyuanMitt", "mitt", "default"],
  vueuse: ["@vueuse/core", "vueuse.min.js", "__liyuanVueUse", "VueUse"],
  piniapersist: ["pinia-plugin-persistedstate", "pinia-plugin-persistedstate.min.js", "__liyuanPiniaPersist"],
};

for (const [pkg, file, global, umd, member] of Object.values(HELPERS)) {
  await build({
    stdin: {
      contents: `import * as ns from ${JSON.stringify(pkg)};\nwindow.${global} = ns;\n` +
        (umd ? `window.${umd} = ${member ? "ns." + member : "ns"};\n` : ""),
      resolveDir: here,
      sourcefile: `${pkg}-entry.js`,
    },
    outfile: path.join(out, file),
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2020",
    minify: true,
    legalComments: "inline",
    plugins: [frameGlobals],
    logLevel: "warning",
  });
}

for (const [entry, file] of [["zod", "zod.min.js"], ["yaml", "yaml.min.js"]]) {
  await build({
    entryPoints: [path.join(here, "entries", `${entry}.js`)],
    outfile: path.join(out, file),
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2020",
    minify: true,
    legalComments: "inline",
    plugins: [zodLocales],
    logLevel: "warning",
  });
}
