#include "ProfileDialog.h"

#include "ProfileSettings.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace flashstock {

ProfileDialog::ProfileDialog(const EngineProfile &profile, QWidget *parent)
    : QDialog(parent)
    , m_base(profile)
{
    setWindowTitle(tr("Connection"));
    auto *layout = new QVBoxLayout(this);
    auto *form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_book = new QLineEdit(ProfileSettings::stripPassword(profile.dbUrl), this);
    m_book->setPlaceholderText(tr("empty: SQLite flashstock.db in %1").arg(profile.dataDir));
    m_book->setToolTip(tr("sqlite:///path/to/book.db or postgresql://user@host:5432/db"));
    form->addRow(tr("&Book:"), m_book);
    m_gateMode = new QComboBox(this);
    m_gateMode->addItem(tr("Embedded (the data dir's redis-server)"), int(GateEmbedded));
    m_gateMode->addItem(tr("None (book-only)"), int(GateNone));
    m_gateMode->addItem(tr("Redis URL"), int(GateUrl));
    form->addRow(tr("&Gate:"), m_gateMode);
    m_gate = new QLineEdit(this);
    m_gate->setPlaceholderText(tr("redis://host:6379/0 or unix:///path/redis.sock"));
    form->addRow(tr("Gate &URL:"), m_gate);
    m_operator = new QLineEdit(profile.operatorName, this);
    m_operator->setToolTip(tr("Written on ledger rows and approvals."));
    form->addRow(tr("&Operator:"), m_operator);
    layout->addLayout(form);

    auto *note = new QLabel(tr("Passwords are never saved: one typed into a URL is removed, and the profile "
                               "(%1, group [console]) keeps the URLs without it. At connect time the PostgreSQL password comes from <b>PGPASSWORD</b> and "
                               "the Redis password from <b>FLASHSTOCK_REDIS_PASSWORD</b>. Applying reopens "
                               "the session.")
                                .arg(ProfileSettings::filePath(profile.dataDir).toHtmlEscaped()),
                            this);
    note->setWordWrap(true);
    note->setTextFormat(Qt::RichText);
    layout->addWidget(note);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("&Apply and reconnect"));
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    const QString gate = profile.redisUrl.trimmed();
    if (gate.isEmpty()) {
        m_gateMode->setCurrentIndex(m_gateMode->findData(int(GateEmbedded)));
    } else if (gate == u"none"_s) {
        m_gateMode->setCurrentIndex(m_gateMode->findData(int(GateNone)));
    } else {
        m_gateMode->setCurrentIndex(m_gateMode->findData(int(GateUrl)));
        m_gate->setText(ProfileSettings::stripPassword(gate));
    }
    connect(m_gateMode, &QComboBox::currentIndexChanged, this, &ProfileDialog::updateGateField);
    updateGateField();
    resize(qMax(sizeHint().width(), 620), sizeHint().height());
}

void ProfileDialog::updateGateField()
{
    m_gate->setEnabled(m_gateMode->currentData().toInt() == GateUrl);
}

EngineProfile ProfileDialog::profile() const
{
    EngineProfile p = m_base;
    p.dbUrl = ProfileSettings::stripPassword(m_book->text().trimmed());
    switch (GateMode(m_gateMode->currentData().toInt())) {
    case GateEmbedded:
        p.redisUrl.clear();
        break;
    case GateNone:
        p.redisUrl = u"none"_s;
        break;
    case GateUrl:
        p.redisUrl = ProfileSettings::stripPassword(m_gate->text().trimmed());
        break;
    }
    p.operatorName = m_operator->text().trimmed();
    return p;
}

} // namespace flashstock
