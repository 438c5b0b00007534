#pragma once

#include "ConsoleTypes.h"

#include <QObject>
#include <QThread>

#include <atomic>
#include <memory>

namespace flashstock {

/// Runs drills for the console. Lives on its own thread (DrillController moves it there),
/// so a drill of several minutes blocks neither the GUI nor the EngineWorker's calls.
/// By default (DrillTarget::Scratch) a drill runs in a temporary data dir of its own: its
/// SQLite book and its own embedded redis-server (book-only if redis-server is not
/// installed), opened through EngineOpener and stopped and removed afterwards, so it never
/// touches the console's book or gate. DrillTarget::Console opens the console's profile
/// instead; the core refuses it while a sale is open there (checkDrillTarget).
class DrillRunner : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;

public slots:
    /// Runs one drill to the end (blocking this thread); reports progress and the outcome.
    /// `profile` is the console's (used for the Console target, and for the operator's name).
    /// Setting `*cancel` (any thread) winds the drill down early (DrillOptions::cancelled).
    void run(const flashstock::EngineProfile &profile, const flashstock::DrillRequest &request,
             std::shared_ptr<std::atomic<bool>> cancel = {});

signals:
    void progressed(const flashstock::DrillProgress &progress);
    void finished(const flashstock::DrillOutcome &outcome);
};

/// The GUI side of drills: owns the runner's thread; one drill at a time. GUI thread only.
/// The destructor cancels a drill in progress and joins the thread once it has wound down.
class DrillController : public QObject {
    Q_OBJECT
public:
    explicit DrillController(QObject *parent = nullptr);
    ~DrillController() override;

    DrillRunner *runner() const { return m_runner; }
    bool isRunning() const { return m_running; }
    /// Returns false (and does nothing) while a drill runs.
    bool start(const EngineProfile &profile, const DrillRequest &request);
    /// Asks the running drill to wind down early (its outcome says cancelled); the
    /// destructor does the same, so closing the console does not wait for a whole drill.
    void cancel();

private:
    QThread m_thread;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    DrillRunner *m_runner = nullptr;
    bool m_running = false;
};

} // namespace flashstock
