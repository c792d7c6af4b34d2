// Entry bundled by scripts/vendor_libs.py (esbuild, IIFE): zod 4 as the global `z`, as TavernHelper provides it.
// `z` is zod's whole module namespace, as `import * as z from "zod"` gives it, so it also has `z.z` (bundled bars
// that were compiled from `import { z } from "zod"` read `B.z.object`) and `z.default`.
// `Zod` is the same object, for cards written against zod 3's UMD build (which set `window.Zod`).
import * as zod from "zod";

// A frame's CSP has no 'unsafe-eval': skip zod's `new Function` fast path (and its probe, which the CSP would report).
zod.config({ jitless: true });
window.z = zod;
window.Zod = zod;
