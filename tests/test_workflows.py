"""The CI workflows for a public forge (issue 32 §2): ``.github/workflows/*.yml`` pass actionlint, build on Windows,
macOS (arm64 and x86_64) and Linux through the lock, run the built app's self-test offscreen and keep an installer
per platform; the test workflow runs the README's test command on the three OSes. The installers' own files (Inno
Setup script, .dmg script, .ico/.icns writer, build info) are checked here as far as Linux can check them."""

from __future__ import annotations

import importlib.util
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
PKG = ROOT / "packaging"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"liyuan_packaging_{name}", PKG / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _actionlint() -> str | None:
    here = Path(sys.executable).parent / ("actionlint.exe" if sys.platform == "win32" else "actionlint")
    return str(here) if here.exists() else shutil.which("actionlint")


def _workflow(name: str) -> dict:
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    # YAML 1.1 reads the key "on" as True
    data["on"] = data.pop(True, data.get("on"))
    return data


def _runs(job: dict) -> str:
    return "\n".join(str(step.get("run", "")) + str(step.get("uses", "")) for step in job["steps"])


def test_workflows_pass_actionlint():
    exe = _actionlint()
    if exe is None:
        pytest.skip("actionlint is not installed (the test extra installs it on Linux)")
    files = sorted(str(p) for p in WORKFLOWS.glob("*.yml"))
    assert files, "no workflow"
    try:
        r = subprocess.run([exe, "-color=false", *files], capture_output=True, text=True, timeout=120, cwd=ROOT)
    except OSError as e:
        pytest.skip(f"the actionlint binary cannot run here: {e}")
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_build_covers_every_desktop_and_makes_an_installer_each():
    wf = _workflow("build.yml")
    desktop, linux = wf["jobs"]["desktop"], wf["jobs"]["linux"]
    runners = {row["label"]: row["os"] for row in desktop["strategy"]["matrix"]["include"]}
    assert set(runners) == {"windows-x86_64", "macos-arm64", "macos-x86_64"}
    assert runners["windows-x86_64"].startswith("windows-")
    assert runners["macos-x86_64"].endswith("-intel")      # the x86_64 macOS image; plain macos-N is arm64
    assert linux["runs-on"].startswith("ubuntu-")
    text = _runs(desktop)
    install = next(s for s in desktop["steps"] if "pip install" in str(s.get("run", "")))
    assert install["env"]["PIP_CONSTRAINT"].endswith("constraints.txt")   # through the lock, as .ci/run
    assert "packaging/liyuan.spec" in text and "make_icons.py --ico" in text and "build_info.py" in text
    selftest = next(s for s in desktop["steps"] if "--self-test" in str(s.get("run", "")))
    assert selftest["env"]["QT_QPA_PLATFORM"] == "offscreen" and "--offscreen" in selftest["run"]
    assert "liyuan-cli.exe" in selftest["run"]  # the windowed liyuan.exe has no stdout to read the report from
    assert "packaging\\windows\\liyuan.iss" in text and "packaging/macos/make_dmg.sh" in text
    assert "actions/upload-artifact" in text
    linux_text = _runs(linux)
    assert "packaging/build.sh" in linux_text and "packaging/smoke.sh" in linux_text and "--self-test" in linux_text
    assert "actions/upload-artifact" in linux_text


def test_the_test_workflow_runs_the_readme_command_on_three_oses():
    wf = _workflow("test.yml")
    assert "bash .ci/run" in _runs(wf["jobs"]["linux"])
    desktop = wf["jobs"]["desktop"]
    oses = desktop["strategy"]["matrix"]["os"]
    assert any(o.startswith("windows-") for o in oses) and any(o.startswith("macos-") for o in oses)
    text = _runs(desktop)
    assert "<!-- test-command -->" in text and "PIP_CONSTRAINT" in str(desktop["steps"])


def test_the_readme_command_adapts_to_a_windows_venv():
    # the same substitution as test.yml's Windows step, on the real README command
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- test-command -->", 1)[1].split("<!-- /test-command -->", 1)[0]
    cmd = "\n".join(line for line in block.splitlines() if line and not line.startswith("```"))
    win = cmd.replace(".venv/bin/", ".venv/Scripts/").replace("python3 -m venv", "python -m venv")
    assert ".venv/bin" not in win and ".venv/Scripts/pip install" in win and "pytest" in win


def test_ico_and_icns_hold_every_size(tmp_path):
    icons = _load("make_icons")
    pngs = icons.committed_pngs()
    ico = icons.ico_bytes({n: pngs[n] for n in icons.ICO_SIZES})
    reserved, kind, count = struct.unpack("<HHH", ico[:6])
    assert (reserved, kind, count) == (0, 1, len(icons.ICO_SIZES))
    for i, n in enumerate(icons.ICO_SIZES):
        w, h, _, _, planes, bpp, size, offset = struct.unpack("<BBBBHHII", ico[6 + 16 * i: 22 + 16 * i])
        assert (w or 256, h or 256, planes, bpp) == (n, n, 1, 32)
        assert icons.png_size(ico[offset:offset + size]) == (n, n)
    icns = icons.icns_bytes(pngs)
    assert icns[:4] == b"icns" and struct.unpack(">I", icns[4:8])[0] == len(icns)
    pos, seen = 8, {}
    while pos < len(icns):
        ostype, length = icns[pos:pos + 4].decode(), struct.unpack(">I", icns[pos + 4:pos + 8])[0]
        seen[ostype] = icons.png_size(icns[pos + 8:pos + length])
        pos += length
    assert seen == {t: (n, n) for t, n in icons.ICNS_SLOTS}


def test_qt_decodes_every_image_of_the_ico_and_the_icns(tmp_path, qapp):
    # an independent reader of both formats: Qt's qico and qicns image plugins (in the PySide6 wheel)
    from PySide6.QtGui import QImageReader

    icons = _load("make_icons")
    pngs = icons.committed_pngs()
    (tmp_path / "liyuan.ico").write_bytes(icons.ico_bytes({n: pngs[n] for n in icons.ICO_SIZES}))
    (tmp_path / "liyuan.icns").write_bytes(icons.icns_bytes(pngs))
    for name, want in (("liyuan.ico", list(icons.ICO_SIZES)), ("liyuan.icns", [n for _, n in icons.ICNS_SLOTS])):
        reader = QImageReader(str(tmp_path / name))
        assert reader.canRead(), name
        got = []
        for i in range(reader.imageCount()):
            reader.jumpToImage(i)
            img = reader.read()
            got.append((img.width(), img.height()))
        assert got == [(n, n) for n in want], name


def test_build_info_names_each_platform(tmp_path):
    info = _load("build_info")
    assert info.platform_tag("win32", "AMD64") == "windows-x86_64"
    assert info.platform_tag("darwin", "arm64") == "macos-arm64"
    assert info.platform_tag("darwin", "x86_64") == "macos-x86_64"
    assert info.platform_tag("linux", "aarch64") == "linux-arm64"
    (tmp_path / "liyuan_desktop").mkdir()
    (tmp_path / "liyuan_desktop" / "__init__.py").write_text('__version__ = "1.2.3"\n', encoding="utf-8")
    assert info.write(tmp_path) == "1.2.3"
    ns: dict = {}
    exec((tmp_path / "liyuan_desktop" / "_build_info.py").read_text(encoding="utf-8"), ns)
    assert ns["VERSION"] == "1.2.3" and ns["COMMIT"] and ns["PLATFORM"].count("-") == 1


def test_the_windows_installer_is_per_user_and_keeps_the_chats():
    iss = (PKG / "windows" / "liyuan.iss").read_text(encoding="utf-8")
    assert "PrivilegesRequired=lowest" in iss and r"DefaultDirName={localappdata}\Programs\Liyuan" in iss
    assert r'Filename: "{app}\liyuan.exe"' in iss
    assert "liyuan\\" not in iss.split("[InstallDelete]", 1)[1].split("[Icons]", 1)[0].replace("{app}", "")
    assert "UninstallDelete" not in iss  # the data folder (%LOCALAPPDATA%\liyuan) is never removed
    for define in ("AppVersion", "SourceDir", "IconFile", "OutputDir"):
        assert f"#ifndef {define}" in iss


def test_the_dmg_script_is_valid_shell_and_refuses_off_macos(tmp_path):
    script = PKG / "macos" / "make_dmg.sh"
    assert subprocess.run(["bash", "-n", str(script)], timeout=30).returncode == 0
    app = tmp_path / "梨园.app" / "Contents" / "MacOS"
    app.mkdir(parents=True)
    r = subprocess.run(["bash", str(script), str(app.parent.parent), str(tmp_path / "x.dmg")], capture_output=True,
                       text=True, timeout=30)
    if shutil.which("hdiutil") is None:
        assert r.returncode == 2 and "hdiutil" in r.stderr
