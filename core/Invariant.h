#pragma once

#include <QFlags>
#include <QHashFunctions>
#include <QString>

namespace flashstock {

/// The invariants of DESIGN.md. I1-I4 and I6 are the book's (checked by Book::check and by
/// each reconcile pass, with one definition: store/Invariants.h); I5 is the gate's (gate
/// available equals book available once quiet).
enum class Invariant : unsigned {
    I1 = 1u << 0, ///< every bucket non-negative and summing to total
    I2 = 1u << 1, ///< replaying the ledger reproduces every bucket
    I3 = 1u << 2, ///< every order's ledger rows cover its lines once and match its status
    I4 = 1u << 3, ///< sold / locked equal the PAID / PENDING order lines
    I5 = 1u << 4, ///< gate available equals book available once quiet
    I6 = 1u << 5, ///< each payment a closed order could not take has exactly one refund, no other refund exists
};
/// A set of invariants. (No Q_DECLARE_OPERATORS_FOR_FLAGS: its operators in this namespace
/// would hide Qt's for key sequences and alignments; combine as `Invariants(a) | b`.)
using Invariants = QFlags<Invariant>;

/// Every invariant, in order.
inline constexpr Invariant kInvariants[] = {Invariant::I1, Invariant::I2, Invariant::I3,
                                            Invariant::I4, Invariant::I5, Invariant::I6};

/// `I1` .. `I6`.
QString invariantName(Invariant invariant);
/// The names of the invariants in `set`, in order, joined by ", " (e.g. `I2, I4`).
QString invariantNames(Invariants set);

/// One broken invariant at one place, named the same way whoever found it (the book's
/// check or a reconcile pass), so that two findings can be compared as sets. Build it with
/// at(): the fields an invariant is not about are left empty.
struct InvariantBreach {
    Invariant invariant = Invariant::I1;
    QString sku;      ///< I1-I5: the SKU
    int bucket = -1;  ///< I1-I4: the bucket
    QString order;    ///< I3, I6: the order

    /// I1, I2, I4: a bucket (`order` ignored); I3: an order's line or ledger row on a bucket;
    /// I5: a SKU (`bucket`, `order` ignored); I6: an order (`sku`, `bucket` ignored).
    static InvariantBreach at(Invariant invariant, const QString &sku, int bucket, const QString &order);
    /// e.g. `I3 A/0 o1`, for test failures and logs.
    QString toString() const;
    bool operator==(const InvariantBreach &) const = default;
};

inline size_t qHash(const InvariantBreach &b, size_t seed = 0)
{
    return qHashMulti(seed, unsigned(b.invariant), b.sku, b.bucket, b.order);
}

} // namespace flashstock
