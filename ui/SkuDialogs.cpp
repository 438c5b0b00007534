#include "SkuDialogs.h"

#include "Identifiers.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <limits>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

QString units(qint64 v)
{
    return QLocale().toString(v);
}

QSpinBox *unitsSpin(QWidget *parent, int min, int value)
{
    auto *s = new QSpinBox(parent);
    s->setRange(min, std::numeric_limits<int>::max());
    s->setValue(value);
    s->setGroupSeparatorShown(true);
    s->setSuffix(QObject::tr(" units"));
    return s;
}

} // namespace

// --- the frame -----------------------------------------------------------------------------

SkuChangeDialog::SkuChangeDialog(const QString &title, const QString &operatorName, QWidget *parent)
    : QDialog(parent)
    , m_operator(operatorName)
{
    setWindowTitle(title);
    auto *layout = new QVBoxLayout(this);
    m_form = new QFormLayout;
    m_form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    layout->addLayout(m_form);
    setMinimumWidth(480);
}

void SkuChangeDialog::finish(const QString &confirmText)
{
    auto *layout = static_cast<QVBoxLayout *>(this->layout());
    layout->addWidget(new QLabel(tr("<b>What will change</b>"), this));
    m_summary = new QLabel(this);
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setWordWrap(true);
    m_summary->setFrameShape(QFrame::StyledPanel);
    m_summary->setMargin(8);
    layout->addWidget(m_summary);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    m_confirm = buttons->addButton(confirmText, QDialogButtonBox::AcceptRole);
    // Return confirms (when the input is valid), never cancels what was typed.
    m_confirm->setDefault(true);
    buttons->button(QDialogButtonBox::Cancel)->setAutoDefault(false);
    connect(buttons, &QDialogButtonBox::accepted, this, [this] {
        if (m_confirm->isEnabled())
            accept();
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
}

QString SkuChangeDialog::summary() const
{
    return m_summary ? m_summary->text() : QString();
}

void SkuChangeDialog::setSummary(const QString &summary, bool ok, const QString &confirmText)
{
    m_summary->setText(summary);
    m_confirm->setEnabled(ok);
    if (!confirmText.isEmpty())
        m_confirm->setText(confirmText);
    fitHeight();
}

void SkuChangeDialog::showEvent(QShowEvent *event)
{
    QDialog::showEvent(event);
    fitHeight();
}

void SkuChangeDialog::resizeEvent(QResizeEvent *event)
{
    QDialog::resizeEvent(event);
    fitHeight();
}

void SkuChangeDialog::fitHeight()
{
    QLayout *l = layout();
    if (!isVisible() || !l->hasHeightForWidth())
        return;
    l->activate();
    const int need = l->totalHeightForWidth(width());
    setMinimumHeight(need);
    if (height() < need)
        resize(width(), need);
}

// --- add -----------------------------------------------------------------------------------

AddSkuDialog::AddSkuDialog(const QStringList &existing, const QString &operatorName, QWidget *parent)
    : SkuChangeDialog(tr("Add a SKU"), operatorName, parent)
    , m_existing(existing)
{
    m_sku = new QLineEdit(this);
    m_sku->setPlaceholderText(tr("e.g. PHONE-X-FLASH (letters, digits, . _ -; up to 64)"));
    m_sku->setMaxLength(kMaxSkuLength);
    form()->addRow(tr("&SKU:"), m_sku);
    m_stock = unitsSpin(this, 0, 100);
    form()->addRow(tr("Initial &stock:"), m_stock);
    m_buckets = new QSpinBox(this);
    m_buckets->setRange(1, 1024);
    m_buckets->setToolTip(tr("Buckets split a hot SKU's rows in the book, so reserves of it lock different rows"));
    form()->addRow(tr("&Buckets:"), m_buckets);
    finish(tr("&Add SKU"));
    connect(m_sku, &QLineEdit::textChanged, this, &AddSkuDialog::refresh);
    connect(m_stock, &QSpinBox::valueChanged, this, &AddSkuDialog::refresh);
    connect(m_buckets, &QSpinBox::valueChanged, this, &AddSkuDialog::refresh);
    refresh();
}

SkuChange AddSkuDialog::change() const
{
    SkuChange c;
    c.kind = SkuChange::Kind::Add;
    c.sku = m_sku->text().trimmed();
    c.units = m_stock->value();
    c.buckets = m_buckets->value();
    return c;
}

void AddSkuDialog::refresh()
{
    const SkuChange c = change();
    if (c.sku.isEmpty())
        return setSummary(tr("Give the SKU an id."), false);
    if (auto ok = checkSkuId(c.sku); !ok)
        return setSummary(ok.error().message, false);
    if (m_existing.contains(c.sku))
        return setSummary(tr("%1 exists already: restock it instead.").arg(c.sku), false);
    setSummary(tr("Creates SKU %1 with %2 units available in %n bucket(s), ledgered as its initial stock in the name "
                  "of %3. No sale yet: it sells normally until you launch one.",
                  nullptr, c.buckets)
                   .arg(c.sku, units(c.units), operatorName()),
               true);
}

// --- restock -------------------------------------------------------------------------------

RestockDialog::RestockDialog(const SkuSample &sku, const QString &operatorName, QWidget *parent)
    : SkuChangeDialog(tr("Restock %1").arg(sku.sku), operatorName, parent)
    , m_sku(sku)
{
    form()->addRow(tr("SKU:"), new QLabel(sku.sku, this));
    form()->addRow(tr("Available now:"), new QLabel(tr("%1 units (book)").arg(units(sku.available)), this));
    m_qty = unitsSpin(this, 1, 1);
    form()->addRow(tr("&Add:"), m_qty);
    m_reason = new QLineEdit(this);
    m_reason->setPlaceholderText(tr("required, e.g. delivery 4711 from the warehouse"));
    form()->addRow(tr("&Reason:"), m_reason);
    finish(tr("&Restock"));
    connect(m_qty, &QSpinBox::valueChanged, this, &RestockDialog::refresh);
    connect(m_reason, &QLineEdit::textChanged, this, &RestockDialog::refresh);
    refresh();
}

SkuChange RestockDialog::change() const
{
    SkuChange c;
    c.kind = SkuChange::Kind::Restock;
    c.sku = m_sku.sku;
    c.units = m_qty->value();
    c.reason = m_reason->text().trimmed();
    return c;
}

void RestockDialog::refresh()
{
    const SkuChange c = change();
    const QString figures = tr("Available of %1: %2 → %3 (+%4 units; total %5 → %6).")
                                .arg(c.sku, units(m_sku.available), units(m_sku.available + c.units), units(c.units),
                                     units(m_sku.total), units(m_sku.total + c.units));
    if (c.reason.isEmpty())
        return setSummary(figures + u"\n"_s + tr("A restock needs a reason for the ledger."), false,
                          tr("&Restock +%1").arg(units(c.units)));
    if (auto ok = checkName(c.reason, u"reason"_s); !ok)
        return setSummary(figures + u"\n"_s + ok.error().message, false);
    setSummary(figures + u"\n"_s
                   + tr("One ledgered restock adjustment in the name of %1, reason \"%2\"; the gate is raised by the "
                        "same units.")
                         .arg(operatorName(), c.reason),
               true, tr("&Restock +%1").arg(units(c.units)));
}

// --- buckets -------------------------------------------------------------------------------

BucketsDialog::BucketsDialog(const SkuSample &sku, const QString &operatorName, QWidget *parent)
    : SkuChangeDialog(tr("Buckets of %1").arg(sku.sku), operatorName, parent)
    , m_sku(sku)
{
    form()->addRow(tr("SKU:"), new QLabel(sku.sku, this));
    form()->addRow(tr("Buckets now:"), new QLabel(QString::number(sku.buckets), this));
    m_count = new QSpinBox(this);
    m_count->setRange(1, 1024);
    m_count->setValue(sku.buckets);
    form()->addRow(tr("&New count:"), m_count);
    finish(tr("&Change buckets"));
    connect(m_count, &QSpinBox::valueChanged, this, &BucketsDialog::refresh);
    refresh();
}

SkuChange BucketsDialog::change() const
{
    SkuChange c;
    c.kind = SkuChange::Kind::Buckets;
    c.sku = m_sku.sku;
    c.buckets = m_count->value();
    return c;
}

void BucketsDialog::refresh()
{
    const int n = m_count->value();
    if (n == m_sku.buckets)
        return setSummary(tr("%1 has %n bucket(s) already.", nullptr, n).arg(m_sku.sku), false);
    QString text = tr("%1: %2 → %n bucket(s); the %3 available units are spread evenly over them (about %4 each), "
                      "as one ledgered rebalance in the name of %5. Stock does not change.",
                      nullptr, n)
                       .arg(m_sku.sku)
                       .arg(m_sku.buckets)
                       .arg(units(m_sku.available), units(m_sku.available / n), operatorName());
    if (n < m_sku.buckets)
        text += u"\n"_s + tr("Buckets beyond %1 keep their locked and sold units until their orders end, and take no "
                             "new reserve.")
                              .arg(n);
    setSummary(text, true);
}

// --- rebalance -----------------------------------------------------------------------------

RebalanceDialog::RebalanceDialog(const SkuSample &sku, const QString &operatorName, QWidget *parent)
    : SkuChangeDialog(tr("Rebalance %1").arg(sku.sku), operatorName, parent)
    , m_sku(sku)
{
    form()->addRow(tr("SKU:"), new QLabel(sku.sku, this));
    m_from = new QComboBox(this);
    m_to = new QComboBox(this);
    for (const BucketLevels &b : sku.bucketLevels) {
        const QString label = tr("bucket %1 (%2 available)").arg(b.bucket).arg(units(b.available));
        m_from->addItem(label, b.bucket);
        m_to->addItem(label, b.bucket);
    }
    if (m_to->count() > 1)
        m_to->setCurrentIndex(1);
    form()->addRow(tr("&From:"), m_from);
    form()->addRow(tr("&To:"), m_to);
    m_qty = unitsSpin(this, 1, 1);
    form()->addRow(tr("&Move:"), m_qty);
    finish(tr("&Move units"));
    connect(m_from, &QComboBox::currentIndexChanged, this, &RebalanceDialog::refresh);
    connect(m_to, &QComboBox::currentIndexChanged, this, &RebalanceDialog::refresh);
    connect(m_qty, &QSpinBox::valueChanged, this, &RebalanceDialog::refresh);
    refresh();
}

SkuChange RebalanceDialog::change() const
{
    SkuChange c;
    c.kind = SkuChange::Kind::Rebalance;
    c.sku = m_sku.sku;
    c.from = m_from->currentData().toInt();
    c.to = m_to->currentData().toInt();
    c.units = m_qty->value();
    return c;
}

void RebalanceDialog::refresh()
{
    const SkuChange c = change();
    if (m_sku.bucketLevels.size() < 2)
        return setSummary(tr("%1 has one bucket: add buckets first (Buckets…).").arg(c.sku), false);
    if (c.from == c.to)
        return setSummary(tr("Pick two different buckets."), false);
    const BucketLevels &from = m_sku.bucketLevels.at(m_from->currentIndex());
    const BucketLevels &to = m_sku.bucketLevels.at(m_to->currentIndex());
    if (c.units > from.available)
        return setSummary(tr("Bucket %1 has only %2 available units.").arg(from.bucket).arg(units(from.available)),
                          false);
    setSummary(tr("Bucket %1: %2 → %3 available; bucket %4: %5 → %6 available. One ledgered rebalance in the name of "
                  "%7; the SKU's stock does not change.")
                   .arg(from.bucket)
                   .arg(units(from.available), units(from.available - c.units))
                   .arg(to.bucket)
                   .arg(units(to.available), units(to.available + c.units), operatorName()),
               true);
}

} // namespace flashstock
