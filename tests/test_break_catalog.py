"""Breaking translators' catalogs as a user would (z99break): a damaged compiled catalog in the data folder's
``locale/`` must read as missing (English shown), never take every command down; ``scripts/catalog.py init`` with
a path for a language code or before ``extract`` says so in one line. Real files, the real CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from liyuan_desktop.cli import main as cli_main
from liyuan_desktop.core import catalog_files
from liyuan_desktop.core.paths import home

ROOT = Path(__file__).resolve().parents[1]


def test_a_truncated_mo_file_is_treated_as_missing(tmp_path, capsys):
    mo = home() / "locale" / "yy" / "LC_MESSAGES" / "liyuan.mo"
    mo.parent.mkdir(parents=True)
    mo.write_bytes(b"\xde\x12\x04\x95garbage")  # the magic number, then too short a header
    catalog_files.set_locale_dirs(None)
    try:
        assert catalog_files.translation("yy") is None
        assert cli_main(["--lang", "yy", "group", "list"]) == 0
        assert "No groups yet" in capsys.readouterr().out  # English for a language without a usable catalog
    finally:
        catalog_files.set_locale_dirs(None)


def test_catalog_init_refuses_a_path_and_a_missing_template_in_one_line(tmp_path):
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(ROOT / "scripts" / "catalog.py"), *args, "--dir", str(tmp_path)],
                              capture_output=True, text=True, timeout=120)

    r = run("init", "fr")
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [f"{tmp_path / 'liyuan.pot'} is missing: run 'scripts/catalog.py "
                                             "extract' first"]
    for bad in ("../x", "fr/../../y", "x" * 40):
        r = run("init", bad)
        assert r.returncode != 0 and "Traceback" not in r.stderr, bad
        assert r.stderr.strip().splitlines() == [f"“{bad}” is not a language code (ja, fr, pt_BR…)"], r.stderr
    assert not (tmp_path.parent / "x").exists()
