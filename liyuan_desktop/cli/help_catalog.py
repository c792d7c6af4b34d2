"""The ``liyuan`` command's help texts (argparse ``help``/``description``) in both languages (issue 32): keys
``cli.help.*`` added to the one catalog (``core/messages.CATALOG``) when the CLI builds its parser, rendered in the
chosen language (``--lang``, ``LIYUAN_LANG``, the settings, the system locale) by ``cli.common.text``."""

from __future__ import annotations

from ..core.messages import CATALOG

HELP: dict[str, dict[str, str]] = {
    "cli.help.liyuan": {"zh": "梨园 Liyuan Desktop — 角色扮演与长篇写作",
                        "en": "Liyuan Desktop — role-play and long-form writing"},
    "cli.help.liyuan_env": {"zh": "不带子命令时打开窗口。语言：--lang zh|en 或环境变量 LIYUAN_LANG（只管这一次运行）；"
                                  "都没有时用设置里的语言，首次启动跟随系统区域设置。数据文件夹：LIYUAN_HOME。",
                            "en": "Without a subcommand the window opens. Language: --lang zh|en or the environment "
                                  "variable LIYUAN_LANG (this run only); without either, the language in Settings, and "
                                  "on a first start the system locale's. Data folder: LIYUAN_HOME."},
    "cli.help.lang": {"zh": "这次运行的语言（窗口与终端命令）：zh 中文，en 英文；也可设 LIYUAN_LANG",
                      "en": "the language of this run (window and terminal commands): zh Chinese, en English; "
                            "LIYUAN_LANG does the same"},
}

CATALOG.update(HELP)
