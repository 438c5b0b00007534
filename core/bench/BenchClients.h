#pragma once

#include "Engine.h"
#include "Result.h"
#include "gate/RedisUrl.h"
#include "store/DbUrl.h"

#include <QString>

#include <memory>
#include <optional>

namespace flashstock {

class BookWriters;

/// Operator and source written on every benchmark ledger row (and the users' prefix).
inline const QString kBenchActor = QStringLiteral("bench");

/// Engine options for the book alone (no gate), acting as kBenchActor.
EngineOptions benchEngineOptions(const DbUrl &url);

/// What a benchmark client needs to know; it opens its own connection on its own thread.
struct BenchClientSpec {
    DbUrl url;           ///< the scratch book
    QString sku;         ///< the case's SKU (1 bucket for the single-row cases)
    QString orderPrefix; ///< unique per case and client; the client appends a sequence number
    QString user;        ///< the buyer named on each order
    QString now;         ///< Database::nowMsExpr() of the backend (bare SQL needs the text)
    std::optional<RedisUrl> redis; ///< the gate, for gate_book (the benchmark's private redis-server)
    BookWriters *writers = nullptr; ///< batched_row: the book writers every client's engine uses (not owned)
};

/// One benchmark client: created, used and destroyed on one thread; owns its connection.
class BenchClient {
public:
    virtual ~BenchClient() = default;
    /// Reserves 1 unit for a new order numbered `seq` (never reused by this client):
    /// true reserved, false out of stock. Errors as the path under test reports them.
    virtual Result<bool> reserveOnce(qint64 seq) = 0;
};

/// Opens a client; errors: the connection could not be opened or prepared.
using BenchClientFactory = Result<std::unique_ptr<BenchClient>> (*)(const BenchClientSpec &);

/// guarded_row: Engine::reserve, the book's whole guarded path.
[[nodiscard]] Result<std::unique_ptr<BenchClient>> openGuardedClient(const BenchClientSpec &spec);
/// bare_sql: Book::reserve's statements (core/store/BookSql.h), binds and round trips,
/// through plain prepared QSqlQuery on its own QSqlDatabase, with nothing around them.
[[nodiscard]] Result<std::unique_ptr<BenchClient>> openBareClient(const BenchClientSpec &spec);
/// batched_row: Engine::reserve whose book part goes to the shared book writers
/// (`spec.writers`, group commit); InvalidArgument without them.
[[nodiscard]] Result<std::unique_ptr<BenchClient>> openBatchedClient(const BenchClientSpec &spec);
/// gate_book: Engine::reserve with the Redis gate in front (the full reserve path);
/// InvalidArgument without `spec.redis`.
[[nodiscard]] Result<std::unique_ptr<BenchClient>> openGateClient(const BenchClientSpec &spec);
/// naive: NaiveDeduct, the read-check-write counterexample (oversells under concurrency).
[[nodiscard]] Result<std::unique_ptr<BenchClient>> openNaiveClient(const BenchClientSpec &spec);

} // namespace flashstock
