"""The lock (constraints.txt, issue 25) pins every dependency pyproject.toml names, within its bounds.

.ci/run installs the README's test command through the lock (PIP_CONSTRAINT) and packaging/build.sh builds through it:
a dependency added to pyproject.toml without re-running scripts/lock.sh would be installed unpinned, and a pin
outside a bound (PySide6 6.12.0 on Python 3.11) would not install at all.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent


def _pins() -> dict[str, list[tuple[Version, Marker | None]]]:
    pins: dict[str, list[tuple[Version, Marker | None]]] = {}
    for raw in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9._-]+)==([^ ;]+)\s*(?:;\s*(.+))?", line)
        assert m, f"not a pin: {raw!r}"
        pins.setdefault(canonicalize_name(m[1]), []).append((Version(m[2]), Marker(m[3]) if m[3] else None))
    return pins


def test_every_dependency_is_pinned_within_its_bounds():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = list(project["dependencies"])
    for extra in ("test", "build"):
        reqs += project["optional-dependencies"][extra]
    pins = _pins()
    problems = []
    for text in reqs:
        req = Requirement(text)
        name = canonicalize_name(req.name)
        if name not in pins:
            problems.append(f"{req.name}: no pin (run scripts/lock.sh)")
            continue
        for python in ("3.11", "3.12", "3.13"):
            for platform in ("linux", "win32", "darwin"):
                env = {"python_version": python, "python_full_version": python + ".0", "sys_platform": platform,
                       "platform_system": {"linux": "Linux", "win32": "Windows", "darwin": "Darwin"}[platform],
                       "platform_python_implementation": "CPython", "implementation_name": "cpython"}
                if req.marker is not None and not req.marker.evaluate(env):
                    continue
                chosen = [v for v, marker in pins[name] if marker is None or marker.evaluate(env)]
                if len(chosen) != 1:
                    problems.append(f"{req.name}: {len(chosen)} pins apply on Python {python} {platform}")
                elif not req.specifier.contains(chosen[0], prereleases=True):
                    problems.append(f"{req.name}: pin {chosen[0]} outside {req.specifier} on Python {python}")
    assert not problems, "\n".join(problems)


def test_ci_and_packaging_install_through_the_lock():
    assert "PIP_CONSTRAINT" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "constraints.txt" in (ROOT / "packaging" / "build.sh").read_text(encoding="utf-8")
