"""The UI tests' watchdog (tests/ui/conftest.py ``_no_modal_holds_the_run``): a test left inside a modal loop is
ended by rejecting the dialog, not left to hold the run until CI's own limit."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox


def test_a_forgotten_message_box_is_rejected_and_named(qtbot, monkeypatch, request):
    monkeypatch.setenv("LIYUAN_TEST_MODAL_LIMIT_S", "3")  # over more than one tick: the same dialog is recognised
    box = QMessageBox(QMessageBox.Icon.Question, "Delete it?", "Really?",
                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
    box.setDefaultButton(QMessageBox.StandardButton.No)
    answer = box.exec()  # nobody answers: the watchdog rejects it within one tick
    assert answer != QMessageBox.StandardButton.Yes
    assert request.node.modal_closed and "Delete it?" in request.node.modal_closed[0]
    request.node.modal_closed.clear()  # seen here: the fixture must not fail this test for it
