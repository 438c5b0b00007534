#include "GateDispatcher.h"

#include "gate/HashSlot.h"

#include <QStringList>

using namespace Qt::StringLiterals;

namespace flashstock::server {

GateDispatcher::GateDispatcher(ResolvedProfile profile, BookWriters &book, ServerMetrics &metrics)
    : m_profile(std::move(profile))
    , m_book(book)
    , m_metrics(metrics)
{
}

GateDispatcher::~GateDispatcher()
{
    stop();
}

Result<void> GateDispatcher::start()
{
    auto first = std::make_unique<GateLane>(u"gate dispatcher"_s, m_profile, m_book, m_metrics,
                                            [this](const SlotMap &map) { mapRead(map); });
    if (auto opened = first->start(); !opened)
        return opened;
    std::lock_guard lock(m_mutex);
    m_lanes[QString()] = std::move(first);
    return {};
}

void GateDispatcher::mapRead(const SlotMap &map)
{
    std::lock_guard lock(m_mutex);
    if (!m_map || *m_map != map)
        m_map = map;
}

QString GateDispatcher::laneKey(const ReserveRequest &request) const
{
    if (!m_map)
        return {};
    QStringList masters;
    for (const OrderLine &line : request.lines) {
        const auto master = m_map->masterOf(HashSlot::ofSku(line.sku));
        if (!master)
            return {};
        if (const QString address = master->toString(); !masters.contains(address))
            masters << address;
    }
    masters.sort();
    return masters.join(u',');
}

GateLane &GateDispatcher::lane(const QString &key)
{
    auto &slot = m_lanes[key];
    if (slot)
        return *slot;
    if (int(m_lanes.size()) > kMaxLanes) {
        m_lanes.erase(key);
        return *m_lanes.at(QString());
    }
    slot = std::make_unique<GateLane>(u"gate dispatcher (%1)"_s.arg(key), m_profile, m_book, m_metrics,
                                      [this](const SlotMap &map) { mapRead(map); });
    slot->launch();
    return *slot;
}

void GateDispatcher::submit(ReserveRequest request, Done done)
{
    std::optional<Error> refused;
    {
        std::lock_guard lock(m_mutex);
        refused = place(request, done);
    }
    if (refused)
        done(std::unexpected(*refused));
}

std::optional<Error> GateDispatcher::place(ReserveRequest &request, Done &done)
{
    const Error stopping{ErrorCode::Unavailable, u"the server is stopping"_s, {}};
    for (;;) {
        if (m_stopped || m_lanes.empty())
            return stopping;
        const QString key = laneKey(request);
        GateLane &to = lane(key);
        if (to.submit(request, done))
            return std::nullopt;
        if (&to == m_lanes.at(QString()).get()) // the first lane takes no more only when stopping
            return stopping;
        // Its engine could not open (those waiting got that error): a new lane for this one.
        m_lanes.erase(key);
    }
}

void GateDispatcher::stop()
{
    std::map<QString, std::unique_ptr<GateLane>> lanes;
    {
        std::lock_guard lock(m_mutex);
        m_stopped = true;
        lanes.swap(m_lanes);
    }
    for (auto &[key, lane] : lanes)
        lane->stop();
}

} // namespace flashstock::server
