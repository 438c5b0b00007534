#include "BuildInfo.h"

#include "flashstock_build_info.h"

using namespace Qt::StringLiterals;

namespace flashstock {

QString buildVersion()
{
    return QStringLiteral(FLASHSTOCK_VERSION);
}

QString buildRevision()
{
    return QStringLiteral(FLASHSTOCK_REVISION);
}

QString versionLine()
{
    return u"%1 (git %2)"_s.arg(buildVersion(), buildRevision());
}

} // namespace flashstock
