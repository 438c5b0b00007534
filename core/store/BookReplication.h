#pragma once

#include "Result.h"

#include <QList>
#include <QString>

#include <optional>

namespace flashstock {

class Database;

/// What the book's primary says about its replication right now (PostgreSQL streaming
/// replication), read on the session's server, which the book URL makes the primary.
struct BookReplication {
    /// How commits stand, as a word for logs, metrics and JSON:
    /// `synchronous`    a commit waits for every standby synchronous_standby_names asks for,
    ///                  and that many stream as synchronous (or quorum) standbys now;
    /// `writing_alone`  the book is replicated (the URL names several servers, or standbys
    ///                  are connected) but a commit waits for no standby: one copy;
    /// `commits_waiting` standbys are asked for and fewer stream: commits wait until one does;
    /// `unknown`        the book's role may not read the standbys' states (grant pg_monitor);
    /// `single`         one server, no standby asked for or connected (a plain book).
    enum class State { Synchronous, WritingAlone, CommitsWaiting, Unknown, Single };

    QString primary;          ///< `host:port` of the session's server as the book URL names it (else its address); empty over a unix socket
    int primaryNode = 0;      ///< 1-based position of that server among the book URL's hosts; 0 when none matches
    int nodes = 1;            ///< servers the book URL names
    int standbysRequired = 0; ///< standbys a commit waits for (synchronous_standby_names' count); 0: none asked for
    bool commitsWait = true;  ///< synchronous_commit lets a commit wait for standbys (on, remote_write, remote_apply)
    int standbys = 0;         ///< standbys connected now (pg_stat_replication rows)
    int synchronousStandbys = -1; ///< of those, streaming as synchronous or quorum standbys; -1: not readable

    State state() const;
    /// A commit acknowledged now has a copy on a standby.
    bool synchronous() const { return state() == State::Synchronous; }
    /// A state an operator should hear of: writing alone, or commits waiting for a standby.
    bool warns() const { return state() == State::WritingAlone || state() == State::CommitsWaiting; }
    /// The state as its word (`synchronous`, `writing_alone`, ...).
    QString stateName() const { return stateName(state()); }
    static QString stateName(State state);
    /// Every state, in the order above.
    static QList<State> states();
    /// One line for people: `primary 127.0.0.1:5433 (node 2 of 3), commits synchronous (1 of 2 standbys)`.
    QString describe() const;
};

/// The standbys a commit waits for under synchronous_standby_names `names`: n of `ANY n (...)`,
/// `FIRST n (...)` or `n (...)`, 1 for a bare list of names (or `*`), 0 when empty.
int synchronousStandbysAskedFor(const QString &names);

/// Reads the replication of the book `db` is open on: one statement on its session's server.
/// nullopt for a SQLite book (no replication). Errors as Database::exec (Unavailable when
/// the server is away). Blocking; the Database's thread.
[[nodiscard]] Result<std::optional<BookReplication>> readBookReplication(Database &db);

} // namespace flashstock
