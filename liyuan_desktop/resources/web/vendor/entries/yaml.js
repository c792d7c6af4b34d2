// Entry bundled by scripts/vendor_libs.py (esbuild, IIFE): the `yaml` package as the global `YAML`, as TavernHelper
// provides it (YAML.parse, YAML.stringify, YAML.parseDocument, YAML.Document, ...).
import * as YAML from "yaml";

window.YAML = YAML;
