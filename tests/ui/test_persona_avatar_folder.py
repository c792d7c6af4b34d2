"""A persona's avatar is found in the folder the SillyTavern import puts it in (``core.paths.home_folder
("persona_avatars")``: ``人设头像/`` in a Chinese-layout data folder, ``persona-avatars/`` in an English one), not only
in ``头像/`` / ``avatars/``: the import keeps the bare file name in ``Persona.avatar``."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QImage

from liyuan_desktop.core.cards.personas import Persona
from liyuan_desktop.core.paths import home, home_folder, set_reader_language
from liyuan_desktop.ui.frames.avatars import default_avatar, persona_avatar


def _png(colour) -> bytes:
    img = QImage(8, 8, QImage.Format.Format_ARGB32)
    img.fill(colour)
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    img.save(buf, "PNG")
    return bytes(data.data())


@pytest.mark.parametrize("lang, folder", [("zh", "人设头像"), ("en", "persona-avatars")])
def test_a_persona_avatar_in_the_import_folder_is_shown(qtbot, lang, folder):
    set_reader_language(lang)
    target = home_folder("persona_avatars")
    assert target == home() / folder
    target.mkdir(parents=True)
    (target / "user1.png").write_bytes(_png(Qt.GlobalColor.red))
    got = persona_avatar(Persona(id="p1", name="Traveller", avatar="user1.png"), "Traveller")
    assert got != default_avatar("Traveller")
    assert QImage(got).pixelColor(got.width() // 2, got.height() // 2).red() > 200
