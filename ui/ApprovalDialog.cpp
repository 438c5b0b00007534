#include "ApprovalDialog.h"

#include "ConsoleText.h"
#include "models/DiscrepancyModel.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// What applying `d`'s correction does to the book, for people.
QString effectOf(const Discrepancy &d)
{
    const QString bucket = QObject::tr("%1 bucket %2").arg(d.sku).arg(d.bucket);
    if (const auto *r = std::get_if<RestoreBucket>(&d.correction))
        return QObject::tr("Book figure of %1: %2 → %3 (%4), what its ledger explains.")
            .arg(bucket, levelsText(r->found), levelsText(r->ledger), levelChangesText(r->found, r->ledger));
    if (const auto *t = std::get_if<AcceptStocktake>(&d.correction))
        return QObject::tr("The book keeps its figure %1 for %2 (the count is accepted); its ledger moves from %3 to %1 "
                           "(%4) by a stocktake adjustment.")
            .arg(levelsText(t->found), bucket, levelsText(t->ledger), levelChangesText(t->ledger, t->found));
    if (const auto *m = std::get_if<MatchOrders>(&d.correction))
        return QObject::tr("Book figure of %1: %2 → %3 (%4): locked and sold as its orders hold; its ledger moves from "
                           "%5 to %3.")
            .arg(bucket, levelsText(m->found), levelsText(m->target), levelChangesText(m->found, m->target),
                 levelsText(m->ledger));
    if (const auto *c = std::get_if<ChangeOrderStatus>(&d.correction))
        return QObject::tr("Status of order %1: %2 → %3, as its ledger explains; no stock moves.")
            .arg(d.order, orderStatusName(c->from), orderStatusName(c->to));
    if (const auto *f = std::get_if<RecordRefund>(&d.correction))
        return QObject::tr("A refund of payment %1 on order %2 is recorded; no stock moves.").arg(f->payment, d.order);
    return QObject::tr("Nothing to apply: this discrepancy proposes no correction (set the book right by hand, then "
                       "reject it).");
}

/// Whether this approval applies the correction or is the first of two, by the policy.
QString whoApplies(const Discrepancy &d, const QString &operatorName, qint64 fourEyesUnits)
{
    if (const DecisionRecord *first = d.firstApproval()) {
        if (first->operatorName == operatorName)
            return QObject::tr("Four eyes: you gave the first approval at %1; a second, different approver applies it.")
                .arg(ConsoleText::utcTime(first->atMs, false));
        return QObject::tr("Four eyes: first approval by %1 at %2; this approval applies it, once, as a ledgered "
                           "adjustment signed by %3 (unless it comes from the first approver's account).")
            .arg(first->operatorName, ConsoleText::utcTime(first->atMs, false), operatorName);
    }
    const qint64 units = correctionUnits(d);
    if (fourEyesUnits >= 0 && units > fourEyesUnits)
        return QObject::tr("Four eyes: a correction of %1 units (above %2) needs two approvers. This is the first of two "
                           "approvals: it is recorded and changes nothing; a second, different approver applies it.")
            .arg(units)
            .arg(fourEyesUnits);
    if (fourEyesUnits >= 0)
        return QObject::tr("This approval applies it, once, as a ledgered adjustment signed by %1.").arg(operatorName);
    return QObject::tr("Signed by %1; applied once, unless the book's policy asks a second approver for a correction "
                       "of %2 units.")
        .arg(operatorName, QString::number(units));
}

} // namespace

ApprovalDialog::ApprovalDialog(const Discrepancy &d, bool approve, const QString &operatorName, qint64 fourEyesUnits,
                               QWidget *parent)
    : QDialog(parent)
    , m_id(d.id)
    , m_approve(approve)
    , m_correction(d.correction)
{
    setWindowTitle(approve ? tr("Approve correction #%1").arg(d.id) : tr("Reject discrepancy #%1").arg(d.id));
    auto *layout = new QVBoxLayout(this);
    auto *form = new QFormLayout;
    const QLocale loc;
    const auto units = [&](qint64 v) { return v < 0 ? tr("n/a") : loc.toString(v); };
    form->addRow(tr("Kind:"), new QLabel(DiscrepancyModel::kindText(d.kind), this));
    form->addRow(tr("SKU:"), new QLabel(d.bucket >= 0 ? tr("%1, bucket %2").arg(d.sku).arg(d.bucket) : d.sku, this));
    if (!d.order.isEmpty())
        form->addRow(tr("Order:"), new QLabel(d.order, this));
    form->addRow(tr("Gate / book / ledger:"),
                 new QLabel(u"%1 / %2 / %3"_s.arg(units(d.gateValue), units(d.bookValue), units(d.ledgerValue)), this));
    form->addRow(tr("Delta:"), new QLabel(d.delta > 0 ? u"+%1"_s.arg(loc.toString(d.delta)) : loc.toString(d.delta), this));
    layout->addLayout(form);

    QStringList change;
    if (approve) {
        if (!d.proposal.isEmpty())
            change << d.proposal;
        change << effectOf(d) << whoApplies(d, operatorName, fourEyesUnits)
               << tr("If the SKU moved since this list was read, nothing is applied: reconcile and decide again.");
    } else {
        change << tr("No stock moves: the book keeps its figures, signed by %1. While the book still shows this, it "
                     "stays pending with the next correction proposed (the SKU stays paused); otherwise it is "
                     "closed as rejected.")
                      .arg(operatorName);
    }
    m_summary = change.join(u'\n');
    auto *what = new QLabel(this);
    what->setTextFormat(Qt::PlainText);
    what->setWordWrap(true);
    what->setText(m_summary);
    what->setFrameShape(QFrame::StyledPanel);
    what->setMargin(8);
    layout->addWidget(new QLabel(tr("<b>What will change</b>"), this));
    layout->addWidget(what);

    auto *reasonLabel = new QLabel(tr("&Reason (required):"), this);
    m_reason = new QLineEdit(this);
    m_reason->setPlaceholderText(approve ? tr("e.g. stocktake of shelf 4 confirms the ledger") : tr("why not"));
    reasonLabel->setBuddy(m_reason);
    layout->addWidget(reasonLabel);
    layout->addWidget(m_reason);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    m_confirm = buttons->addButton(approve ? tr("&Approve") : tr("Re&ject"), QDialogButtonBox::AcceptRole);
    m_confirm->setEnabled(false);
    // Return in the reason field confirms (once a reason is typed); it never discards it.
    m_confirm->setDefault(true);
    buttons->button(QDialogButtonBox::Cancel)->setAutoDefault(false);
    layout->addWidget(buttons);
    connect(m_reason, &QLineEdit::textChanged, this,
            [this](const QString &text) { m_confirm->setEnabled(!text.trimmed().isEmpty()); });
    connect(buttons, &QDialogButtonBox::accepted, this, [this] {
        if (!reason().isEmpty())
            accept();
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    setMinimumWidth(520);
}

QString ApprovalDialog::reason() const
{
    return m_reason->text().trimmed();
}

} // namespace flashstock
