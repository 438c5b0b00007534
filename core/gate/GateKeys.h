#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

namespace flashstock {

/// Names of the gate's Redis keys for one SKU. Every key carries the SKU's hash tag
/// (`fs:{SKU}:...`), so all keys of one script call live in one Redis Cluster slot.
///
/// The layout (field by field in lua/reserve-2.lua):
/// - `fs:{SKU}:gate`  hash: available, pause, sale, counters (`n:`), per-user units (`u:`),
///   order -> token (`o:`), token records (`t:`)
/// - `fs:{SKU}:open`  hash: the held and settled tokens -> state, and `#held`
/// - `fs:{SKU}:done`  zset: released and sold tokens by state change ms (for the purge)
/// - `fs:{SKU}:restoring` string: the claim of a restore from the book
///
/// The first two exist from the SKU's first load on and are all a reserve or settle
/// declares: while a Redis Cluster slot migrates, a multi-key script meets TRYAGAIN as soon
/// as some of its keys exist on a node and others do not, so a reserve keeps running on the
/// source until its keys are moved and follows ASK to the target afterwards.
/// An earlier layout (`fs:{SKU}:stock`, `:orders`, `:tokens`, `:held`, ...) is not read: such
/// a gate has no `fs:{SKU}:gate`, so the engine refills it from the book of record on the
/// SKU's next reserve, as after a Redis restart without persistence.
/// Plain functions of their arguments; any thread.
class GateKeys {
public:
    /// `fs:{sku}:suffix`, e.g. key("A1", "gate") = "fs:{A1}:gate".
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
