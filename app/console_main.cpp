// flashstock: the operations console.

#include "BuildInfo.h"
#include "MainWindow.h"
#include "ProfileSettings.h"
#include "ServerMonitor.h"
#include "open/ArgvSecrets.h"
#include "open/SecretFile.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QIcon>
#include <QTimer>

#include <csignal>

using namespace Qt::StringLiterals;

namespace {

/// The console's command line; described once, for --help and for the run.
void describe(QCommandLineParser &parser)
{
    parser.setApplicationDescription(u"FlashStock operations console"_s);
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOptions({
        {u"data-dir"_s, u"Where the embedded defaults live (else FLASHSTOCK_DATA_DIR, else XDG)."_s, u"DIR"_s},
        {u"db"_s, u"Book of record URL (default: SQLite flashstock.db in the data dir)."_s, u"URL"_s},
        {u"redis"_s, u"Gate URL, or none for book-only (default: the data dir's redis-server)."_s, u"URL"_s},
        {u"operator"_s, u"Operator name on ledger rows and approvals (default: the OS user)."_s, u"NAME"_s},
        {u"screenshot"_s, u"Render each view into DIR once data arrived, then exit."_s, u"DIR"_s},
        {u"token-file"_s,
         u"A bearer token with the read scope on FILE's first line (mode 0600; else FLASHSTOCK_TOKEN): the servers' "
         u"/metrics, for their request and error rates."_s,
         u"FILE"_s},
    });
    for (const flashstock::EngineProfile::Option &o : flashstock::EngineProfile::passwordFileOptions())
        parser.addOption({o.name, o.help, o.valueName});
}

/// --help and --version need no display: answer them before the GUI starts.
bool onlyAsksForHelp(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        const QByteArray a(argv[i]);
        if (a == "-h" || a == "--help" || a == "-?" || a == "--help-all" || a == "-v" || a == "--version")
            return true;
    }
    return false;
}

} // namespace

int main(int argc, char **argv)
{
    std::signal(SIGPIPE, SIG_IGN); // a Redis socket closed under us must not kill the console
    if (onlyAsksForHelp(argc, argv)) {
        QCoreApplication core(argc, argv);
        QCoreApplication::setApplicationName(u"flashstock"_s);
        QCoreApplication::setApplicationVersion(flashstock::versionLine());
        QCommandLineParser parser;
        describe(parser);
        parser.process(core); // prints and exits
        return 0;
    }
    QApplication app(argc, argv);
    QApplication::setApplicationName(u"flashstock"_s);
    QApplication::setApplicationVersion(flashstock::versionLine());
    // The desktop entry's id (Wayland's app id) and the icon it names, built into the binary.
    QGuiApplication::setDesktopFileName(u"io.flashstock.Console"_s);
    QIcon icon;
    for (int size : {16, 24, 32, 48, 64, 128, 256})
        icon.addFile(u":/icons/%1x%1/io.flashstock.Console.png"_s.arg(size));
    QApplication::setWindowIcon(icon);
    QCommandLineParser parser;
    describe(parser);
    // Parsed from a copy: the passwords leave argv (and ps) before the console opens anything.
    parser.process(app.arguments());
    for (const QString &warning : flashstock::wipeArgvPasswords(argc, argv))
        qWarning("%s", qPrintable(warning));
    const QString dataDir = u"data-dir"_s, db = u"db"_s, redis = u"redis"_s, op = u"operator"_s, shots = u"screenshot"_s;

    flashstock::EngineProfile profile;
    profile.dataDir = flashstock::EngineProfile::dataDirFor(parser.value(dataDir));
    profile.operatorName = flashstock::EngineProfile::osUserName();
    // The saved profile (File > Connection...), then the command line over it.
    profile = flashstock::ProfileSettings::load(profile);
    if (parser.isSet(db))
        profile.dbUrl = parser.value(db);
    if (parser.isSet(redis))
        profile.redisUrl = parser.value(redis);
    if (parser.isSet(op))
        profile.operatorName = parser.value(op);
    for (const flashstock::EngineProfile::Option &o : flashstock::EngineProfile::passwordFileOptions())
        if (parser.isSet(o.name))
            profile.setPasswordFile(o.name, parser.value(o.name));

    // The servers' /metrics token: refused, like every secret, from a file others can read.
    const auto token = flashstock::secretFromFileOrEnvironment(parser.value(u"token-file"_s), u"token-file"_s,
                                                               "FLASHSTOCK_TOKEN");
    if (!token) {
        qCritical("%s", qPrintable(token.error().message));
        return 2;
    }

    flashstock::MainWindow window(profile);
    window.serverMonitor()->setReadToken(token->toUtf8());
    if (parser.isSet(shots)) {
        window.takeScreenshots(parser.value(shots));
        QObject::connect(&window, &flashstock::MainWindow::screenshotsDone, &app,
                         [](bool ok) { QApplication::exit(ok ? 0 : 1); });
        QTimer::singleShot(120000, &app, [] {
            qWarning("screenshot: not done within 120 s");
            QApplication::exit(1);
        });
    }
    window.show();
    return app.exec();
}
