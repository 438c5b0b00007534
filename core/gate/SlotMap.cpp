#include "gate/SlotMap.h"

#include "gate/HashSlot.h"

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// One node entry of CLUSTER SLOTS (`[ip, port, id, ...]`); std::nullopt if it has no usable
/// endpoint.
std::optional<RedisNodeAddress> nodeEntry(const RedisValue &entry, const RedisNodeAddress &answeredBy)
{
    if (entry.type != RedisValue::Type::Array || entry.elements.size() < 2
        || entry.elements[1].type != RedisValue::Type::Integer)
        return std::nullopt;
    const QString ip = QString::fromUtf8(entry.elements[0].str);
    if (ip == u"?"_s)
        return std::nullopt;
    const int port = int(entry.elements[1].integer);
    if (port < 1 || port > 65535)
        return std::nullopt;
    return RedisNodeAddress{ip.isEmpty() ? answeredBy.host : ip, port};
}

/// The value of `key` in a flat key/value array of CLUSTER SHARDS, or nullptr.
const RedisValue *field(const RedisValue &pairs, const char *key)
{
    for (qsizetype i = 0; i + 1 < pairs.elements.size(); i += 2)
        if (pairs.elements[i].str == key)
            return &pairs.elements[i + 1];
    return nullptr;
}

} // namespace

Result<SlotMap> SlotMap::read(RedisConnection &connection, const RedisNodeAddress &address, bool &shardsUnknown)
{
    // CLUSTER SHARDS (7.0) also names replicas that have no data yet; CLUSTER SLOTS serves
    // older servers.
    const QByteArray subcommand = shardsUnknown ? QByteArrayLiteral("SLOTS") : QByteArrayLiteral("SHARDS");
    auto reply = connection.command({QByteArrayLiteral("CLUSTER"), subcommand});
    if (reply && reply->isErrorWith("ERR unknown subcommand") && !shardsUnknown) {
        shardsUnknown = true;
        reply = connection.command({QByteArrayLiteral("CLUSTER"), QByteArrayLiteral("SLOTS")});
    }
    if (!reply)
        return std::unexpected(reply.error());
    if (reply->isError()) {
        if (reply->str.contains("cluster support disabled"))
            return fail(ErrorCode::InvalidArgument,
                        u"%1 is not a Redis Cluster node (cluster support disabled): use redis:// for a single "
                        u"server"_s.arg(address.toString()),
                        u"redis"_s);
        return fail(ErrorCode::Internal,
                    u"%1 answered CLUSTER %2 with %3"_s.arg(address.toString(), QString::fromLatin1(subcommand),
                                                          QString::fromUtf8(reply->str)));
    }
    return shardsUnknown ? fromClusterSlots(*reply, address) : fromClusterShards(*reply, address);
}

SlotMap::SlotMap()
    : m_owner(HashSlot::kCount, -1)
{
}

Result<SlotMap> SlotMap::fromClusterSlots(const RedisValue &reply, const RedisNodeAddress &answeredBy)
{
    if (reply.type != RedisValue::Type::Array)
        return fail(ErrorCode::Internal, u"CLUSTER SLOTS from %1 is not a table: %2"_s.arg(
                                             answeredBy.toString(), QString::fromUtf8(reply.str)));
    SlotMap map;
    for (const RedisValue &range : reply.elements) {
        if (range.type != RedisValue::Type::Array || range.elements.size() < 3)
            return fail(ErrorCode::Internal, u"CLUSTER SLOTS from %1 has a malformed range"_s.arg(answeredBy.toString()));
        const qint64 first = range.elements[0].integer, last = range.elements[1].integer;
        if (first < 0 || last >= HashSlot::kCount || first > last)
            return fail(ErrorCode::Internal, u"CLUSTER SLOTS from %1 has slots %2-%3"_s.arg(answeredBy.toString())
                                                 .arg(first)
                                                 .arg(last));
        const auto master = nodeEntry(range.elements[2], answeredBy);
        if (!master)
            continue; // its master's endpoint is unknown: those slots stay unassigned
        for (qint64 slot = first; slot <= last; ++slot)
            map.assign(int(slot), *master);
        QList<RedisNodeAddress> &replicas = map.m_replicas[map.indexOf(*master)];
        for (qsizetype i = 3; i < range.elements.size(); ++i)
            if (const auto replica = nodeEntry(range.elements[i], answeredBy); replica && !replicas.contains(*replica))
                replicas.append(*replica);
    }
    return map;
}

Result<SlotMap> SlotMap::fromClusterShards(const RedisValue &reply, const RedisNodeAddress &answeredBy)
{
    const auto malformed = [&] {
        return fail(ErrorCode::Internal, u"CLUSTER SHARDS from %1 is not a shards table"_s.arg(answeredBy.toString()));
    };
    if (reply.type != RedisValue::Type::Array)
        return malformed();
    SlotMap map;
    for (const RedisValue &shard : reply.elements) {
        const RedisValue *ranges = field(shard, "slots"), *members = field(shard, "nodes");
        if (!ranges || !members || ranges->elements.size() % 2 != 0)
            return malformed();
        std::optional<RedisNodeAddress> master;
        QList<RedisNodeAddress> replicas;
        for (const RedisValue &n : members->elements) {
            const RedisValue *port = field(n, "port"), *role = field(n, "role");
            const RedisValue *endpoint = field(n, "endpoint"), *ip = field(n, "ip");
            if (!port || !role || port->integer < 1 || port->integer > 65535)
                continue;
            QString host = endpoint ? QString::fromUtf8(endpoint->str) : QString();
            if (host.isEmpty() && ip)
                host = QString::fromUtf8(ip->str);
            if (host == u"?"_s)
                continue;
            const RedisNodeAddress address{host.isEmpty() ? answeredBy.host : host, int(port->integer)};
            if (role->str == "master")
                master = address;
            else if (!replicas.contains(address))
                replicas.append(address);
        }
        if (!master)
            continue; // its master's endpoint is unknown: those slots stay unassigned
        for (qsizetype i = 0; i + 1 < ranges->elements.size(); i += 2) {
            const qint64 first = ranges->elements[i].integer, last = ranges->elements[i + 1].integer;
            if (first < 0 || last >= HashSlot::kCount || first > last)
                return malformed();
            for (qint64 slot = first; slot <= last; ++slot)
                map.assign(int(slot), *master);
        }
        if (const int index = map.indexOf(*master); index >= 0) // a master without slots serves nothing
            map.m_replicas[index] = replicas;
    }
    return map;
}

int SlotMap::indexOf(const RedisNodeAddress &master) const { return int(m_masters.indexOf(master)); }

std::optional<RedisNodeAddress> SlotMap::masterOf(int slot) const
{
    if (slot < 0 || slot >= HashSlot::kCount || m_owner[size_t(slot)] < 0)
        return std::nullopt;
    return m_masters.at(m_owner[size_t(slot)]);
}

void SlotMap::assign(int slot, const RedisNodeAddress &master)
{
    if (slot < 0 || slot >= HashSlot::kCount)
        return;
    int index = indexOf(master);
    if (index < 0) {
        index = int(m_masters.size());
        m_masters.append(master);
        m_replicas.append(QList<RedisNodeAddress>{});
    }
    m_owner[size_t(slot)] = qint16(index);
}

QList<RedisNodeAddress> SlotMap::masters() const
{
    QList<RedisNodeAddress> out;
    for (qsizetype i = 0; i < m_masters.size(); ++i)
        if (slotCount(m_masters[i]) > 0)
            out.append(m_masters[i]);
    return out;
}

QList<RedisNodeAddress> SlotMap::replicasOf(const RedisNodeAddress &master) const
{
    const int index = indexOf(master);
    return index < 0 ? QList<RedisNodeAddress>{} : m_replicas.at(index);
}

int SlotMap::slotCount(const RedisNodeAddress &master) const
{
    const int index = indexOf(master);
    return index < 0 ? 0 : int(std::count(m_owner.begin(), m_owner.end(), qint16(index)));
}

int SlotMap::assignedSlots() const
{
    return int(HashSlot::kCount - std::count(m_owner.begin(), m_owner.end(), qint16(-1)));
}

QList<RedisNodeAddress> SlotMap::nodes() const
{
    QList<RedisNodeAddress> out = masters();
    for (const RedisNodeAddress &m : masters())
        for (const RedisNodeAddress &r : replicasOf(m))
            if (!out.contains(r))
                out.append(r);
    return out;
}

} // namespace flashstock
