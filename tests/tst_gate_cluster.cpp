// Every gate script on a real 3-node Redis Cluster on loopback, each call sent to the node
// that owns the SKU's slot: the key layout (`fs:{SKU}:...`) never crosses slots.
#include "gate/Gate.h"
#include "gate/GateKeys.h"
#include "support/RedisFixture.h"

#include <QDeadlineTimer>
#include <QProcess>
#include <QStandardPaths>
#include <QTest>
#include <QThread>

#include <array>
#include <memory>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

/// Redis Cluster's key hash: CRC16-CCITT (XModem), polynomial 0x1021, initial value 0.
quint16 crc16(const QByteArray &data)
{
    quint16 crc = 0;
    for (const char ch : data) {
        crc ^= quint16(quint8(ch)) << 8;
        for (int i = 0; i < 8; ++i)
            crc = (crc & 0x8000) ? quint16((crc << 1) ^ 0x1021) : quint16(crc << 1);
    }
    return crc;
}

/// The slot of `key`: only the hash tag counts when the key has a non-empty `{...}`.
int keySlot(const QByteArray &key)
{
    const qsizetype open = key.indexOf('{');
    if (open >= 0) {
        const qsizetype close = key.indexOf('}', open + 1);
        if (close > open + 1)
            return crc16(key.mid(open + 1, close - open - 1)) & 16383;
    }
    return crc16(key) & 16383;
}

/// The value of `r`; on an error, records it as a test failure message and returns `fallback`.
template <typename T>
T valueOr(const Result<T> &r, T fallback, const char *what)
{
    if (!r) {
        qWarning("%s failed: %s", what, qPrintable(r.error().message));
        return fallback;
    }
    return *r;
}

} // namespace

class TestGateCluster : public QObject {
    Q_OBJECT

private:
    std::array<std::unique_ptr<RedisFixture>, 3> m_nodes;

    /// The node owning `slot`, from CLUSTER SLOTS.
    RedisFixture *owner(int slot)
    {
        auto table = m_nodes[0]->command({"CLUSTER", "SLOTS"});
        if (!table)
            return nullptr;
        for (const RedisValue &range : table->elements) {
            if (range.elements.size() < 3 || slot < range.elements[0].integer
                || slot > range.elements[1].integer)
                continue;
            const qint64 port = range.elements[2].elements.value(1).integer;
            for (auto &node : m_nodes)
                if (node->port() == port)
                    return node.get();
        }
        return nullptr;
    }

private slots:
    void initTestCase()
    {
        FLASHSTOCK_REQUIRE_REDIS_SERVER();
        const QString cli = QStandardPaths::findExecutable(u"redis-cli"_s);
        FS_REQUIRE(!cli.isEmpty(), "redis-cli is not on PATH");
        QStringList endpoints;
        for (auto &node : m_nodes) {
            node = std::make_unique<RedisFixture>(
                QStringList{u"--cluster-enabled"_s, u"yes"_s, u"--cluster-config-file"_s,
                            u"nodes.conf"_s, u"--cluster-node-timeout"_s, u"5000"_s},
                /*clusterPort=*/true);
            QVERIFY2(node->start(), qPrintable(node->errorString()));
            endpoints << u"127.0.0.1:%1"_s.arg(node->port());
        }
        QProcess create;
        create.setProcessChannelMode(QProcess::MergedChannels);
        create.start(cli, QStringList{u"--cluster"_s, u"create"_s} + endpoints
                              + QStringList{u"--cluster-replicas"_s, u"0"_s, u"--cluster-yes"_s});
        QVERIFY(create.waitForFinished(30000));
        QVERIFY2(create.exitCode() == 0, create.readAll().constData());

        const QDeadlineTimer deadline(15000);
        bool ok = false;
        while (!ok && !deadline.hasExpired()) {
            ok = true;
            // Every node says ok and knows all three slot ranges (gossip has converged).
            for (auto &node : m_nodes) {
                auto info = node->command({"CLUSTER", "INFO"});
                auto table = node->command({"CLUSTER", "SLOTS"});
                ok = ok && info && info->str.contains("cluster_state:ok") && table
                     && table->elements.size() == 3;
            }
            if (!ok)
                QThread::msleep(50);
        }
        QVERIFY2(ok, "cluster_state did not become ok");
    }

    void crc16MatchesClusterKeyslot()
    {
        QCOMPARE(crc16("123456789"), quint16(0x31C3)); // the reference check value
        for (const char *sku : {"A", "SKU-1", "hot.item_42", "x"}) {
            for (const char *suffix : {"gate", "open", "done", "restoring"}) {
                const QByteArray key = GateKeys::key(QString::fromLatin1(sku), suffix);
                auto server = m_nodes[0]->command({"CLUSTER", "KEYSLOT", key});
                FS_VERIFY_OK(server);
                QCOMPARE(server->integer, qint64(keySlot(key)));
                QCOMPARE(keySlot(key), keySlot(GateKeys::key(QString::fromLatin1(sku), "gate")));
            }
        }
    }

    void everyScriptRunsOnTheOwningNode()
    {
        QSet<int> nodesUsed;
        for (int n = 0; n < 8; ++n) {
            const QString sku = u"SKU-%1"_s.arg(n);
            const int slot = keySlot(GateKeys::key(sku, "gate"));
            RedisFixture *node = owner(slot);
            QVERIFY(node);
            nodesUsed.insert(node->port());
            Gate gate(node->url());
            QVERIFY(gate.health().scriptsLoaded);

            QCOMPARE(valueOr(gate.load(sku, 100, false), qint64(-1), "load"), 100);
            FS_VERIFY_OK(gate.setSale(sku, GateSale{true, 0, 0, 5}));
            auto a = gate.reserve(sku, u"o1"_s, u"u1"_s, 2);
            QVERIFY2(a.has_value(), qPrintable(a.error().message));
            QCOMPARE(a->code, GateCode::Reserved);
            QCOMPARE(valueOr(gate.reserve(sku, u"o1"_s, u"u1"_s, 2), {}, "reserve").code, GateCode::Existing);
            QCOMPARE(valueOr(gate.reserve(sku, u"o2"_s, u"u1"_s, 4), {}, "reserve").code, GateCode::LimitExceeded);
            auto batch = gate.reserveBatch(sku, {{u"b1"_s, u"u2"_s, 1}, {u"b2"_s, u"u3"_s, 1}});
            QVERIFY2(batch.has_value(), qPrintable(batch.error().message));
            FS_VERIFY_OK(gate.settle(sku, a->token));
            FS_VERIFY_OK(gate.settleBatch(sku, {batch->at(0).token, batch->at(1).token}));
            FS_VERIFY_OK(gate.markSold(sku, a->token));
            QCOMPARE(valueOr(gate.release(sku, batch->at(0).token), false, "release"), true);
            QCOMPARE(valueOr(gate.openTokens(sku), {}, "openTokens").size(), 1);
            QCOMPARE(valueOr(gate.adjust(sku, 10), false, "adjust"), true);
            QCOMPARE(valueOr(gate.available(sku), qint64(-1), "available"), 100 - 2 - 1 + 10);
            QCOMPARE(valueOr(gate.load(sku, 50, true), qint64(-1), "load"), 50);
            FS_VERIFY_OK(gate.setPaused(sku, true));
            QCOMPARE(valueOr(gate.reserve(sku, u"o3"_s, u"u4"_s, 1), {}, "reserve").code, GateCode::Paused);
            FS_VERIFY_OK(gate.setPaused(sku, false));
            FS_VERIFY_OK(gate.clearSale(sku));
            QCOMPARE(valueOr(gate.reserve(sku, u"o3"_s, {}, 1), {}, "reserve").code, GateCode::Reserved);
            FS_VERIFY_OK(gate.nowMs());

            // Every key the scripts wrote sits in the SKU's one slot.
            auto keys = node->command({"KEYS", "fs:{" + sku.toUtf8() + "}:*"});
            QVERIFY(keys && keys->elements.size() >= 3);
            for (const RedisValue &k : keys->elements)
                QCOMPARE(keySlot(k.str), slot);

            // The same call on a node that does not own the slot is redirected (MOVED):
            // routing matters, and the gate reports it instead of hiding it.
            for (auto &other : m_nodes) {
                if (other.get() == node)
                    continue;
                Gate wrong(other->url());
                auto moved = wrong.reserve(sku, u"o4"_s, {}, 1);
                QVERIFY(!moved);
                QVERIFY2(moved.error().message.contains(u"MOVED"_s), qPrintable(moved.error().message));
                QVERIFY(!moved.error().message.contains(u"CROSSSLOT"_s));
                break;
            }
        }
        QVERIFY2(nodesUsed.size() >= 2, "the SKUs should spread over the nodes");
    }
};

QTEST_GUILESS_MAIN(TestGateCluster)
#include "tst_gate_cluster.moc"
#include "support/TestChecks.h"
