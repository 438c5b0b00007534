#include "store/AccessTokenStore.h"

#include "Identifiers.h"
#include "store/Database.h"

using namespace Qt::StringLiterals;

namespace flashstock {

AccessTokenStore::AccessTokenStore(Database &db)
    : m_db(db)
{
}

Result<AccessToken> AccessTokenStore::add(const QString &name, AccessScopes scopes, const QByteArray &secretHash,
                                          const QString &operatorName)
{
    if (auto r = checkTokenName(name); !r)
        return std::unexpected(r.error());
    if (!scopes)
        return fail(ErrorCode::InvalidArgument,
                    u"scope: a token needs at least one scope (%1)"_s.arg(everyAccessScopeText()),
                    u"scope"_s);
    auto rows = m_db.exec(u"INSERT INTO access_tokens (name, secret_sha256, scopes, created_at, created_by) "
                          u"VALUES (?, ?, ?, %1, ?) ON CONFLICT (name) DO NOTHING RETURNING created_at"_s.arg(
                              m_db.nowMsExpr()),
                          {name, QString::fromLatin1(secretHash), accessScopesText(scopes), operatorName});
    if (!rows)
        return std::unexpected(rows.error());
    if (rows->isEmpty())
        return fail(ErrorCode::InvalidArgument,
                    u"name: a token named %1 exists or existed (revoked names are not given out again)"_s.arg(
                        quoteForMessage(name)),
                    u"name"_s);
    AccessToken t;
    t.name = name;
    t.scopes = scopes;
    t.secretHash = secretHash;
    t.createdAtMs = rows->first().at(0).toLongLong();
    t.createdBy = operatorName;
    return t;
}

Result<bool> AccessTokenStore::revoke(const QString &name, const QString &operatorName)
{
    if (auto r = checkTokenName(name); !r)
        return std::unexpected(r.error());
    auto updated = m_db.exec(u"UPDATE access_tokens SET revoked_at = %1, revoked_by = ? "
                             u"WHERE name = ? AND revoked_at IS NULL RETURNING name"_s.arg(m_db.nowMsExpr()),
                             {operatorName, name});
    if (!updated)
        return std::unexpected(updated.error());
    if (!updated->isEmpty())
        return true;
    auto known = m_db.exec(u"SELECT name FROM access_tokens WHERE name = ?"_s, {name});
    if (!known)
        return std::unexpected(known.error());
    if (known->isEmpty())
        return fail(ErrorCode::NotFound, u"name: no token is named %1"_s.arg(quoteForMessage(name)), u"name"_s);
    return false;
}

Result<QList<AccessToken>> AccessTokenStore::list()
{
    return select(false);
}

Result<QList<AccessToken>> AccessTokenStore::valid()
{
    return select(true);
}

Result<QList<AccessToken>> AccessTokenStore::select(bool validOnly)
{
    auto rows = m_db.exec(u"SELECT name, scopes, secret_sha256, created_at, created_by, revoked_at, revoked_by "
                          u"FROM access_tokens %1 ORDER BY name"_s.arg(validOnly ? u"WHERE revoked_at IS NULL"_s
                                                                                 : QString()));
    if (!rows)
        return std::unexpected(rows.error());
    QList<AccessToken> out;
    out.reserve(rows->rows.size());
    for (const QVariantList &row : rows->rows) {
        AccessToken t;
        t.name = row.at(0).toString();
        // A scope this binary does not know (a newer release wrote it) grants nothing here.
        t.scopes = parseAccessScopes(row.at(1).toString()).value_or(AccessScopes());
        t.secretHash = row.at(2).toString().toLatin1();
        t.createdAtMs = row.at(3).toLongLong();
        t.createdBy = row.at(4).toString();
        t.revokedAtMs = row.at(5).toLongLong();
        t.revokedBy = row.at(6).toString();
        out << t;
    }
    return out;
}

} // namespace flashstock
