#pragma once

#include <QByteArrayView>
#include <QString>

namespace flashstock {

/// Redis Cluster's key hashing: which of the 16384 hash slots a key lives in.
/// Plain functions; any thread.
class HashSlot {
public:
    /// Number of hash slots in a Redis Cluster.
    static constexpr int kCount = 16384;

    /// CRC16-CCITT (XModem: polynomial 0x1021, initial value 0), the checksum Redis Cluster
    /// hashes keys with; crc16("123456789") == 0x31C3.
    static quint16 crc16(QByteArrayView data);
    /// The slot of `key`: CRC16 of its hash tag (the text between the first `{` and the next
    /// `}`, when not empty), else of the whole key, modulo 16384.
    static int ofKey(QByteArrayView key);
    /// The slot of every gate key of `sku` (GateKeys: `fs:{sku}:...`).
    static int ofSku(const QString &sku);
};

} // namespace flashstock
