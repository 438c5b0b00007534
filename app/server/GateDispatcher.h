#pragma once

#include "Engine.h"
#include "GateLane.h"
#include "Result.h"
#include "gate/SlotMap.h"
#include "open/EngineOpener.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace flashstock {
class BookWriters;
}

namespace flashstock::server {

class ServerMetrics;

/// The gate dispatcher: takes every reserve of the server and hands it to a lane
/// (GateLane: a thread with its own engine that sends what waits for it as one pipeline,
/// then on to the book writers). On a Redis Cluster each master gets a lane of its own,
/// as does each combination of masters that one order's lines need, so a master that
/// hangs holds up only the reserves that need it: a buyer of the other masters' SKUs never
/// waits on it. Which master serves a SKU comes from the slot maps the lanes' gates read;
/// until one is known (and for a single Redis server, or book-only) every reserve goes to
/// the first lane. At most kMaxLanes lanes: the reserves of further combinations share the
/// first lane. Lanes start on the first reserve that needs them and run until stop().
///
/// submit() is thread-safe and never waits on Redis or SQL; request threads only submit().
class GateDispatcher {
public:
    /// Called once with the reserve's answer (handed over: moved, not copied), on a lane's
    /// thread.
    using Done = GateLane::Done;
    /// Most lanes, the first one included.
    static constexpr int kMaxLanes = 16;

    GateDispatcher(ResolvedProfile profile, BookWriters &book, ServerMetrics &metrics);
    ~GateDispatcher();

    /// Opens the first lane's engine. The open's error if it fails.
    [[nodiscard]] Result<void> start();
    /// Queues a checked reserve (Engine::checkReserve) on its lane. Thread-safe, never waits.
    void submit(ReserveRequest request, Done done);
    /// Handles everything submitted so far (and the book's answers to it) in every lane,
    /// then stops them; a reserve submitted after is answered Unavailable.
    void stop();

private:
    /// The lane key of `request`: its masters' addresses, sorted and joined by commas; empty
    /// while a SKU's master is not known (the first lane). Under m_mutex.
    QString laneKey(const ReserveRequest &request) const;
    /// The lane for `key`, started now if new (the first lane when kMaxLanes are running).
    /// Under m_mutex.
    GateLane &lane(const QString &key);
    /// Hands `request` to its lane; the error to answer it with when none takes it. Under
    /// m_mutex.
    std::optional<Error> place(ReserveRequest &request, Done &done);
    /// A lane's gate read `map`: routing follows it from now on.
    void mapRead(const SlotMap &map);

    ResolvedProfile m_profile;
    BookWriters &m_book;
    ServerMetrics &m_metrics;
    std::mutex m_mutex;
    std::optional<SlotMap> m_map;                      ///< the newest slot map a lane read
    std::map<QString, std::unique_ptr<GateLane>> m_lanes; ///< by lane key; "" is the first lane
    bool m_stopped = false;
};

} // namespace flashstock::server
