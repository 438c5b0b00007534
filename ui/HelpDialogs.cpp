#include "HelpDialogs.h"

#include <QAbstractTextDocumentLayout>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QFile>
#include <QRegularExpression>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextBrowser>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace flashstock {

ReadmeDialog::ReadmeDialog(QWidget *parent)
    : QDialog(parent)
{
    setWindowTitle(tr("FlashStock README"));
    auto *layout = new QVBoxLayout(this);
    m_browser = new QTextBrowser(this);
    m_browser->setOpenExternalLinks(false);
    QFile f(u":/readme/README.md"_s);
    QString text = f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll())
                                               : tr("The README is not built into this console.");
    // The screenshots stay in the source tree: name them instead of drawing them here.
    static const QRegularExpression image(u"!\\[([^\\]]*)\\]\\(([^)]*)\\)"_s);
    text.replace(image, u"*(screenshot: \\1, \\2)*"_s);
    m_browser->setMarkdown(text);
    layout->addWidget(m_browser, 1);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    resize(900, 700);
}

QStringList ReadmeDialog::sections() const
{
    QStringList out;
    for (QTextBlock b = m_browser->document()->begin(); b.isValid(); b = b.next())
        if (b.blockFormat().headingLevel() > 1)
            out << b.text();
    return out;
}

bool ReadmeDialog::showSection(const QString &heading)
{
    for (QTextBlock b = m_browser->document()->begin(); b.isValid(); b = b.next()) {
        if (b.blockFormat().headingLevel() == 0 || b.text() != heading)
            continue;
        QTextCursor c(b);
        m_browser->setTextCursor(c);
        const QRectF where = m_browser->document()->documentLayout()->blockBoundingRect(b);
        m_browser->verticalScrollBar()->setValue(int(where.top()));
        return true;
    }
    return false;
}

QString ReadmeDialog::currentSection() const
{
    const int top = m_browser->verticalScrollBar()->value();
    QString current;
    for (QTextBlock b = m_browser->document()->begin(); b.isValid(); b = b.next()) {
        if (m_browser->document()->documentLayout()->blockBoundingRect(b).top() > top + 1)
            break;
        if (b.blockFormat().headingLevel() > 0)
            current = b.text();
    }
    return current;
}

QString AboutText::html()
{
    return QCoreApplication::translate(
               "AboutText",
               "<h3>FlashStock console %1</h3>"
               "<p>Flash-sale inventory kept honest: a Redis gate in front of a SQL book of record, with a "
               "ledger that explains every unit.</p>"
               "<p><b>Licence:</b> %3, the GNU General Public License, version 3 or (at your option) any later "
               "version. You may copy, change and redistribute it under its terms; it comes with no warranty.</p>"
               "<p>Built with Qt %2 (LGPLv3), hiredis (BSD) and Qt Charts (GPLv3). Times are shown in UTC; "
               "your local time is in the tooltips.</p>")
        .arg(QCoreApplication::applicationVersion().toHtmlEscaped(), QString::fromLatin1(qVersion()),
             QStringLiteral(FLASHSTOCK_LICENSE));
}

} // namespace flashstock
