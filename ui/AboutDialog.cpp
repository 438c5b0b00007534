#include "AboutDialog.h"

#include "BuildInfo.h"

#include <QApplication>
#include <QDialogButtonBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QUrl>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// The README sections an operator of the console reaches for, by their GitHub-style anchors.
struct ReadmeSection {
    const char *title;
    const char *anchor;
};
constexpr ReadmeSection kSections[] = {
    {QT_TRANSLATE_NOOP("AboutDialog", "The console"), "the-console"},
    {QT_TRANSLATE_NOOP("AboutDialog", "Install"), "install"},
    {QT_TRANSLATE_NOOP("AboutDialog", "Using the CLI"), "using-the-cli"},
    {QT_TRANSLATE_NOOP("AboutDialog", "Reconciliation and approval"), "reconciliation-and-approval"},
    {QT_TRANSLATE_NOOP("AboutDialog", "Using PostgreSQL"), "using-postgresql"},
};

} // namespace

AboutDialog::AboutDialog(QWidget *parent) : QDialog(parent)
{
    setWindowTitle(tr("About FlashStock"));

    auto *icon = new QLabel(this);
    icon->setPixmap(QApplication::windowIcon().pixmap(64, 64));
    icon->setAlignment(Qt::AlignTop);

    const QString readme = installedReadme();
    const QUrl readmeUrl = QUrl::fromLocalFile(readme);
    QString links;
    for (const ReadmeSection &s : kSections) {
        QUrl url = readmeUrl;
        url.setFragment(QString::fromLatin1(s.anchor));
        links += u"<li><a href=\"%1\">%2</a></li>"_s.arg(url.toString(), tr(s.title).toHtmlEscaped());
    }
    const QString readmeNote = QFileInfo::exists(readme)
        ? tr("README sections (%1):").arg(readme.toHtmlEscaped())
        : tr("README sections (%1, installed with the package; not found here):").arg(readme.toHtmlEscaped());

    auto *text = new QLabel(this);
    text->setTextFormat(Qt::RichText);
    text->setOpenExternalLinks(true);
    text->setTextInteractionFlags(Qt::TextBrowserInteraction);
    text->setText(u"<h3>%1</h3><p>%2</p><p>%3</p><p>%4<br>%5</p><p>%6</p><ul>%7</ul>"_s.arg(
        tr("FlashStock console").toHtmlEscaped(),
        tr("Flash-sale inventory that neither oversells nor undersells.").toHtmlEscaped(),
        tr("Version %1").arg(versionLine()).toHtmlEscaped(),
        tr("Licence: %1").arg(projectLicense()).toHtmlEscaped(),
        u"<a href=\"%1\">%1</a>"_s.arg(projectHomepage().toHtmlEscaped()),
        readmeNote, links));

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto *row = new QHBoxLayout;
    row->addWidget(icon);
    row->addSpacing(12);
    row->addWidget(text, 1);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(row);
    layout->addWidget(buttons);
}

} // namespace flashstock
