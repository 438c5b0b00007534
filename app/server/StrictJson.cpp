#include "StrictJson.h"

#include "Identifiers.h"

#include <QString>
#include <QVarLengthArray>

#include <algorithm>
#include <optional>
#include <string_view>

using namespace Qt::StringLiterals;

namespace flashstock::server {

namespace {

/// QJsonDocument's nesting limit: a body it parsed is never deeper.
constexpr int kMaxDepth = 1024;

/// The text of a JSON string's content (between its quotes, well-formed), escapes decoded.
/// A `\uXXXX` is one UTF-16 unit, so an escaped pair makes one character and a lone
/// surrogate stays itself.
QString decoded(std::string_view raw)
{
    QString out;
    size_t run = 0;
    for (size_t i = 0; i + 1 < raw.size(); ++i) {
        if (raw[i] != '\\')
            continue;
        out += QString::fromUtf8(raw.substr(run, i - run));
        const char e = raw[++i];
        switch (e) {
        case 'b': out += u'\b'; break;
        case 'f': out += u'\f'; break;
        case 'n': out += u'\n'; break;
        case 'r': out += u'\r'; break;
        case 't': out += u'\t'; break;
        case 'u': {
            char16_t unit = 0;
            for (size_t k = 1; k <= 4 && i + k < raw.size(); ++k) {
                const char h = raw[i + k];
                unit = char16_t(unit * 16 + (h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10));
            }
            out += QChar(unit);
            i += 4;
            break;
        }
        default: out += QLatin1Char(e); // " \ /
        }
        run = i + 1;
    }
    return out + QString::fromUtf8(raw.substr(std::min(run, raw.size())));
}

/// The first value that `keys` holds twice, if one does (compared after sorting a copy).
template <typename Key>
std::optional<Key> repeated(QVarLengthArray<Key, 16> keys)
{
    std::sort(keys.begin(), keys.end());
    const auto twice = std::adjacent_find(keys.begin(), keys.end());
    if (twice == keys.end())
        return std::nullopt;
    return *twice;
}

/// One pass over a well-formed JSON text, depth first, keeping the path to where it is.
class Scanner {
public:
    explicit Scanner(QByteArrayView json)
        : m_s(json.data(), size_t(json.size()))
    {
    }

    Result<void> run()
    {
        skipSpace();
        value(0);
        if (m_error)
            return std::unexpected(*m_error);
        return {};
    }

private:
    /// One step of the path: an object's key (its raw text, escapes and all) or an index.
    struct Step {
        std::string_view key;
        qsizetype index = -1;
    };

    char peek() const { return m_pos < m_s.size() ? m_s[m_pos] : '\0'; }
    void skipSpace()
    {
        while (m_pos < m_s.size() && (m_s[m_pos] == ' ' || m_s[m_pos] == '\t' || m_s[m_pos] == '\n' || m_s[m_pos] == '\r'))
            ++m_pos;
    }

    bool value(int depth)
    {
        if (depth > kMaxDepth)
            return refuse(where(), u"nested more than %1 deep"_s.arg(kMaxDepth));
        switch (peek()) {
        case '{': return object(depth);
        case '[': return array(depth);
        case '"': {
            bool escaped = false;
            return string(escaped).has_value();
        }
        case 't':
        case 'f':
        case 'n':
            while (m_pos < m_s.size() && m_s[m_pos] >= 'a' && m_s[m_pos] <= 'z')
                ++m_pos;
            return true;
        default: return number();
        }
    }

    /// At a container's opening bracket: steps over it; true (and over `close` too) when the
    /// container is empty.
    bool empty(char close)
    {
        ++m_pos;
        skipSpace();
        if (peek() != close)
            return false;
        ++m_pos;
        return true;
    }

    /// After a member or an element: true past a `,` (another follows), false past `close`
    /// (the container ends); nothing for anything else (malformed).
    std::optional<bool> another(char close)
    {
        skipSpace();
        const char c = peek();
        if (c != ',' && c != close) {
            malformed();
            return std::nullopt;
        }
        ++m_pos;
        return c == ',';
    }

    bool object(int depth)
    {
        if (empty('}'))
            return true;
        QVarLengthArray<std::string_view, 16> keys;
        bool escapes = false;
        m_path.append(Step{});
        for (;;) {
            skipSpace();
            const std::optional<std::string_view> key = string(escapes);
            if (!key)
                return false;
            keys.append(*key);
            m_path.last().key = *key;
            skipSpace();
            if (peek() != ':')
                return malformed();
            ++m_pos;
            skipSpace();
            if (!value(depth + 1))
                return false;
            const std::optional<bool> more = another('}');
            if (!more)
                return false;
            if (!*more)
                break;
        }
        // A key written with escapes is compared as the text it stands for.
        QString twice;
        if (!escapes) {
            if (const auto key = repeated(keys))
                twice = QString::fromUtf8(*key);
        } else {
            QVarLengthArray<QString, 16> texts;
            for (const std::string_view key : keys)
                texts.append(decoded(key));
            if (const auto key = repeated(texts))
                twice = *key;
        }
        if (!twice.isNull()) {
            const QString parent = where(m_path.size() - 1);
            const QString field = parent.isEmpty() ? twice : parent + u'.' + twice;
            return refuse(field, u"given twice in one object (each field once: readers disagree on which one counts)"_s);
        }
        m_path.removeLast();
        return true;
    }

    bool array(int depth)
    {
        if (empty(']'))
            return true;
        m_path.append(Step{});
        for (qsizetype index = 0;; ++index) {
            m_path.last().index = index;
            skipSpace();
            if (!value(depth + 1))
                return false;
            const std::optional<bool> more = another(']');
            if (!more)
                return false;
            if (!*more)
                break;
        }
        m_path.removeLast();
        return true;
    }

    /// The content of the string at m_pos (between its quotes); sets `escaped` if it has an
    /// escape. Nothing if the text ends first.
    std::optional<std::string_view> string(bool &escaped)
    {
        if (peek() != '"') {
            malformed();
            return std::nullopt;
        }
        const size_t from = ++m_pos;
        while (m_pos < m_s.size() && m_s[m_pos] != '"') {
            if (m_s[m_pos] == '\\') {
                escaped = true;
                ++m_pos;
            }
            ++m_pos;
        }
        if (m_pos >= m_s.size()) {
            malformed();
            return std::nullopt;
        }
        return m_s.substr(from, m_pos++ - from);
    }

    bool number()
    {
        const size_t from = m_pos;
        bool integer = true;
        for (; m_pos < m_s.size(); ++m_pos) {
            const char c = m_s[m_pos];
            if (c == '.' || c == 'e' || c == 'E' || c == '+')
                integer = false;
            else if (c != '-' && (c < '0' || c > '9'))
                break;
        }
        if (m_pos == from)
            return malformed();
        if (integer)
            return true;
        return refuse(where(), u"must be written as a whole number (digits only, no fraction or exponent), got %1"_s.arg(
                                   quoteForMessage(QString::fromUtf8(m_s.substr(from, m_pos - from)))));
    }

    /// The field name of the path's first `steps` steps (all by default): `lines[0].qty`.
    QString where(qsizetype steps = -1) const
    {
        QString out;
        for (qsizetype i = 0; i < (steps < 0 ? m_path.size() : steps); ++i) {
            if (m_path[i].index >= 0)
                out += u'[' + QString::number(m_path[i].index) + u']';
            else
                out += (out.isEmpty() ? QString() : u"."_s) + decoded(m_path[i].key);
        }
        return out;
    }

    bool refuse(const QString &field, const QString &message)
    {
        const QString name = field.isEmpty() ? u"body"_s : field;
        m_error = Error{ErrorCode::InvalidArgument, u"%1: %2"_s.arg(name, message), name};
        return false;
    }
    bool malformed() { return refuse(u"body"_s, u"not valid JSON"_s); }

    std::string_view m_s;
    size_t m_pos = 0;
    QVarLengthArray<Step, 8> m_path;
    std::optional<Error> m_error;
};

} // namespace

Result<void> checkOneMeaning(QByteArrayView json)
{
    return Scanner(json).run();
}

} // namespace flashstock::server
