#include "TokenCommands.h"

#include "CliContext.h"
#include "ContractJson.h"
#include "Identifiers.h"
#include "auth/AccessToken.h"
#include "store/AccessTokenStore.h"

#include <QCommandLineParser>
#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// The single NAME argument of `token add` / `token revoke`, checked.
Result<QString> nameArgument(const QStringList &args, const QString &synopsis)
{
    if (args.size() != 1)
        return fail(ErrorCode::InvalidArgument, u"name: expected exactly one token name (usage: %1)"_s.arg(synopsis),
                    u"name"_s);
    if (auto r = checkTokenName(args.first()); !r)
        return std::unexpected(r.error());
    return args.first();
}

/// The book's token table (reads and writes of the book only: no redis-server is started).
Result<AccessTokenStore> tokenStore(CliContext &ctx)
{
    auto engine = ctx.engine(GateNeed::BookIsEnough);
    if (!engine)
        return std::unexpected(engine.error());
    return AccessTokenStore((*engine)->database());
}

/// `token add NAME --scope reserve,pay`: a new bearer token for flashstock-server. The secret
/// is printed once (stdout) and stored only as its SHA-256.
struct TokenAdd final : Command {
    TokenAdd()
        : Command({{u"token"_s, u"add"_s}, u"token add NAME --scope reserve,pay,read"_s,
                   u"add a bearer token for flashstock-server (its secret is printed once, stored hashed)"_s,
                   {{u"scope"_s, u"What it may do: reserve (reservations; release and read the orders it "
                                 u"created), pay (confirm any order), read (read any order or SKU, /metrics), "
                                 u"operate (release and read any order); comma-separated."_s,
                     u"S,..."_s}}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput TokenAdd::execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args)
{
    auto name = nameArgument(args, spec().synopsis);
    if (!name)
        return errorOutput(name.error());
    if (!parser.isSet(u"scope"_s))
        return errorOutput({ErrorCode::InvalidArgument,
                            u"scope: --scope S,... is required (%1)"_s.arg(everyAccessScopeText()),
                            u"scope"_s});
    auto scopes = parseAccessScopes(parser.value(u"scope"_s));
    if (!scopes)
        return errorOutput(scopes.error());
    auto store = tokenStore(ctx);
    if (!store)
        return errorOutput(store.error());
    const QString secret = newAccessSecret();
    auto added = store->add(*name, *scopes, accessSecretHash(secret.toLatin1()), ctx.profile.operatorName);
    if (!added)
        return errorOutput(added.error());
    CommandOutput out;
    out.json = {{u"name"_s, *name}, {u"token"_s, secret},
                {u"scopes"_s, QJsonArray::fromStringList(accessScopeNames(*scopes))}};
    out.text = u"%1\n"_s.arg(secret);
    ctx.err << u"token %1 added (scopes %2); the line above is its secret, shown this once: the book keeps only "
               u"its hash\n"_s.arg(*name, accessScopesText(*scopes));
    return out;
}

/// `token list`: every token's name, scopes and state; never a secret.
struct TokenList final : Command {
    TokenList()
        : Command({{u"token"_s, u"list"_s}, u"token list"_s,
                   u"list flashstock-server's bearer tokens (names, scopes, state; never a secret)"_s, {}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput TokenList::execute(CliContext &ctx, const QCommandLineParser &, const QStringList &args)
{
    if (auto r = noPositional(args); !r)
        return errorOutput(r.error());
    auto store = tokenStore(ctx);
    if (!store)
        return errorOutput(store.error());
    auto tokens = store->list();
    if (!tokens)
        return errorOutput(tokens.error());
    QJsonArray rows;
    QString text = tokens->isEmpty() ? u"(no tokens; add one with: flashstock-cli token add NAME --scope reserve)\n"_s
                                     : u"%1  %2  %3  %4\n"_s.arg(u"name"_s, -24).arg(u"scopes"_s, -18)
                                           .arg(u"state"_s, -8).arg(u"added (UTC) by"_s);
    for (const AccessToken &t : std::as_const(*tokens)) {
        const bool revoked = t.revokedAtMs > 0;
        rows.append(QJsonObject{{u"name"_s, t.name},
                                {u"scopes"_s, QJsonArray::fromStringList(accessScopeNames(t.scopes))},
                                {u"state"_s, revoked ? u"revoked"_s : u"valid"_s},
                                {u"created_at"_s, isoTime(t.createdAtMs)},
                                {u"created_by"_s, t.createdBy},
                                {u"revoked_at"_s, revoked ? QJsonValue(isoTime(t.revokedAtMs)) : QJsonValue()},
                                {u"revoked_by"_s, revoked ? QJsonValue(t.revokedBy) : QJsonValue()}});
        text += u"%1  %2  %3  %4 %5\n"_s.arg(t.name, -24).arg(accessScopesText(t.scopes), -18)
                    .arg(revoked ? u"revoked"_s : u"valid"_s, -8).arg(isoTime(t.createdAtMs), t.createdBy);
    }
    CommandOutput out;
    out.json = {{u"tokens"_s, rows}};
    out.text = text;
    return out;
}

/// `token revoke NAME`: the token stops working; running servers refuse it within 5 s.
struct TokenRevoke final : Command {
    TokenRevoke()
        : Command({{u"token"_s, u"revoke"_s}, u"token revoke NAME"_s,
                   u"revoke a bearer token (running servers refuse it within 5 s)"_s, {}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput TokenRevoke::execute(CliContext &ctx, const QCommandLineParser &, const QStringList &args)
{
    auto name = nameArgument(args, spec().synopsis);
    if (!name)
        return errorOutput(name.error());
    auto store = tokenStore(ctx);
    if (!store)
        return errorOutput(store.error());
    auto revoked = store->revoke(*name, ctx.profile.operatorName);
    if (!revoked)
        return errorOutput(revoked.error());
    CommandOutput out;
    out.json = {{u"name"_s, *name}, {u"revoked"_s, true}, {u"already_revoked"_s, !*revoked}};
    out.text = *revoked ? u"token %1 revoked (running servers refuse it within 5 s)\n"_s.arg(*name)
                        : u"token %1 was revoked before\n"_s.arg(*name);
    return out;
}

} // namespace

Commands tokenCommands()
{
    return makeCommands<TokenAdd, TokenList, TokenRevoke>();
}

} // namespace flashstock
