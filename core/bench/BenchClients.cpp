#include "bench/BenchClients.h"

#include "store/BookSql.h"
#include "store/Database.h"
#include "bench/NaiveDeduct.h"

#include <QAtomicInteger>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>

#include <optional>
#include <utility>

using namespace Qt::StringLiterals;

namespace flashstock {

EngineOptions benchEngineOptions(const DbUrl &url)
{
    EngineOptions options;
    options.db = url;
    options.actor = Actor{kBenchActor, kBenchActor};
    return options;
}

namespace {

QAtomicInteger<quint64> g_bareSerial;

QVariant nullText() { return QVariant(QMetaType::fromType<QString>()); }

// --- guarded_row: the engine ------------------------------------------------------------

class GuardedClient : public BenchClient {
public:
    static Result<std::unique_ptr<BenchClient>> open(const BenchClientSpec &spec)
    {
        EngineOptions options = benchEngineOptions(spec.url);
        options.redis = spec.redis;
        auto engine = Engine::open(options);
        if (!engine)
            return std::unexpected(engine.error());
        auto client = std::make_unique<GuardedClient>();
        client->m_spec = spec;
        client->m_engine = std::move(*engine);
        client->m_engine->useBookWriters(spec.writers);
        return client;
    }

    Result<bool> reserveOnce(qint64 seq) override
    {
        auto r = m_engine->reserve(m_spec.orderPrefix + QString::number(seq), m_spec.user,
                                   {OrderLine{m_spec.sku, 1, {}}});
        if (!r)
            return std::unexpected(r.error());
        if (r->outcome == Outcome::Reserved)
            return true;
        if (r->outcome == Outcome::OutOfStock)
            return false;
        return fail(ErrorCode::Internal, u"reserve answered %1"_s.arg(outcomeWord(r->outcome)));
    }

private:
    BenchClientSpec m_spec;
    std::unique_ptr<Engine> m_engine;
};

// --- bare_sql: Book::reserve's statements, binds and round trips, nothing else ----------

class BareClient : public BenchClient {
public:
    static Result<std::unique_ptr<BenchClient>> open(const BenchClientSpec &spec)
    {
        auto client = std::make_unique<BareClient>();
        if (auto r = client->connect(spec); !r)
            return std::unexpected(r.error());
        return client;
    }

    ~BareClient() override
    {
        m_tx.reset();
        m_order.reset();
        m_reserve.reset();
        m_line.reset();
        m_ledger.reset();
        if (!m_name.isEmpty()) {
            QSqlDatabase::database(m_name, false).close();
            QSqlDatabase::removeDatabase(m_name);
        }
    }

    Result<bool> reserveOnce(qint64 seq) override
    {
        const QString order = m_spec.orderPrefix + QString::number(seq);
        if (!m_tx->exec(m_begin))
            return failed(*m_tx, false);
        m_order->bindValue(0, order);
        m_order->bindValue(1, m_spec.user);
        m_order->bindValue(2, kDefaultHoldSeconds * 1000);
        m_order->bindValue(3, kBenchActor);
        if (!m_order->exec())
            return failed(*m_order, true);
        const bool inserted = m_order->next();
        m_order->finish();
        if (!inserted) {
            rollback();
            return fail(ErrorCode::Internal, u"order %1 exists already"_s.arg(order));
        }
        const QVariantList guard{1, 1, m_spec.sku, 0, 1};
        for (int i = 0; i < guard.size(); ++i)
            m_reserve->bindValue(i, guard.at(i));
        if (!m_reserve->exec())
            return failed(*m_reserve, true);
        if (!m_reserve->next()) {
            m_reserve->finish();
            rollback();
            return false;
        }
        const qint64 available = m_reserve->value(0).toLongLong();
        const qint64 locked = m_reserve->value(1).toLongLong();
        const qint64 sold = m_reserve->value(2).toLongLong();
        m_reserve->finish();
        const QVariantList line{order, m_spec.sku, 0, 1, nullText()};
        for (int i = 0; i < line.size(); ++i)
            m_line->bindValue(i, line.at(i));
        if (!m_line->exec())
            return failed(*m_line, true);
        m_line->finish();
        const QVariantList ledger{order, u"RESERVE"_s, m_spec.sku, 0, nullText(), -1, 1, 0, available + 1,
                                  locked - 1, sold, available, locked, sold, kBenchActor, kBenchActor};
        for (int i = 0; i < ledger.size(); ++i)
            m_ledger->bindValue(i, ledger.at(i));
        if (!m_ledger->exec())
            return failed(*m_ledger, true);
        m_ledger->finish();
        if (!m_tx->exec(sql::commitWrite()))
            return failed(*m_tx, true);
        return true;
    }

private:
    Result<void> connect(const BenchClientSpec &spec)
    {
        m_spec = spec;
        m_name = u"flashstock-bench-bare-%1"_s.arg(g_bareSerial.fetchAndAddRelaxed(1));
        const bool sqlite = spec.url.dialect == Dialect::Sqlite;
        // The same driver settings Database::connectNow uses.
        QSqlDatabase db = sqlite ? QSqlDatabase::addDatabase(u"QSQLITE"_s, m_name)
                                 : addPostgresConnection(spec.url, m_name, u"flashstock-bench"_s);
        if (sqlite) {
            db.setDatabaseName(spec.url.path);
            db.setConnectOptions(u"QSQLITE_BUSY_TIMEOUT=10000"_s);
        }
        if (!db.open())
            return fail(ErrorCode::Unavailable, u"bare_sql cannot connect: "_s + db.lastError().text().trimmed());
        m_begin = sql::beginWrite(spec.url.dialect);
        m_tx.emplace(db);
        for (const QString &statement : sql::sessionSetup(spec.url.dialect)) {
            if (!m_tx->exec(statement))
                return fail(ErrorCode::Unavailable, u"%1 failed: %2"_s.arg(statement, m_tx->lastError().text()));
        }
        const std::pair<std::optional<QSqlQuery> *, QString> statements[] = {
            {&m_order, sql::insertOrder(spec.now)},
            {&m_reserve, sql::reserveBucket()},
            {&m_line, sql::insertOrderLine()},
            {&m_ledger, sql::insertLedger(spec.now)}};
        for (const auto &[query, text] : statements) {
            query->emplace(db);
            (*query)->setForwardOnly(true);
            if (!(*query)->prepare(text))
                return fail(ErrorCode::Internal, u"bare_sql cannot prepare %1: %2"_s.arg(
                                                     text.left(40), (*query)->lastError().text()));
        }
        return {};
    }

    // After a failed statement: that failure is what the case reports; nothing of the
    // transaction is committed whether or not the ROLLBACK succeeds.
    void rollback() { (void)m_tx->exec(sql::rollbackWrite()); }

    std::unexpected<Error> failed(QSqlQuery &q, bool inTransaction)
    {
        const QString text = q.lastError().text().trimmed();
        q.finish();
        if (inTransaction)
            rollback();
        return fail(ErrorCode::Internal, u"bare_sql: "_s + text);
    }

    BenchClientSpec m_spec;
    QString m_name;
    QString m_begin;
    std::optional<QSqlQuery> m_tx, m_order, m_reserve, m_line, m_ledger;
};

// --- naive: the counterexample ----------------------------------------------------------

class NaiveClient : public BenchClient {
public:
    static Result<std::unique_ptr<BenchClient>> open(const BenchClientSpec &spec)
    {
        auto db = Database::open(spec.url);
        if (!db)
            return std::unexpected(db.error());
        auto client = std::make_unique<NaiveClient>();
        client->m_sku = spec.sku;
        client->m_db = std::move(*db);
        client->m_naive = std::make_unique<NaiveDeduct>(*client->m_db);
        return client;
    }

    Result<bool> reserveOnce(qint64) override { return m_naive->reserve(m_sku, 1); }

private:
    QString m_sku;
    std::unique_ptr<Database> m_db;
    std::unique_ptr<NaiveDeduct> m_naive;
};

} // namespace

Result<std::unique_ptr<BenchClient>> openGuardedClient(const BenchClientSpec &spec)
{
    return GuardedClient::open(spec);
}

Result<std::unique_ptr<BenchClient>> openBatchedClient(const BenchClientSpec &spec)
{
    if (!spec.writers)
        return fail(ErrorCode::InvalidArgument, u"batched_row needs the book writers"_s);
    return GuardedClient::open(spec);
}

Result<std::unique_ptr<BenchClient>> openBareClient(const BenchClientSpec &spec)
{
    return BareClient::open(spec);
}

Result<std::unique_ptr<BenchClient>> openNaiveClient(const BenchClientSpec &spec)
{
    return NaiveClient::open(spec);
}

Result<std::unique_ptr<BenchClient>> openGateClient(const BenchClientSpec &spec)
{
    if (!spec.redis)
        return fail(ErrorCode::InvalidArgument, u"redis: gate_book needs a gate"_s, u"redis"_s);
    return GuardedClient::open(spec);
}

} // namespace flashstock
