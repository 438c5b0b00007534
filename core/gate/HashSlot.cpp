#include "gate/HashSlot.h"

#include "gate/GateKeys.h"

namespace flashstock {

quint16 HashSlot::crc16(QByteArrayView data)
{
    quint16 crc = 0;
    for (const char ch : data) {
        crc ^= quint16(quint8(ch)) << 8;
        for (int bit = 0; bit < 8; ++bit)
            crc = (crc & 0x8000) ? quint16((crc << 1) ^ 0x1021) : quint16(crc << 1);
    }
    return crc;
}

int HashSlot::ofKey(QByteArrayView key)
{
    const qsizetype open = key.indexOf('{');
    if (open >= 0) {
        const qsizetype close = key.sliced(open + 1).indexOf('}');
        if (close > 0)
            return crc16(key.sliced(open + 1, close)) % kCount;
    }
    return crc16(key) % kCount;
}

int HashSlot::ofSku(const QString &sku) { return crc16(GateKeys::hashTag(sku)) % kCount; }

} // namespace flashstock
