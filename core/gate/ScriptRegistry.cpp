#include "gate/ScriptRegistry.h"

#include <QCryptographicHash>
#include <QFile>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

// Q_INIT_RESOURCE must be used outside any namespace. The resource object file lives in a
// static library, so without this reference the linker could drop it.
static void initLuaResources() { Q_INIT_RESOURCE(lua); }

namespace flashstock {

namespace {

struct ScriptFile {
    ScriptId id;
    const char16_t *fileName;
};

constexpr ScriptFile kFiles[] = {
    {ScriptId::Reserve, u"reserve-2.lua"},       {ScriptId::Settle, u"settle-2.lua"},
    {ScriptId::MarkSold, u"mark-sold-3.lua"},    {ScriptId::Release, u"release-3.lua"},
    {ScriptId::Load, u"load-3.lua"},             {ScriptId::Adjust, u"adjust-1.lua"},
    {ScriptId::SetSale, u"set-sale-1.lua"},      {ScriptId::ClearSale, u"clear-sale-1.lua"},
    {ScriptId::SetPaused, u"set-paused-1.lua"},  {ScriptId::OpenTokens, u"open-tokens-2.lua"},
    {ScriptId::SetUsers, u"set-users-1.lua"},
};

/// The embedded file :/lua/`name`; a missing one is a build error, so it aborts.
QByteArray readEmbedded(const QString &name)
{
    QFile file(u":/lua/"_s + name);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("flashstock: Lua script :/lua/%s is not embedded (resources/lua.qrc)", qPrintable(name));
    return file.readAll();
}

/// `body` with every line `--- @include NAME` replaced by the lines of lua/include/NAME (one
/// level: an include holds functions only), so shared snippets are written once and the SHA1
/// covers what Redis runs. `scripts/model-steps.sh --expand` makes the same text (tst_gate
/// compares them).
QByteArray expandIncludes(const QByteArray &body)
{
    static constexpr QByteArrayView kDirective = "--- @include ";
    QByteArray out;
    for (const QByteArray &line : body.split('\n')) {
        if (line.startsWith(kDirective)) {
            out += readEmbedded(u"include/"_s + QString::fromUtf8(line.mid(kDirective.size()).trimmed()));
            if (!out.endsWith('\n'))
                out += '\n';
        } else {
            out += line + '\n';
        }
    }
    out.chop(1); // split() gave one more piece than there were newlines
    return out;
}

} // namespace

ScriptRegistry::ScriptRegistry()
{
    initLuaResources();
    static const QRegularExpression numKeysRe(u"-(\\d+)\\.lua$"_s);
    for (const ScriptFile &f : kFiles) {
        LuaScript s;
        s.id = f.id;
        s.fileName = QString::fromUtf16(f.fileName);
        s.body = expandIncludes(readEmbedded(s.fileName));
        s.numKeys = numKeysRe.match(s.fileName).captured(1).toInt();
        s.sha1 = QCryptographicHash::hash(s.body, QCryptographicHash::Sha1).toHex();
        m_scripts.append(s);
    }
}

const ScriptRegistry &ScriptRegistry::instance()
{
    static const ScriptRegistry registry; // thread-safe initialisation (C++11 statics)
    return registry;
}

const LuaScript &ScriptRegistry::script(ScriptId id) const
{
    return m_scripts.at(qsizetype(id));
}

QList<QByteArray> ScriptRegistry::evalshaArgv(ScriptId id, const QList<QByteArray> &keys,
                                              const QList<QByteArray> &args) const
{
    const LuaScript &s = script(id);
    Q_ASSERT_X(keys.size() == s.numKeys, "ScriptRegistry", "KEYS count differs from file name");
    QList<QByteArray> argv;
    argv.reserve(3 + keys.size() + args.size());
    argv << QByteArrayLiteral("EVALSHA") << s.sha1 << QByteArray::number(s.numKeys);
    argv << keys << args;
    return argv;
}

QList<QByteArray> ScriptRegistry::asEval(ScriptId id, QList<QByteArray> evalsha) const
{
    evalsha[0] = QByteArrayLiteral("EVAL");
    evalsha[1] = script(id).body;
    return evalsha;
}

Result<void> ScriptRegistry::loadAll(RedisConnection &conn) const
{
    QList<QList<QByteArray>> cmds;
    for (const LuaScript &s : m_scripts)
        cmds.append({QByteArrayLiteral("SCRIPT"), QByteArrayLiteral("LOAD"), s.body});
    auto replies = conn.pipeline(cmds);
    if (!replies)
        return std::unexpected(replies.error());
    for (qsizetype i = 0; i < m_scripts.size(); ++i) {
        const RedisValue &r = replies->at(i);
        if (r.isError() || r.str != m_scripts[i].sha1)
            return fail(ErrorCode::Internal,
                        u"SCRIPT LOAD of %1 answered %2, expected SHA1 %3"_s.arg(
                            m_scripts[i].fileName, QString::fromUtf8(r.str),
                            QString::fromLatin1(m_scripts[i].sha1)));
    }
    return {};
}

Result<bool> ScriptRegistry::allLoaded(RedisConnection &conn) const
{
    QList<QByteArray> argv{QByteArrayLiteral("SCRIPT"), QByteArrayLiteral("EXISTS")};
    for (const LuaScript &s : m_scripts)
        argv.append(s.sha1);
    auto reply = conn.command(argv);
    if (!reply)
        return std::unexpected(reply.error());
    if (reply->type != RedisValue::Type::Array || reply->elements.size() != m_scripts.size())
        return fail(ErrorCode::Internal,
                    u"SCRIPT EXISTS answered %1"_s.arg(QString::fromUtf8(reply->str)));
    for (const RedisValue &e : reply->elements)
        if (e.integer != 1)
            return false;
    return true;
}

} // namespace flashstock
