#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

namespace flashstock {

/// Names of the gate's Redis keys for one SKU. Every key carries the SKU's hash tag
/// (`fs:{SKU}:...`), so all keys of one script call live in one Redis Cluster slot.
/// Plain functions of their arguments; any thread.
class GateKeys {
public:
    /// `fs:{sku}:suffix`, e.g. key("A1", "stock") = "fs:{A1}:stock".
    static QByteArray key(const QString &sku, const char *suffix)
    {
        return QByteArrayLiteral("fs:{") + sku.toUtf8() + QByteArrayLiteral("}:") + suffix;
    }
    /// The keys named by `suffixes`, in order (a script's KEYS).
    static QList<QByteArray> keys(const QString &sku, std::initializer_list<const char *> suffixes)
    {
        QList<QByteArray> out;
        out.reserve(qsizetype(suffixes.size()));
        for (const char *s : suffixes)
            out.append(key(sku, s));
        return out;
    }
    /// The hash tag of `sku` as Redis Cluster hashes it (the text between the braces).
    static QByteArray hashTag(const QString &sku) { return sku.toUtf8(); }
};

} // namespace flashstock
