#include "HttpFraming.h"

#include "ContractJson.h"
#include "Identifiers.h"

#include <QJsonDocument>

#include <cstring>

using namespace Qt::StringLiterals;

namespace flashstock::server {

namespace {

/// A character of a token (RFC 9110 `tchar`): what a header name is made of.
bool isTokenChar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
        || (c != '\0' && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr);
}

/// True when [from, to) is `min` to `max` NUL bytes: a line ending (CRLF or LF) as
/// libmicrohttpd leaves it in its buffer, or two of them.
bool onlyLineEnds(const char *from, const char *to, qsizetype min, qsizetype max)
{
    if (!from || !to || to - from < min || to - from > max)
        return false;
    for (const char *p = from; p < to; ++p)
        if (*p != '\0')
            return false;
    return true;
}

/// The headers of one request, in the order they came, checked where they lie in
/// libmicrohttpd's buffer.
struct HeaderScan {
    const char *lineEnd = nullptr; ///< where the text of the line before ends (its line ending follows)
    bool broken = false;           ///< a header is not shown whole by libmicrohttpd's strings
    int contentLengths = 0;
    int transferEncodings = 0;
    QByteArrayView contentLength;
    QByteArrayView transferEncoding;
};

MHD_Result scanHeader(void *cls, MHD_ValueKind, const char *key, size_t keySize, const char *value, size_t valueSize)
{
    auto &scan = *static_cast<HeaderScan *>(cls);
    // In place: the name starts right after the line before (and its line ending); its colon
    // became a NUL; spaces or tabs; the value; this line's ending.
    bool whole = keySize > 0 && onlyLineEnds(scan.lineEnd, key, 1, 2) && key[keySize] == '\0'
        && value >= key + keySize + 1;
    for (size_t i = 0; whole && i < keySize; ++i)
        whole = isTokenChar(key[i]);
    for (const char *p = key + keySize + 1; whole && p < value; ++p)
        whole = *p == ' ' || *p == '\t';
    for (size_t i = 0; whole && i < valueSize; ++i) {
        const auto c = uchar(value[i]);
        whole = (c >= 0x20 && c != 0x7f) || c == '\t';
    }
    if (!whole) {
        scan.broken = true;
        return MHD_NO;
    }
    scan.lineEnd = value + valueSize;
    const QByteArrayView name(key, qsizetype(keySize));
    if (name.compare(MHD_HTTP_HEADER_CONTENT_LENGTH, Qt::CaseInsensitive) == 0) {
        ++scan.contentLengths;
        scan.contentLength = QByteArrayView(value, qsizetype(valueSize));
    } else if (name.compare(MHD_HTTP_HEADER_TRANSFER_ENCODING, Qt::CaseInsensitive) == 0) {
        ++scan.transferEncodings;
        scan.transferEncoding = QByteArrayView(value, qsizetype(valueSize));
    }
    return MHD_YES;
}

/// A refusal: `status`, the error naming `field`, `Connection: close`.
HttpReply refusal(int status, const QString &field, const QString &message)
{
    HttpReply r;
    r.status = status;
    r.result = status == MHD_HTTP_NOT_IMPLEMENTED ? u"not_implemented"_s : u"bad_framing"_s;
    r.body = QJsonDocument(errorJson(Error{ErrorCode::InvalidArgument, field + u": "_s + message, field}))
                 .toJson(QJsonDocument::Compact);
    r.headers << std::pair{QByteArrayLiteral("Connection"), QByteArrayLiteral("close")};
    return r;
}

bool allDigits(QByteArrayView text)
{
    for (const char c : text)
        if (c < '0' || c > '9')
            return false;
    return !text.isEmpty();
}

} // namespace

RawTarget RawTarget::of(const char *uri)
{
    if (!uri)
        return {};
    const QByteArrayView text(uri, qsizetype(std::strlen(uri)));
    const bool escapedNul = text.contains("%00");
    return RawTarget{uri, uri + text.size(), escapedNul, escapedNul ? text.toByteArray() : QByteArray()};
}

std::optional<HttpReply> framingRefusal(MHD_Connection *connection, const char *method, const char *url,
                                        const char *version, const RawTarget &target)
{
    // The request line: the method, a NUL, spaces, the target up to the NUL before the
    // version. A NUL byte inside the target ended its C string early.
    if (target.escapedNul || !target.end || target.begin != url || target.end + 1 != version)
        return refusal(MHD_HTTP_BAD_REQUEST, u"path"_s,
                       u"the request target holds a NUL (%00 or a NUL byte), which would cut its path short"_s);
    const char *methodEnd = method + std::strlen(method);
    bool whole = methodEnd < url;
    for (const char *p = methodEnd + 1; whole && p < url; ++p)
        whole = *p == ' ';
    const MHD_ConnectionInfo *size = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    HeaderScan scan;
    scan.lineEnd = version + std::strlen(version);
    if (whole && size) {
        MHD_get_connection_values_n(connection, MHD_HEADER_KIND, &scanHeader, &scan);
        // The last header's line ending, then the empty line that ends the head.
        whole = !scan.broken && onlyLineEnds(scan.lineEnd, method + size->header_size, 2, 4);
    }
    if (!whole || !size)
        return refusal(MHD_HTTP_BAD_REQUEST, u"header"_s,
                       u"a NUL byte, a CR alone or another control character in the request line or a header, a "
                       u"header name that is not a token (a space before its colon), or a header folded over lines: "
                       u"its framing is ambiguous"_s);
    if (scan.contentLengths > 1)
        return refusal(MHD_HTTP_BAD_REQUEST, u"content-length"_s,
                       u"given %1 times; a request has one length"_s.arg(scan.contentLengths));
    if (scan.contentLengths == 1 && !allDigits(scan.contentLength))
        return refusal(MHD_HTTP_BAD_REQUEST, u"content-length"_s, u"must be digits only"_s);
    if (scan.transferEncodings > 1)
        return refusal(MHD_HTTP_BAD_REQUEST, u"transfer-encoding"_s, u"given more than once"_s);
    if (scan.transferEncodings == 1 && scan.contentLengths > 0)
        return refusal(MHD_HTTP_BAD_REQUEST, u"transfer-encoding"_s,
                       u"given with a Content-Length: a request's body has one framing"_s);
    if (scan.transferEncodings == 1 && scan.transferEncoding.compare("chunked", Qt::CaseInsensitive) != 0)
        return refusal(MHD_HTTP_NOT_IMPLEMENTED, u"transfer-encoding"_s,
                       u"only chunked is implemented, got %1"_s.arg(
                           quoteForMessage(QString::fromLatin1(scan.transferEncoding))));
    return std::nullopt;
}

} // namespace flashstock::server
