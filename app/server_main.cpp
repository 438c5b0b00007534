// flashstock-server: the engine as a long-running service for storefronts and payment
// providers (HTTP/JSON, API v1). See app/server/Server.h.

#include "BuildInfo.h"
#include "server/Server.h"
#include "server/ServerLog.h"

#include <QCoreApplication>

#include <csignal>
#include <cstdio>

int main(int argc, char **argv)
{
    std::signal(SIGPIPE, SIG_IGN);
    // SIGTERM and SIGINT are taken by Server::run (sigwait); every thread started from here
    // inherits the mask, so no other thread is interrupted by them.
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, nullptr);

    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("flashstock-server"));
    QCoreApplication::setApplicationVersion(flashstock::versionLine());
    auto options = flashstock::server::ServerOptions::parse(app.arguments().mid(1));
    if (!options) {
        std::fprintf(stderr, "flashstock-server: %s\n", qPrintable(options.error().message));
        return 2;
    }
    if (options->help) {
        std::fputs(qPrintable(flashstock::server::ServerOptions::usage()), stdout);
        return 0;
    }
    if (options->version) {
        std::printf("flashstock-server %s\n", qPrintable(flashstock::versionLine()));
        return 0;
    }
    return flashstock::server::Server(std::move(*options)).run();
}
