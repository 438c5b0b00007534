#include "open/SecretFile.h"

#include <QFile>

#include <sys/stat.h>

using namespace Qt::StringLiterals;

namespace flashstock {

Result<QString> readSecretFile(const QString &path, const QString &field)
{
    auto refuse = [&](const QString &why) {
        return fail(ErrorCode::InvalidArgument, u"%1: %2 %3"_s.arg(field, path, why), field);
    };
    struct stat st {};
    if (path.isEmpty())
        return refuse(u"(an empty path) names no file"_s);
    if (::stat(QFile::encodeName(path).constData(), &st) != 0)
        return refuse(u"does not exist or cannot be looked at"_s);
    if (!S_ISREG(st.st_mode))
        return refuse(u"is not a regular file"_s);
    if (st.st_mode & (S_IRWXG | S_IRWXO))
        return refuse(u"can be read or changed by group or others (mode %1): chmod 600 it"_s.arg(
            st.st_mode & 07777, 4, 8, QChar(u'0')));
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Unavailable, u"%1: cannot read %2: %3"_s.arg(field, path, f.errorString()), field);
    QByteArray line = f.readLine(64 * 1024);
    while (line.endsWith('\n') || line.endsWith('\r'))
        line.chop(1);
    if (line.isEmpty())
        return refuse(u"holds no secret (its first line is empty)"_s);
    return QString::fromUtf8(line);
}

Result<QString> secretFromFileOrEnvironment(const QString &file, const QString &field, const char *envVar)
{
    if (!file.isEmpty())
        return readSecretFile(file, field);
    return qEnvironmentVariable(envVar);
}

} // namespace flashstock
