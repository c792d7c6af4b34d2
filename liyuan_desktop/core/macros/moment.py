"""moment.js-style date formatting in the English locale, for the clock macros (``{{time}}``, ``{{date}}``,
``{{datetimeformat …}}``). Part of the one macro engine (:mod:`liyuan_desktop.core.macros`)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

__all__ = ["format_moment"]

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]
_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
_LONG_FORMATS = {
    "LTS": "h:mm:ss A",
    "LT": "h:mm A",
    "LLLL": "dddd, MMMM D, YYYY h:mm A",
    "LLL": "MMMM D, YYYY h:mm A",
    "LL": "MMMM D, YYYY",
    "L": "MM/DD/YYYY",
}
_MOMENT_TOKEN = re.compile(
    r"\[[^\]]*\]|LTS|LT|LLLL|LLL|LL|L|YYYY|YY|MMMM|MMM|MM|M|Do|DD|D|dddd|ddd|dd|d|HH|H|hh|h|mm|m|ss|s|A|a|ZZ|Z|X|x"
)


def _ordinal(n: int) -> str:
    if 11 <= n % 100 <= 13:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


def _offset(dt: datetime, colon: bool) -> str:
    if dt.tzinfo is None:
        dt = dt.astimezone()
    off = dt.utcoffset() or timedelta(0)
    minutes = int(off.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    minutes = abs(minutes)
    return f"{sign}{minutes // 60:02d}{':' if colon else ''}{minutes % 60:02d}"


def format_moment(dt: datetime, fmt: str) -> str:
    """Format ``dt`` with moment.js tokens in the English locale (``LT``, ``LL``, ``YYYY-MM-DD``, ``[literal]`` …).

    Supported: ``LTS LT LLLL LLL LL L YYYY YY MMMM MMM MM M Do DD D dddd ddd dd d HH H hh h mm m ss s A a ZZ Z X x``;
    any other character is copied.
    """
    def token(m: re.Match[str]) -> str:
        t = m.group(0)
        if t.startswith("["):
            return t[1:-1]
        if t in _LONG_FORMATS:
            return format_moment(dt, _LONG_FORMATS[t])
        hour12 = dt.hour % 12 or 12
        weekday = (dt.weekday() + 1) % 7  # moment: 0 = Sunday
        table = {
            "YYYY": f"{dt.year:04d}", "YY": f"{dt.year % 100:02d}",
            "MMMM": _MONTHS[dt.month - 1], "MMM": _MONTHS[dt.month - 1][:3],
            "MM": f"{dt.month:02d}", "M": str(dt.month),
            "Do": _ordinal(dt.day), "DD": f"{dt.day:02d}", "D": str(dt.day),
            "dddd": _DAYS[weekday], "ddd": _DAYS[weekday][:3], "dd": _DAYS[weekday][:2], "d": str(weekday),
            "HH": f"{dt.hour:02d}", "H": str(dt.hour), "hh": f"{hour12:02d}", "h": str(hour12),
            "mm": f"{dt.minute:02d}", "m": str(dt.minute), "ss": f"{dt.second:02d}", "s": str(dt.second),
            "A": "AM" if dt.hour < 12 else "PM", "a": "am" if dt.hour < 12 else "pm",
        }
        if t in table:
            return table[t]
        if t in ("Z", "ZZ"):
            return _offset(dt, colon=(t == "Z"))
        stamp = (dt if dt.tzinfo is not None else dt.astimezone()).timestamp()
        return str(int(stamp)) if t == "X" else str(int(stamp * 1000))

    return _MOMENT_TOKEN.sub(token, fmt)
