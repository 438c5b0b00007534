#pragma once

#include "HttpServer.h"

#include <optional>

namespace flashstock::server {

/// A request target as libmicrohttpd first hands it over (MHD_OPTION_URI_LOG_CALLBACK),
/// before it splits off the query and decodes it in place: where its C string ends and
/// whether it holds `%00`.
struct RawTarget {
    const char *begin = nullptr; ///< in libmicrohttpd's buffer (decoded in place right after: the path then)
    const char *end = nullptr;   ///< its first NUL: the NUL before the HTTP version, unless a NUL byte came first
    bool escapedNul = false;     ///< `%00` in it (decoded, a NUL would cut the path short)
    QByteArray withNul;          ///< a copy of it as received, kept only when it holds `%00` (for the access log)

    /// What `uri` (the callback's argument; nullptr: none) is.
    static RawTarget of(const char *uri);
};

/// The answer that refuses a request whose framing a proxy in front may read otherwise than
/// libmicrohttpd 0.9.75 does (it accepts all of these), or nothing for a well-framed one:
/// - 400 `path`: a NUL in the request target (`%00`, or a NUL byte, where libmicrohttpd's C
///   string ends the path early: `/v1/orders/o-1%00/confirm` would confirm `o-1`);
/// - 400 `header`: a NUL byte, a CR alone or another control character in the request line
///   or a header, a header name that is not a token (a space before its colon), or a header
///   folded over lines;
/// - 400 `content-length`: Content-Length given twice (libmicrohttpd reads the first), or
///   not all digits;
/// - 400 `transfer-encoding`: Transfer-Encoding given twice, or with a Content-Length;
/// - 501 `transfer-encoding`: a transfer coding other than `chunked`.
/// Every refusal carries `Connection: close`: nothing after it on the connection is read.
/// libmicrohttpd parses the request line and headers in place, in one buffer, turning each
/// line's CRLF, the space after the method and before the version and each header's colon
/// into NULs; what its C strings do not show (a NUL byte, a folded line) is found between
/// the strings it hands over. Call at a request's first access call (its headers complete),
/// on its request thread; `method`, `url` and `version` as that call got them.
std::optional<HttpReply> framingRefusal(MHD_Connection *connection, const char *method, const char *url,
                                        const char *version, const RawTarget &target);

} // namespace flashstock::server
