// flashstock: the operations console.

#include "MainWindow.h"
#include "cli/CliContext.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("flashstock"));
    QApplication::setApplicationVersion(QStringLiteral(FLASHSTOCK_VERSION));
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("FlashStock operations console"));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption dataDir(QStringLiteral("data-dir"), QStringLiteral("Where the embedded defaults live."),
                                     QStringLiteral("DIR"));
    const QCommandLineOption db(QStringLiteral("db"), QStringLiteral("Book of record URL."), QStringLiteral("URL"));
    parser.addOptions({dataDir, db});
    parser.process(app);
    QString dir = parser.value(dataDir);
    if (dir.isEmpty())
        dir = qEnvironmentVariable("FLASHSTOCK_DATA_DIR");
    if (dir.isEmpty())
        dir = flashstock::CliContext::defaultDataDir();
    const QString book = parser.isSet(db) ? parser.value(db)
                                          : QStringLiteral("sqlite:///") + QDir(dir).absoluteFilePath(QStringLiteral("flashstock.db"));
    flashstock::MainWindow window(book);
    window.show();
    return app.exec();
}
