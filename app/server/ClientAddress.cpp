#include "ClientAddress.h"

#include <QHostAddress>
#include <QtEndian>

#include <netinet/in.h>

namespace flashstock::server {

namespace {

/// Bytes of an IPv6 address that name its /64.
constexpr qsizetype kPrefixBytes = 8;

} // namespace

QByteArray clientKey(const sockaddr *address)
{
    if (!address)
        return {};
    if (address->sa_family == AF_INET) {
        const auto *in4 = reinterpret_cast<const sockaddr_in *>(address);
        return QByteArray(reinterpret_cast<const char *>(&in4->sin_addr), sizeof in4->sin_addr);
    }
    if (address->sa_family == AF_INET6) {
        const auto *in6 = reinterpret_cast<const sockaddr_in6 *>(address);
        const auto *bytes = reinterpret_cast<const char *>(&in6->sin6_addr);
        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
            return QByteArray(bytes + 12, 4);
        return QByteArray(bytes, kPrefixBytes);
    }
    return {};
}

QString clientKeyText(const QByteArray &key)
{
    if (key.size() == 4)
        return QHostAddress(qFromBigEndian<quint32>(key.constData())).toString();
    if (key.size() == kPrefixBytes) {
        quint8 address[16] = {};
        std::copy(key.cbegin(), key.cend(), address);
        return QHostAddress(address).toString() + QStringLiteral("/64");
    }
    return QStringLiteral("-");
}

} // namespace flashstock::server
