#pragma once

#include "Result.h"
#include "auth/AccessToken.h"

#include <QList>
#include <QString>

namespace flashstock {

class Database;

/// The server's bearer tokens in the book of record (table `access_tokens`), so every
/// server on one book shares them. Only hashes are stored. Thread affinity: its Database's.
class AccessTokenStore {
public:
    explicit AccessTokenStore(Database &db);

    /// Adds a token named `name` with `scopes` whose secret hashes to `secretHash`
    /// (accessSecretHash), by `operatorName`. InvalidArgument naming `name` for a bad name,
    /// a name in use (also by a revoked token), or no scope.
    [[nodiscard]] Result<AccessToken> add(const QString &name, AccessScopes scopes, const QByteArray &secretHash,
                                          const QString &operatorName);
    /// Revokes the token `name` (its row stays, with who and when). Returns false if it was
    /// revoked before. NotFound (field `name`) for an unknown name.
    [[nodiscard]] Result<bool> revoke(const QString &name, const QString &operatorName);
    /// Every token, valid and revoked, by name.
    [[nodiscard]] Result<QList<AccessToken>> list();
    /// The tokens that are valid now (what a server accepts).
    [[nodiscard]] Result<QList<AccessToken>> valid();

private:
    Result<QList<AccessToken>> select(bool validOnly);

    Database &m_db;
};

} // namespace flashstock
