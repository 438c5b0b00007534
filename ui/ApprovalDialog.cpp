#include "ApprovalDialog.h"

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

ApprovalDialog::ApprovalDialog(const Discrepancy &d, bool approve, const QString &operatorName, QWidget *parent)
    : QDialog(parent)
    , m_id(d.id)
    , m_approve(approve)
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
        change << (d.proposal.isEmpty() ? tr("Apply the reconciler's correction.") : d.proposal);
        if (d.bookValue >= 0 && d.delta != 0)
            change << tr("Book figure of %1: %2 → %3 (%4 units).")
                          .arg(d.sku, loc.toString(d.bookValue), loc.toString(d.bookValue + d.delta),
                               d.delta > 0 ? u"+%1"_s.arg(d.delta) : QString::number(d.delta));
        change << tr("Applied once, as a ledgered adjustment signed by %1; the SKU is re-checked first if it moved.")
                      .arg(operatorName);
    } else {
        change << tr("No stock moves: the book keeps its figures. The discrepancy is closed as rejected, signed by %1.")
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
