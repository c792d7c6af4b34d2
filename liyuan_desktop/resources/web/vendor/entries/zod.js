// Entry bundled by scripts/vendor_libs.py (esbuild, IIFE): zod 4 as the global `z`, as TavernHelper provides it.
// `Zod` is the same object, for cards written against zod 3's UMD build (which set `window.Zod`).
import { z } from "zod";

// A frame's CSP has no 'unsafe-eval': skip zod's `new Function` fast path (and its probe, which the CSP would report).
z.config({ jitless: true });
window.z = z;
window.Zod = z;
