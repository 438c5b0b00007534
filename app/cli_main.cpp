// flashstock-cli: the headless face of FlashStock, for scripts, cron and CI.

#include "BuildInfo.h"
#include "cli/Cli.h"
#include "open/ArgvSecrets.h"

#include <QCoreApplication>
#include <QTextStream>

#include <csignal>
#include <cstdio>

int main(int argc, char **argv)
{
    std::signal(SIGPIPE, SIG_IGN);
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("flashstock-cli"));
    QCoreApplication::setApplicationVersion(flashstock::versionLine());
    QTextStream out(stdout);
    QTextStream err(stderr);
    // Parsed from a copy: the passwords leave argv (and ps) before any work starts.
    const QStringList arguments = app.arguments().mid(1);
    for (const QString &warning : flashstock::wipeArgvPasswords(argc, argv))
        err << warning << '\n';
    err.flush();
    flashstock::Cli cli;
    return cli.run(arguments, out, err);
}
