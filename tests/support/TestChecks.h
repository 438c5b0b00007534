#pragma once

#include "Result.h"

#include <QString>
#include <QTest>

#include <type_traits>
#include <utility>

namespace flashstock::test {

/// The one rule for a test that needs a server or tool it cannot have: under CI (the
/// environment variable CI is set, to any value, as .ci/run sets it) it fails loudly; on a
/// developer machine it is skipped. Every suite asks here (FS_REQUIRE), and so does the
/// benchmark runner.
bool missingServerFails();

/// The descriptors (numbers, as text) by which process `pid` holds file `path` open, read
/// from /proc/PID/fd: empty if none (or the process is gone).
QStringList descriptorsOn(qint64 pid, const QString &path);

/// The text a failed check of `result` prints: the expression and the error's code, field
/// and message.
template <typename R>
QString failureText(const R &result, const char *expr)
{
    if (result.has_value())
        return {};
    const Error &e = result.error();
    return QStringLiteral("%1 failed: %2%3: %4")
        .arg(QString::fromUtf8(expr), errorCodeName(e.code),
             e.field.isEmpty() ? QString() : QStringLiteral(" (field %1)").arg(e.field), e.message);
}

/// `result`'s value; if it holds an error instead, records a test failure that names
/// `expr` and the error, and returns a default value so the test goes on to its end (with
/// its other failures) instead of crashing on the dereference. Use through FS_OK.
template <typename R>
auto valueOr(R &&result, const char *expr, const char *file, int line)
{
    using T = typename std::remove_cvref_t<R>::value_type;
    if (result.has_value())
        return T(*std::forward<R>(result));
    QTest::qFail(qPrintable(failureText(result, expr)), file, line);
    return T{};
}

} // namespace flashstock::test

/// The value of a Result expression, checked: a failure is reported (expression and error),
/// never a crash. `QCOMPARE(FS_OK(book.levels(u"A"_s)).available, 5);`
#define FS_OK(expr) ::flashstock::test::valueOr((expr), #expr, __FILE__, __LINE__)

/// QVERIFY for a Result (any value type, void too): on failure prints the error and ends
/// the test function. Dereferencing the Result after it is safe.
#define FS_VERIFY_OK(expr)                                                                                         \
    do {                                                                                                           \
        const auto &fsChecked = (expr);                                                                            \
        QVERIFY2(fsChecked.has_value(), qPrintable(::flashstock::test::failureText(fsChecked, #expr)));            \
    } while (false)

/// Skips (developer machine) or fails (CI, see missingServerFails) the current test function
/// when `available` is false; `what` says what is missing (a C string).
#define FS_REQUIRE(available, what)                                                                                \
    do {                                                                                                           \
        if (!(available)) {                                                                                        \
            if (::flashstock::test::missingServerFails())                                                         \
                QFAIL(qPrintable(QStringLiteral("%1 (CI is set: a test that needs it must not skip)")              \
                                     .arg(QString::fromUtf8(what))));                                            \
            QSKIP(what);                                                                                           \
        }                                                                                                          \
    } while (false)
