#include "reconcile/Approvers.h"

#include <QDir>
#include <QSettings>
#include <QVariant>

using namespace Qt::StringLiterals;

namespace flashstock {

QStringList configuredApprovers(const QString &dataDir)
{
    QStringList raw;
    if (qEnvironmentVariableIsSet("FLASHSTOCK_APPROVERS")) {
        raw = qEnvironmentVariable("FLASHSTOCK_APPROVERS").split(u',');
    } else {
        QSettings ini(QDir(dataDir).absoluteFilePath(u"flashstock.ini"_s), QSettings::IniFormat);
        const QVariant v = ini.value(u"approval/approvers"_s);
        raw = v.typeId() == QMetaType::QStringList ? v.toStringList() : v.toString().split(u',');
    }
    QStringList out;
    for (const QString &name : raw)
        if (!name.trimmed().isEmpty())
            out << name.trimmed();
    return out;
}

} // namespace flashstock
