#include "store/BookReplication.h"

#include "store/Database.h"

#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace flashstock {

int synchronousStandbysAskedFor(const QString &names)
{
    const QString text = names.trimmed();
    if (text.isEmpty())
        return 0;
    static const QRegularExpression counted(u"^(?:(?:ANY|FIRST)\\s+)?(\\d+)\\s*\\("_s,
                                            QRegularExpression::CaseInsensitiveOption);
    const QRegularExpressionMatch m = counted.match(text);
    return m.hasMatch() ? m.captured(1).toInt() : 1;
}

BookReplication::State BookReplication::state() const
{
    const bool replicated = nodes > 1 || standbysRequired > 0 || standbys > 0;
    if (!replicated)
        return State::Single;
    if (standbysRequired == 0 || !commitsWait)
        return State::WritingAlone;
    if (synchronousStandbys < 0)
        return State::Unknown;
    return synchronousStandbys >= standbysRequired ? State::Synchronous : State::CommitsWaiting;
}

QList<BookReplication::State> BookReplication::states()
{
    return {State::Synchronous, State::WritingAlone, State::CommitsWaiting, State::Unknown, State::Single};
}

QString BookReplication::stateName(State state)
{
    switch (state) {
    case State::Synchronous: return u"synchronous"_s;
    case State::WritingAlone: return u"writing_alone"_s;
    case State::CommitsWaiting: return u"commits_waiting"_s;
    case State::Unknown: return u"unknown"_s;
    case State::Single: return u"single"_s;
    }
    return {};
}

QString BookReplication::describe() const
{
    QString where = primary.isEmpty() ? u"primary over a unix socket"_s : u"primary "_s + primary;
    if (primaryNode > 0)
        where += u" (node %1 of %2)"_s.arg(primaryNode).arg(nodes);
    switch (state()) {
    case State::Synchronous:
        return u"%1, commits synchronous (%2 of %3 standbys)"_s.arg(where).arg(synchronousStandbys).arg(standbys);
    case State::WritingAlone:
        return u"%1 WRITING ALONE: commits wait for no standby (%2 connected), one copy of each"_s.arg(where).arg(
            standbys);
    case State::CommitsWaiting:
        return u"%1, commits WAITING: %2 synchronous standby(s) asked for, %3 streaming"_s.arg(where)
            .arg(standbysRequired)
            .arg(synchronousStandbys);
    case State::Unknown:
        return u"%1, commits synchronous or not is unknown: the book's role may not read pg_stat_replication "
               u"(grant it pg_monitor)"_s.arg(where);
    case State::Single: return u"%1, not replicated"_s.arg(where);
    }
    return where;
}

Result<std::optional<BookReplication>> readBookReplication(Database &db)
{
    if (db.dialect() != Dialect::Postgres)
        return std::optional<BookReplication>();
    // A role without pg_monitor (or pg_read_all_stats) sees the standbys' rows with their
    // state and sync_state NULL: counted apart, as not readable.
    auto r = db.exec(u"SELECT host(inet_server_addr()), inet_server_port(), "
                     u"current_setting('synchronous_standby_names'), current_setting('synchronous_commit'), "
                     u"(SELECT count(*) FROM pg_stat_replication), "
                     u"(SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' "
                     u"AND sync_state IN ('sync', 'quorum')), "
                     u"(SELECT count(*) FROM pg_stat_replication WHERE state IS NULL)"_s);
    if (!r)
        return std::unexpected(r.error());
    if (r->isEmpty())
        return fail(ErrorCode::Internal, u"the book's replication query returned no row"_s);
    const QVariantList &row = r->first();
    BookReplication out;
    const QList<DbHost> &hosts = db.url().hosts;
    out.nodes = int(hosts.size());
    if (!row.at(0).isNull()) {
        const QString address = row.at(0).toString();
        const int port = row.at(1).toInt();
        out.primary = (address.contains(u':') ? u"[%1]:%2"_s : u"%1:%2"_s).arg(address).arg(port);
        // The URL's own name for it: the host written as this address, else the only host on
        // this port.
        qsizetype match = -1, onPort = 0;
        for (qsizetype i = 0; i < hosts.size(); ++i) {
            if (hosts[i].port != port)
                continue;
            ++onPort;
            if (match < 0 || hosts[i].host == address)
                match = i;
        }
        if (match >= 0 && (onPort == 1 || hosts[match].host == address)) {
            out.primaryNode = int(match) + 1;
            out.primary = (hosts[match].host.contains(u':') ? u"[%1]:%2"_s : u"%1:%2"_s).arg(hosts[match].host).arg(port);
        }
    }
    out.standbysRequired = synchronousStandbysAskedFor(row.at(2).toString());
    const QString commit = row.at(3).toString();
    out.commitsWait = commit == u"on"_s || commit == u"remote_write"_s || commit == u"remote_apply"_s;
    out.standbys = row.at(4).toInt();
    out.synchronousStandbys = row.at(6).toInt() > 0 ? -1 : row.at(5).toInt();
    return std::optional<BookReplication>(out);
}

} // namespace flashstock
