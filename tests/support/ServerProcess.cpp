#include "support/ServerProcess.h"

#include "store/AccessTokenStore.h"
#include "store/Database.h"

#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRegularExpression>
#include <QTimer>

#include <algorithm>
#include <csignal>

using namespace Qt::StringLiterals;

namespace flashstock::test {

ServerProcess::ServerProcess(const DbUrl &book, const std::optional<RedisUrl> &gate, QStringList extraArgs)
    : m_extra(std::move(extraArgs))
    , m_env(QProcessEnvironment::systemEnvironment())
{
    if (book.dialect == Dialect::Sqlite) {
        m_bookArg = u"sqlite:///"_s + QDir(book.path).absolutePath();
    } else {
        m_bookArg = book.display();
        m_env.insert(u"PGPASSWORD"_s, book.password);
    }
    m_gateArg = gate ? gate->toString() : u"none"_s;
    m_env.remove(u"FLASHSTOCK_DATA_DIR"_s);
    m_env.remove(u"JOURNAL_STREAM"_s);
}

ServerProcess::~ServerProcess()
{
    if (isRunning()) {
        m_process->kill();
        m_process->waitForFinished(5000);
    }
}

QString ServerProcess::binary()
{
    return QStringLiteral(FLASHSTOCK_SERVER_PATH);
}

QString ServerProcess::baseUrl() const
{
    return u"http://127.0.0.1:%1"_s.arg(m_port);
}

QStringList ServerProcess::arguments() const
{
    return QStringList{u"--data-dir"_s, m_dir.path(), u"--db"_s, m_bookArg, u"--redis"_s, m_gateArg,
                       u"--listen"_s, u"127.0.0.1:%1"_s.arg(m_port), u"--operator"_s, u"tester"_s}
        + m_extra;
}

bool ServerProcess::start()
{
    m_process = std::make_unique<QProcess>();
    m_process->setProcessEnvironment(m_env);
    m_process->setProcessChannelMode(QProcess::SeparateChannels);
    m_process->setReadChannel(QProcess::StandardError);
    m_log.clear();
    m_process->start(binary(), arguments());
    if (!m_process->waitForStarted(5000)) {
        m_error = u"flashstock-server did not start: "_s + m_process->errorString();
        return false;
    }
    static const QRegularExpression started(u"listening on http://127\\.0\\.0\\.1:(\\d+)"_s);
    QElapsedTimer waited;
    waited.start();
    while (waited.elapsed() < 15000) {
        m_process->waitForReadyRead(100);
        m_log += m_process->readAllStandardError();
        if (const auto m = started.match(QString::fromUtf8(m_log)); m.hasMatch()) {
            m_port = m.captured(1).toInt();
            return true;
        }
        if (m_process->state() == QProcess::NotRunning) {
            m_error = u"flashstock-server exited with %1: %2"_s.arg(m_process->exitCode()).arg(QString::fromUtf8(m_log));
            return false;
        }
    }
    m_error = u"flashstock-server did not say it listens within 15 s: "_s + QString::fromUtf8(m_log);
    return false;
}

void ServerProcess::terminate()
{
    if (isRunning())
        ::kill(pid_t(m_process->processId()), SIGTERM);
}

void ServerProcess::kill()
{
    if (isRunning()) {
        m_process->kill();
        m_process->waitForFinished(5000);
    }
}

int ServerProcess::waitForExit(int ms)
{
    if (!m_process)
        return -1;
    if (!m_process->waitForFinished(ms) && m_process->state() != QProcess::NotRunning)
        return -1;
    log();
    return m_process->exitStatus() == QProcess::NormalExit ? m_process->exitCode() : -1;
}

bool ServerProcess::isRunning() const
{
    return m_process && m_process->state() != QProcess::NotRunning;
}

qint64 ServerProcess::pid() const
{
    return m_process ? m_process->processId() : 0;
}

QString ServerProcess::log()
{
    if (m_process)
        m_log += m_process->readAllStandardError();
    return QString::fromUtf8(m_log);
}

HttpAnswer http(const QByteArray &method, const QString &url, const QByteArray &body, const QString &token,
                const QByteArray &contentType, int timeoutMs)
{
    static thread_local QNetworkAccessManager manager;
    QNetworkRequest request{QUrl(url)};
    if (!token.isEmpty())
        request.setRawHeader("Authorization", "Bearer " + token.toLatin1());
    if (!contentType.isEmpty())
        request.setRawHeader("Content-Type", contentType);
    QNetworkReply *reply = manager.sendCustomRequest(request, method, body);
    QEventLoop loop;
    QTimer timeout;
    timeout.setSingleShot(true);
    QObject::connect(&timeout, &QTimer::timeout, &loop, &QEventLoop::quit);
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    timeout.start(timeoutMs);
    if (!reply->isFinished())
        loop.exec();
    HttpAnswer a;
    if (!reply->isFinished()) {
        a.error = u"no answer within %1 ms"_s.arg(timeoutMs);
        reply->abort();
    }
    a.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    a.body = reply->readAll();
    for (const auto &[name, value] : reply->rawHeaderPairs())
        a.headers.insert(name.toLower(), value);
    a.json = QJsonDocument::fromJson(a.body).object();
    if (a.status == 0 && a.error.isEmpty())
        a.error = reply->errorString();
    reply->deleteLater();
    return a;
}

HttpCrowd::HttpCrowd(const QString &baseUrl, const QString &token, QList<CurlRequest> requests, int clients)
    : m_baseUrl(baseUrl)
    , m_token(token)
    , m_requests(std::move(requests))
    , m_clients(std::max(1, clients))
{
}

HttpCrowd::~HttpCrowd()
{
    for (auto &p : m_processes)
        if (p->state() != QProcess::NotRunning) {
            p->kill();
            p->waitForFinished(5000);
        }
}

QString HttpCrowd::outputOf(qsizetype request) const
{
    return u"%1/%2.json"_s.arg(m_dir.path()).arg(request);
}

bool HttpCrowd::start()
{
    auto quoted = [](QByteArray text) { return '"' + text.replace('\\', "\\\\").replace('"', "\\\"") + '"'; };
    for (int c = 0; c < m_clients; ++c) {
        QFile config(u"%1/client-%2.cfg"_s.arg(m_dir.path()).arg(c));
        if (!config.open(QIODevice::WriteOnly | QIODevice::Truncate, QFileDevice::ReadOwner | QFileDevice::WriteOwner)) {
            m_error = config.errorString();
            return false;
        }
        bool first = true;
        for (qsizetype i = c; i < m_requests.size(); i += m_clients) {
            const CurlRequest &r = m_requests[i];
            if (!first)
                config.write("next\n");
            first = false;
            config.write("url = " + quoted((m_baseUrl + r.path).toUtf8()) + "\n");
            config.write("request = " + r.method + "\n");
            config.write("header = \"Authorization: Bearer " + m_token.toLatin1() + "\"\n");
            if (!r.body.isEmpty()) {
                config.write("header = \"Content-Type: application/json\"\n");
                config.write("data = " + quoted(r.body) + "\n");
            }
            config.write("output = " + quoted(outputOf(i).toUtf8()) + "\n");
        }
        config.close();
        auto curl = std::make_unique<QProcess>();
        // Errors show as missing answers; curl 7.88 draws its --parallel meter despite --silent.
        curl->setStandardErrorFile(QProcess::nullDevice());
        curl->setStandardOutputFile(QProcess::nullDevice());
        curl->start(u"curl"_s, {u"--silent"_s, u"--parallel"_s, u"--parallel-immediate"_s, u"--parallel-max"_s, u"300"_s, u"--max-time"_s,
                                u"60"_s, u"--config"_s, config.fileName()});
        if (!curl->waitForStarted(5000)) {
            m_error = u"curl did not start: "_s + curl->errorString();
            return false;
        }
        m_processes.push_back(std::move(curl));
    }
    return true;
}

bool HttpCrowd::waitForFinished(int ms)
{
    QElapsedTimer t;
    t.start();
    for (auto &p : m_processes)
        if (!p->waitForFinished(int(std::max<qint64>(1, ms - t.elapsed()))) && p->state() != QProcess::NotRunning)
            return false;
    return true;
}

QList<QJsonObject> HttpCrowd::answers() const
{
    QList<QJsonObject> out;
    for (qsizetype i = 0; i < m_requests.size(); ++i) {
        QFile f(outputOf(i));
        out << (f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject());
    }
    return out;
}

QList<QJsonObject> sendAtOnce(const QString &baseUrl, const QString &token, const QList<CurlRequest> &requests,
                              int clients)
{
    HttpCrowd crowd(baseUrl, token, requests, clients);
    if (!crowd.start()) {
        qWarning("clients did not start: %s", qPrintable(crowd.errorString()));
        return {};
    }
    if (!crowd.waitForFinished(60000)) {
        qWarning("clients did not finish within 60 s");
        return {};
    }
    return crowd.answers();
}

int countResults(const QList<QJsonObject> &answers, const QString &result)
{
    return int(std::count_if(answers.cbegin(), answers.cend(),
                             [&](const QJsonObject &a) { return a.value(u"result"_s).toString() == result; }));
}

QString addAccessToken(Engine &engine, const QString &name, AccessScopes scopes)
{
    const QString secret = newAccessSecret();
    auto added = AccessTokenStore(engine.database()).add(name, scopes, accessSecretHash(secret.toLatin1()), u"tester"_s);
    if (!added) {
        qWarning("token %s not added: %s", qPrintable(name), qPrintable(added.error().message));
        return {};
    }
    return secret;
}

bool StockSnapshot::operator==(const StockSnapshot &o) const
{
    if (ledgerRows != o.ledgerRows || skus.size() != o.skus.size())
        return false;
    for (qsizetype i = 0; i < skus.size(); ++i) {
        const auto &[a, b] = skus[i].second;
        const auto &[c, d] = o.skus[i].second;
        if (skus[i].first != o.skus[i].first || a.available != c.available || a.locked != c.locked
            || a.sold != c.sold || a.total != c.total || b != d)
            return false;
    }
    return true;
}

StockSnapshot snapshot(Engine &engine, const QStringList &skus)
{
    StockSnapshot s;
    s.ledgerRows = engine.book().ledgerCount().value_or(-1);
    for (const QString &sku : skus)
        s.skus.append({sku, {engine.book().levels(sku).value_or(SkuLevels{}), engine.gateLevels(sku).available}});
    return s;
}

char *toString(const StockSnapshot &s)
{
    QString text = u"ledger rows %1"_s.arg(s.ledgerRows);
    for (const auto &[sku, levels] : s.skus)
        text += u"; %1 book %2/%3/%4 of %5, gate %6"_s.arg(sku).arg(levels.first.available).arg(levels.first.locked)
                    .arg(levels.first.sold).arg(levels.first.total).arg(levels.second);
    return qstrdup(qPrintable(text));
}

} // namespace flashstock::test
