#pragma once

#include <QDialog>
#include <QStringList>

class QTextBrowser;

namespace flashstock {

/// The README, as built into this console (so it matches its version), in a browser that
/// opens on one of its sections: Help > README sections. Screenshots are named, not drawn.
/// GUI thread.
class ReadmeDialog : public QDialog {
    Q_OBJECT
public:
    explicit ReadmeDialog(QWidget *parent = nullptr);

    /// The README's section headings, in order (`Using the CLI`, `A flash sale`, ...).
    QStringList sections() const;
    /// Scrolls so that section `heading` is at the top. False if there is no such section.
    bool showSection(const QString &heading);
    /// The heading of the section at the top of the view now.
    QString currentSection() const;
    QTextBrowser *browser() const { return m_browser; }

private:
    QTextBrowser *m_browser = nullptr;
};

/// Help > About: the console's name and version, its licence, and what it is built on.
/// GUI thread.
class AboutText {
public:
    /// The text of the About box (rich text).
    static QString html();
};

} // namespace flashstock
