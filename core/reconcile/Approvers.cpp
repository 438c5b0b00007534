#include "reconcile/Approvers.h"

#include <QDir>
#include <QSettings>
#include <QSysInfo>
#include <QVariant>

#include <pwd.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace flashstock {

QStringList seedApprovers(const QString &dataDir)
{
    QSettings ini(QDir(dataDir).absoluteFilePath(u"flashstock.ini"_s), QSettings::IniFormat);
    const QVariant v = ini.value(u"approval/approvers"_s);
    const QStringList raw = v.typeId() == QMetaType::QStringList ? v.toStringList() : v.toString().split(u',');
    QStringList out;
    for (const QString &name : raw)
        if (!name.trimmed().isEmpty())
            out << name.trimmed();
    return out;
}

DecisionOrigin decisionOrigin()
{
    DecisionOrigin out;
    const uid_t uid = geteuid();
    if (const passwd *pw = getpwuid(uid); pw && pw->pw_name)
        out.osUser = QString::fromLocal8Bit(pw->pw_name);
    else
        out.osUser = u"uid %1"_s.arg(uid);
    out.host = QSysInfo::machineHostName();
    return out;
}

DecisionBy decisionByThisProcess(const QString &operatorName)
{
    return DecisionBy{operatorName, decisionOrigin()};
}

} // namespace flashstock
