"""Cropping a card's new picture (issue 26 §1, the card editor's 选择头像…): SillyTavern crops an avatar to its 2:3
portrait before it becomes the card (its croppie dialog, unless "never resize avatars" is set). Here: the picture
with a 2:3 frame the user drags and sizes (a slider), then 裁剪 (the frame's part, as PNG) or 用整张图片 (the file as
chosen — a PNG keeps all of its chunks) or 取消.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPen
from PySide6.QtWidgets import QDialog, QFileDialog, QHBoxLayout, QLabel, QPushButton, QSlider, QVBoxLayout, QWidget

from ..infra.i18n import register, tr

register({
    "crop.title": {"zh": "裁剪头像", "en": "Crop the picture"},
    "crop.hint": {"zh": "拖动方框选择头像部分（2:3 竖图，和 SillyTavern 一样）；滑块调大小。",
                  "en": "Drag the frame over the part to keep (a 2:3 portrait, as in SillyTavern); the slider sizes it."},
    "crop.size": {"zh": "大小", "en": "Size"},
    "crop.ok": {"zh": "裁剪", "en": "Crop"},
    "crop.whole": {"zh": "用整张图片", "en": "Use the whole picture"},
    "crop.cancel": {"zh": "取消", "en": "Cancel"},
})

#: The avatar's shape, width : height (SillyTavern's 400×600 avatars).
ASPECT = 2 / 3
VIEW = 460  # px: the longest side of the picture as shown


def png_bytes(img: QImage) -> bytes:
    """``img`` encoded as PNG."""
    buf = QByteArray()
    dev = QBuffer(buf)
    dev.open(QIODevice.OpenModeFlag.WriteOnly)
    img.save(dev, "PNG")  # type: ignore[call-overload]  # the stubs say bytes; PySide6 takes str
    dev.close()
    return bytes(buf.data())


def choose_image(parent: QWidget) -> Optional[str]:
    """The picture file the user picks, or None (a module function, so a test can answer)."""
    path, _ = QFileDialog.getOpenFileName(parent, tr("cardeditor.avatar.choose"), str(Path.home()),
                                          tr("cardeditor.avatar.filter"))
    return path or None


def image_png(path: str) -> bytes:
    """The picture at ``path`` as PNG bytes: a PNG as it is (its chunks travel on), anything Qt reads converted.
    ValueError when Qt cannot read it."""
    data = Path(path).read_bytes()
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return data
    img = QImage()
    if not img.loadFromData(data):
        raise ValueError(tr("cardeditor.avatar.bad", file=Path(path).name))
    return png_bytes(img)


class CropView(QWidget):
    """The picture scaled to fit :data:`VIEW` with the crop frame over it; dragging moves the frame."""

    def __init__(self, image: QImage, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.image = image
        self.scale = min(1.0, VIEW / max(1, image.width(), image.height()))
        self.shown = image.scaled(max(1, round(image.width() * self.scale)), max(1, round(image.height() * self.scale)),
                                  Qt.AspectRatioMode.IgnoreAspectRatio, Qt.TransformationMode.SmoothTransformation)
        self.setFixedSize(self.shown.size())
        self.fraction = 1.0  # the frame's size against the largest 2:3 frame that fits
        self.center = QPoint(image.width() // 2, image.height() // 2)  # in image pixels
        self._drag: Optional[QPoint] = None

    def rect_in_image(self) -> QRect:
        """The frame in image pixels: 2:3, inside the picture."""
        w_img, h_img = self.image.width(), self.image.height()
        full_w = min(w_img, h_img * ASPECT)
        w = max(1, round(full_w * self.fraction))
        h = max(1, min(h_img, round(w / ASPECT)))
        x = min(max(0, self.center.x() - w // 2), w_img - w)
        y = min(max(0, self.center.y() - h // 2), h_img - h)
        return QRect(x, y, w, h)

    def set_fraction(self, fraction: float) -> None:
        """Size the frame (0.1–1 of the largest that fits)."""
        self.fraction = min(1.0, max(0.1, fraction))
        self.update()

    def move_to(self, center: QPoint) -> None:
        """Put the frame's centre at ``center`` (image pixels; kept inside the picture)."""
        r = self.rect_in_image()
        x = min(max(r.width() // 2, center.x()), self.image.width() - r.width() // 2)
        y = min(max(r.height() // 2, center.y()), self.image.height() - r.height() // 2)
        self.center = QPoint(x, y)
        self.update()

    def paintEvent(self, _ev: Any) -> None:  # noqa: N802 - Qt API
        p = QPainter(self)
        p.drawImage(0, 0, self.shown)
        r = self.rect_in_image()
        frame = QRectF(r.x() * self.scale, r.y() * self.scale, r.width() * self.scale, r.height() * self.scale)
        shade = QColor(0, 0, 0, 120)
        full = QRectF(self.rect())
        for part in (QRectF(0, 0, full.width(), frame.top()), QRectF(0, frame.bottom(), full.width(), full.height()),
                     QRectF(0, frame.top(), frame.left(), frame.height()),
                     QRectF(frame.right(), frame.top(), full.width(), frame.height())):
            p.fillRect(part, shade)
        p.setPen(QPen(QColor("#ffffff"), 2))
        p.drawRect(frame)
        p.end()

    def mousePressEvent(self, ev: Any) -> None:  # noqa: N802 - Qt API
        self._drag = ev.position().toPoint()

    def mouseMoveEvent(self, ev: Any) -> None:  # noqa: N802 - Qt API
        if self._drag is None:
            return
        pos = ev.position().toPoint()
        d = (pos - self._drag) / self.scale
        self._drag = pos
        self.move_to(self.rect_in_image().center() + d)

    def mouseReleaseEvent(self, _ev: Any) -> None:  # noqa: N802 - Qt API
        self._drag = None


class CropDialog(QDialog):
    """裁剪 / 用整张图片 / 取消 (module doc). After ``exec``: :meth:`result_png` (None when cancelled)."""

    def __init__(self, data: bytes, image: QImage, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("avatarCrop")
        self.setWindowTitle(tr("crop.title"))
        self.setMinimumWidth(420)
        self.data = data
        self.choice = "cancel"
        lay = QVBoxLayout(self)
        hint = QLabel(tr("crop.hint"))
        hint.setWordWrap(True)
        lay.addWidget(hint)
        self.view = CropView(image)
        lay.addWidget(self.view, 0, Qt.AlignmentFlag.AlignCenter)
        row = QHBoxLayout()
        row.addWidget(QLabel(tr("crop.size")))
        self.size_slider = QSlider(Qt.Orientation.Horizontal)
        self.size_slider.setRange(10, 100)
        self.size_slider.setValue(100)
        self.size_slider.valueChanged.connect(lambda v: self.view.set_fraction(v / 100))
        row.addWidget(self.size_slider, 1)
        lay.addLayout(row)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for key, choice in (("crop.ok", "crop"), ("crop.whole", "whole"), ("crop.cancel", "cancel")):
            b = QPushButton(tr(key))
            b.setObjectName("crop_" + choice)
            b.setAutoDefault(choice == "crop")
            b.clicked.connect(lambda _c=False, c=choice: self.finish(c))
            buttons.addWidget(b)
        lay.addLayout(buttons)

    def finish(self, choice: str) -> None:
        """crop | whole | cancel."""
        self.choice = choice
        self.accept() if choice != "cancel" else self.reject()

    def result_png(self) -> Optional[bytes]:
        """The picture to use: the frame's part as PNG (crop), the file as chosen (whole), or None (cancel)."""
        if self.choice == "whole":
            return self.data
        if self.choice == "crop":
            return png_bytes(self.view.image.copy(self.view.rect_in_image()))
        return None


def ask_crop(parent: QWidget, data: bytes) -> Optional[bytes]:
    """Show :class:`CropDialog` for the picture ``data`` (PNG bytes, modal); the picture to use, or None when
    cancelled. A picture Qt cannot read is returned as it is (the engine names the problem)."""
    img = QImage()
    if not img.loadFromData(data):
        return data
    dlg = CropDialog(data, img, parent)
    dlg.exec()
    return dlg.result_png()


__all__ = ["ASPECT", "CropDialog", "CropView", "ask_crop", "choose_image", "image_png", "png_bytes"]
