// Bundles the two frame libraries whose npm packages ship no single-file browser build (zod 4, yaml) into IIFE
// scripts with esbuild. Run by scripts/vendor_libs.py after `npm ci`: `node build.mjs OUT_DIR`.
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
