#pragma once

#include "Result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QFlags>
#include <QList>
#include <QString>
#include <QStringList>

namespace flashstock {

/// What a server bearer token may do (DESIGN.md, headless service): `reserve`
/// (reservations, and release and GET of the orders it created; GET of SKUs), `pay` (confirm
/// any order), `read` (GET of any order or SKU, /metrics), `operate` (a person running the
/// sale: release and GET of any order, GET of SKUs).
enum class AccessScope : quint8 {
    Reserve = 0x1,
    Pay = 0x2,
    Read = 0x4,
    Operate = 0x8,
};
Q_DECLARE_FLAGS(AccessScopes, AccessScope)
Q_DECLARE_OPERATORS_FOR_FLAGS(AccessScopes)

/// `reserve,pay,read,operate` order, comma-separated (what `token list` prints and the book stores).
QString accessScopesText(AccessScopes scopes);
/// The names of `scopes`, in that order.
QStringList accessScopeNames(AccessScopes scopes);
/// Every scope's name, for messages: `reserve, pay, read, operate`.
QString everyAccessScopeText();
/// Parses `reserve,pay` (any order, no repeats, at least one). InvalidArgument naming `field`
/// and the unknown word.
[[nodiscard]] Result<AccessScopes> parseAccessScopes(const QString &text, const QString &field = QStringLiteral("scope"));

/// A server bearer token as the book keeps it: its name, scopes and the SHA-256 of its
/// secret (never the secret itself).
struct AccessToken {
    QString name;          ///< 1..64 of [A-Za-z0-9._-] (Identifiers: checkTokenName)
    AccessScopes scopes;
    QByteArray secretHash; ///< lower-case hex SHA-256 of the secret
    qint64 createdAtMs = 0;
    QString createdBy;     ///< the operator who added it
    qint64 revokedAtMs = 0; ///< 0 while the token is valid
    QString revokedBy;
};

/// The secret of a new token: `fs_` and 43 characters of base64url (32 bytes from the
/// system's random source). Any thread.
QString newAccessSecret();
/// Lower-case hex SHA-256 of a presented secret, as the book stores it.
QByteArray accessSecretHash(QByteArrayView secret);
/// Compares two byte strings in time that depends only on their lengths (never on where
/// they first differ), so a timing probe learns nothing about a stored hash.
bool constantTimeEquals(QByteArrayView a, QByteArrayView b);

/// The valid tokens one server checks requests against: a snapshot of the book's, replaced
/// whole when refreshed. A plain value: read it from any thread once published.
class AccessTokenSet {
public:
    AccessTokenSet() = default;
    explicit AccessTokenSet(QList<AccessToken> tokens) : m_tokens(std::move(tokens)) {}

    /// The token whose secret is `presented`, or nullptr. Hashes the secret and compares
    /// the hash with every token's in constant time (all of them, no early exit).
    const AccessToken *find(QByteArrayView presented) const;
    qsizetype size() const { return m_tokens.size(); }

private:
    QList<AccessToken> m_tokens;
};

} // namespace flashstock
