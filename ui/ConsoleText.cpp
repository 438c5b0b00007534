#include "ConsoleText.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QStringList>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("ConsoleText", text);
}

} // namespace

QString ConsoleText::utcTime(qint64 ms, bool seconds)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC)
               .toString(seconds ? u"yyyy-MM-dd HH:mm:ss"_s : u"yyyy-MM-dd HH:mm"_s)
        + u" UTC"_s;
}

QString ConsoleText::isoUtc(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(Qt::ISODateWithMs);
}

QString ConsoleText::localHint(qint64 ms)
{
    const QDateTime local = QDateTime::fromMSecsSinceEpoch(ms);
    const int offset = local.offsetFromUtc();
    const QString zone = u"UTC%1%2:%3"_s.arg(offset < 0 ? u"-"_s : u"+"_s)
                             .arg(qAbs(offset) / 3600, 2, 10, QChar(u'0'))
                             .arg(qAbs(offset) % 3600 / 60, 2, 10, QChar(u'0'));
    return tr("Local time: %1 (%2)").arg(local.toString(u"yyyy-MM-dd HH:mm:ss"_s), zone);
}

QString ConsoleText::duration(qint64 ms)
{
    const qint64 s = qMax<qint64>(0, ms / 1000);
    if (s < 60)
        return tr("%1 s").arg(s);
    if (s < 3600)
        return s % 60 ? tr("%1 min %2 s").arg(s / 60).arg(s % 60) : tr("%1 min").arg(s / 60);
    return (s / 60) % 60 ? tr("%1 h %2 min").arg(s / 3600).arg((s / 60) % 60) : tr("%1 h").arg(s / 3600);
}

QString ConsoleText::roundTrip(qint64 us)
{
    return us < 1000 ? tr("%1 µs").arg(us) : tr("%1 ms").arg(double(us) / 1000.0, 0, 'f', 1);
}

QString ConsoleText::badge(const QString &color, const QString &text)
{
    return u"<span style=\"color:%1\">●</span> %2"_s.arg(color, text.toHtmlEscaped());
}

QString ConsoleText::saleState(const Sale &sale, qint64 nowMs)
{
    QStringList parts{saleStatusName(sale.status)};
    if (sale.bookOnly)
        parts << tr("book-only");
    if (sale.status == SaleStatus::Open || sale.status == SaleStatus::Scheduled) {
        if (sale.startMs && nowMs < sale.startMs)
            parts << tr("starts %1").arg(utcTime(sale.startMs, false));
        else if (sale.endMs && nowMs >= sale.endMs)
            parts << tr("window ended %1").arg(utcTime(sale.endMs, false));
    }
    return parts.join(u" · "_s);
}

} // namespace flashstock
