#include "drill/DrillProbe.h"

#include "drill/DrillShared.h"

#include <QThread>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

constexpr qint64 kEveryNs = 100'000'000;

} // namespace

DrillProbe::DrillProbe(DrillChannelFactory channels, QString sku, qint64 holdSeconds)
    : m_channels(std::move(channels))
    , m_sku(std::move(sku))
    , m_holdSeconds(holdSeconds)
{
}

DrillProbe::~DrillProbe()
{
    stop();
}

void DrillProbe::start()
{
    m_thread = std::thread([this] { run(); });
}

void DrillProbe::stop()
{
    m_stop = true;
    if (m_thread.joinable())
        m_thread.join();
}

void DrillProbe::run()
{
    auto channel = m_channels();
    if (!channel) {
        std::lock_guard lock(m_mutex);
        m_problem = channel.error().message;
        return;
    }
    for (qint64 n = 1; !m_stop.load(); ++n) {
        Answer a;
        a.order = u"%1-p%2"_s.arg(m_sku).arg(n);
        a.sentNs = drillNowNs();
        auto r = (*channel)->reserve(a.order, u"probe"_s, m_sku, 1, m_holdSeconds);
        a.answeredNs = drillNowNs();
        a.reserved = r && *r == Outcome::Reserved;
        {
            std::lock_guard lock(m_mutex);
            m_answers.push_back(a);
        }
        const qint64 rest = a.sentNs + kEveryNs - drillNowNs();
        if (rest > 0)
            QThread::usleep(quint64(rest / 1000));
    }
}

std::optional<double> DrillProbe::outageAfter(qint64 startNs) const
{
    std::lock_guard lock(m_mutex);
    for (const Answer &a : m_answers)
        if (a.sentNs >= startNs && a.reserved)
            return double(a.answeredNs - startNs) / 1e9;
    return std::nullopt;
}

std::vector<DrillProbe::Answer> DrillProbe::answers() const
{
    std::lock_guard lock(m_mutex);
    return m_answers;
}

QString DrillProbe::problem() const
{
    std::lock_guard lock(m_mutex);
    return m_problem;
}

} // namespace flashstock
