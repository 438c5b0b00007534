#include "BackupCommand.h"

#include "CliContext.h"
#include "store/BookBackup.h"

#include <QCommandLineParser>
#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// `backup FILE [--overwrite]`: BookBackup::write of the book the global options name.
struct Backup final : Command {
    Backup()
        : Command({{u"backup"_s}, u"backup FILE [--overwrite]"_s,
                   u"an online, consistent copy of the book of record in FILE (mode 0600), checked before it is put "
                   u"in place: SQLite by VACUUM INTO, PostgreSQL by pg_dump (custom format, for pg_restore)"_s,
                   {{u"overwrite"_s, u"Replace FILE if it exists (atomically, once the new backup passed its check)."_s}}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput Backup::execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args)
{
    if (args.size() != 1)
        return errorOutput({ErrorCode::InvalidArgument, u"file: expected exactly one FILE (usage: backup FILE)"_s,
                            u"file"_s});
    auto engine = ctx.engine(GateNeed::BookIsEnough);
    if (!engine)
        return errorOutput(engine.error());
    auto made = BookBackup((*engine)->database())
                    .write(args.first(), parser.isSet(u"overwrite"_s) ? BookBackup::Overwrite::Yes
                                                                      : BookBackup::Overwrite::No);
    if (!made)
        return errorOutput(made.error());
    CommandOutput out;
    out.json = {{u"file"_s, made->file},
                {u"book"_s, made->dialect == Dialect::Sqlite ? u"sqlite"_s : u"postgresql"_s},
                {u"tool"_s, made->tool},
                {u"bytes"_s, made->bytes},
                {u"schema_version"_s, made->schemaVersion},
                {u"tables"_s, QJsonArray::fromStringList(made->tables)},
                {u"checks"_s, QJsonArray::fromStringList(made->checks)}};
    if (made->skus >= 0) {
        out.json.insert(u"skus"_s, made->skus);
        out.json.insert(u"ledger_rows"_s, made->ledgerRows);
    }
    out.text = u"backup of the book written to %1 (%2 bytes, %3, schema %4), checked:\n"_s.arg(made->file)
                   .arg(made->bytes)
                   .arg(made->tool)
                   .arg(made->schemaVersion);
    for (const QString &check : std::as_const(made->checks))
        out.text += u"  "_s + check + u'\n';
    return out;
}

} // namespace

Commands backupCommands()
{
    return makeCommands<Backup>();
}

} // namespace flashstock
