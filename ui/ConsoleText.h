#pragma once

#include "Domain.h"

#include <QString>

namespace flashstock {

/// Times, durations and states as the console shows them, one place for every view. Every
/// time the console shows is UTC and says so (the zone of the CLI and of times given without
/// an offset, README); the local time is the tooltip. Plain functions; any thread.
class ConsoleText {
public:
    /// `2026-11-30 14:46:23 UTC` (`seconds` false: `2026-11-30 14:46 UTC`).
    static QString utcTime(qint64 ms, bool seconds = true);
    /// ISO 8601 UTC with milliseconds, as the CLI prints times (`2026-11-30T14:46:23.120Z`): for export.
    static QString isoUtc(qint64 ms);
    /// The same instant in the machine's local time with its offset, for a tooltip:
    /// `Local time: 2026-11-30 15:46:23 (UTC+01:00)`.
    static QString localHint(qint64 ms);
    /// `45 s`, `3 min 20 s`, `2 h 5 min` (rounded down to whole seconds).
    static QString duration(qint64 ms);
    /// A sale's state for people, from the book's status and window at `nowMs`: `scheduled`,
    /// `open`, `paused`, `stopped`, qualified by `book-only` and by a window that has not
    /// begun or has ended (`open · book-only · starts 2026-12-01 20:00 UTC`).
    static QString saleState(const Sale &sale, qint64 nowMs);
    /// A round trip: `180 µs`, `2.4 ms`.
    static QString roundTrip(qint64 us);
    /// Rich text: a dot in `color` (one of the colours below), then `text` (escaped).
    static QString badge(const QString &color, const QString &text);

    /// The status colours: up, degraded or waiting, down, not there.
    inline static const QString kGreen = QStringLiteral("#2e9d4b");
    inline static const QString kAmber = QStringLiteral("#d08a00");
    inline static const QString kRed = QStringLiteral("#d9534f");
    inline static const QString kGrey = QStringLiteral("#8a8a8a");
};

} // namespace flashstock
