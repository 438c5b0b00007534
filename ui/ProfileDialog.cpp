#include "ProfileDialog.h"

#include "ProfileSettings.h"
#include "gate/RedisUrl.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QUrl>
#include <QUrlQuery>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// The password written into `url` (userinfo, or a unix URL's `password=`), or empty.
QString typedPassword(const QString &url)
{
    const QUrl u(url.trimmed());
    if (!u.password().isEmpty())
        return u.password(QUrl::FullyDecoded);
    const QUrlQuery query(u);
    return query.queryItemValue(u"password"_s, QUrl::FullyDecoded);
}

/// A masked field for the password of one URL, and the move of a password typed into the URL.
QLineEdit *passwordField(QLineEdit *urlField, const QString &fromEnv, QWidget *parent)
{
    auto *field = new QLineEdit(parent);
    field->setEchoMode(QLineEdit::Password);
    field->setPlaceholderText(QObject::tr("empty: %1").arg(fromEnv));
    field->setToolTip(QObject::tr("Used for this session only, never saved"));
    QObject::connect(urlField, &QLineEdit::textEdited, field, [urlField, field](const QString &text) {
        const QString secret = typedPassword(text);
        if (secret.isEmpty())
            return;
        field->setText(secret);
        urlField->setText(ProfileSettings::stripPassword(text));
    });
    return field;
}

} // namespace

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
    m_book->setToolTip(tr("sqlite:///path/to/book.db or postgresql://user@host:5432/db; the password goes in the "
                          "masked field below (one typed into the URL moves there)"));
    form->addRow(tr("&Book:"), m_book);
    m_gateMode = new QComboBox(this);
    m_gateMode->addItem(tr("Embedded (the data dir's redis-server)"), int(GateEmbedded));
    m_gateMode->addItem(tr("None (book-only)"), int(GateNone));
    m_gateMode->addItem(tr("Redis URL"), int(GateUrl));
    form->addRow(tr("&Gate:"), m_gateMode);
    m_gate = new QLineEdit(this);
    m_gate->setPlaceholderText(tr("redis://host:6379/0 or unix:///path/redis.sock"));
    form->addRow(tr("Gate &URL:"), m_gate);
    m_bookPassword = passwordField(m_book, u"PGPASSWORD"_s, this);
    m_bookPassword->setText(typedPassword(profile.dbUrl));
    form->insertRow(1, tr("Book pass&word:"), m_bookPassword);
    m_gatePassword = passwordField(m_gate, u"FLASHSTOCK_REDIS_PASSWORD"_s, this);
    m_gatePassword->setText(typedPassword(profile.redisUrl));
    form->addRow(tr("Gate pa&ssword:"), m_gatePassword);
    m_operator = new QLineEdit(profile.operatorName, this);
    m_operator->setToolTip(tr("Written on ledger rows and approvals."));
    form->addRow(tr("&Operator:"), m_operator);
    layout->addLayout(form);

    auto *note = new QLabel(tr("Passwords are never saved: a password typed here is used for this session only, and "
                               "the profile (%1, group [console]) keeps the URLs without it. Left empty, the PostgreSQL "
                               "password comes from <b>PGPASSWORD</b> and the Redis password from "
                               "<b>FLASHSTOCK_REDIS_PASSWORD</b>. Applying reopens the session; the profile is saved "
                               "once it opens.")
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
    // Tab follows the form top to bottom: each password right after its URL.
    const QList<QWidget *> order{m_book,     m_bookPassword, m_gateMode, m_gate, m_gatePassword, m_operator,
                                 buttons->button(QDialogButtonBox::Ok), buttons->button(QDialogButtonBox::Cancel)};
    for (qsizetype i = 1; i < order.size(); ++i)
        QWidget::setTabOrder(order[i - 1], order[i]);
    resize(qMax(sizeHint().width(), 620), sizeHint().height());
}

void ProfileDialog::updateGateField()
{
    const bool url = m_gateMode->currentData().toInt() == GateUrl;
    m_gate->setEnabled(url);
    m_gatePassword->setEnabled(url);
}

EngineProfile ProfileDialog::profile() const
{
    EngineProfile p = m_base;
    // A password left in a URL field counts as typed into its password field.
    const auto secret = [](const QLineEdit *field, const QLineEdit *url) {
        return field->text().isEmpty() ? typedPassword(url->text()) : field->text();
    };
    p.dbUrl = ProfileSettings::stripPassword(m_book->text().trimmed());
    if (QUrl book(p.dbUrl); !secret(m_bookPassword, m_book).isEmpty() && book.isValid() && !book.host().isEmpty()) {
        book.setPassword(secret(m_bookPassword, m_book));
        p.dbUrl = book.toString();
    }
    switch (GateMode(m_gateMode->currentData().toInt())) {
    case GateEmbedded:
        p.redisUrl.clear();
        break;
    case GateNone:
        p.redisUrl = u"none"_s;
        break;
    case GateUrl:
        p.redisUrl = ProfileSettings::stripPassword(m_gate->text().trimmed());
        if (auto gate = RedisUrl::parse(p.redisUrl); gate && !secret(m_gatePassword, m_gate).isEmpty()) {
            gate->password = secret(m_gatePassword, m_gate);
            p.redisUrl = gate->toString();
        }
        break;
    }
    p.operatorName = m_operator->text().trimmed();
    return p;
}

} // namespace flashstock
