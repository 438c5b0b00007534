#include "auth/AccessToken.h"

#include "Identifiers.h"

#include <QCryptographicHash>
#include <QRandomGenerator>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

struct ScopeName {
    AccessScope scope;
    const char *name;
};
constexpr ScopeName kScopes[] = {{AccessScope::Reserve, "reserve"}, {AccessScope::Pay, "pay"},
                                 {AccessScope::Read, "read"}, {AccessScope::Operate, "operate"}};

} // namespace

QStringList accessScopeNames(AccessScopes scopes)
{
    QStringList names;
    for (const ScopeName &s : kScopes)
        if (scopes.testFlag(s.scope))
            names << QString::fromLatin1(s.name);
    return names;
}

QString everyAccessScopeText()
{
    QStringList names;
    for (const ScopeName &s : kScopes)
        names << QString::fromLatin1(s.name);
    return names.join(u", "_s);
}

QString accessScopesText(AccessScopes scopes)
{
    return accessScopeNames(scopes).join(u',');
}

Result<AccessScopes> parseAccessScopes(const QString &text, const QString &field)
{
    AccessScopes out;
    const QStringList words = text.split(u',', Qt::KeepEmptyParts);
    for (const QString &raw : words) {
        const QString word = raw.trimmed();
        const ScopeName *found = nullptr;
        for (const ScopeName &s : kScopes)
            if (word == QLatin1String(s.name))
                found = &s;
        if (!found)
            return fail(ErrorCode::InvalidArgument,
                        u"%1: %2 is not a scope (%3)"_s.arg(field, quoteForMessage(word), everyAccessScopeText()),
                        field);
        if (out.testFlag(found->scope))
            return fail(ErrorCode::InvalidArgument, u"%1: %2 is given twice"_s.arg(field, word), field);
        out |= found->scope;
    }
    return out;
}

QString newAccessSecret()
{
    QByteArray bytes(32, Qt::Uninitialized);
    QRandomGenerator::system()->generate(bytes.begin(), bytes.end());
    return u"fs_"_s
        + QString::fromLatin1(bytes.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

QByteArray accessSecretHash(QByteArrayView secret)
{
    return QCryptographicHash::hash(secret, QCryptographicHash::Sha256).toHex();
}

bool constantTimeEquals(QByteArrayView a, QByteArrayView b)
{
    if (a.size() != b.size())
        return false;
    unsigned char diff = 0;
    for (qsizetype i = 0; i < a.size(); ++i)
        diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

const AccessToken *AccessTokenSet::find(QByteArrayView presented) const
{
    const QByteArray hash = accessSecretHash(presented);
    const AccessToken *match = nullptr;
    for (const AccessToken &t : m_tokens)
        if (constantTimeEquals(hash, t.secretHash))
            match = &t;
    return match;
}

} // namespace flashstock
