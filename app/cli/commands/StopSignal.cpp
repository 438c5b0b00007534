#include "StopSignal.h"

#include <QDeadlineTimer>
#include <QEventLoop>
#include <QThread>
#include <QTimer>
#include <QCoreApplication>

#include <csignal>

namespace flashstock {

namespace {

volatile std::sig_atomic_t g_stop = 0;

extern "C" void onStopSignal(int sig)
{
    if (g_stop) {
        // A second signal: the operator will not wait for the wind-down. Default action.
        std::signal(sig, SIG_DFL);
        std::raise(sig);
        return;
    }
    g_stop = 1;
}

} // namespace

void StopSignal::install()
{
    g_stop = 0;
    std::signal(SIGINT, onStopSignal);
    std::signal(SIGTERM, onStopSignal);
}

bool StopSignal::requested()
{
    return g_stop != 0;
}

bool StopSignal::wait(qint64 ms)
{
    QDeadlineTimer deadline(ms);
    while (!requested() && !deadline.hasExpired()) {
        // Short slices: a signal interrupts the sleep at most 50 ms late.
        const qint64 slice = qMin<qint64>(50, qMax<qint64>(1, deadline.remainingTime()));
        if (QCoreApplication::instance()) {
            QEventLoop loop;
            QTimer::singleShot(int(slice), &loop, &QEventLoop::quit);
            loop.exec();
        } else {
            QThread::msleep(quint64(slice));
        }
    }
    return !requested();
}

} // namespace flashstock
