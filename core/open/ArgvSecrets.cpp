#include "open/ArgvSecrets.h"

#include <cstring>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// Overwrites [from, to) with '*'; true if anything was there.
bool wipe(char *from, char *to)
{
    if (to <= from)
        return false;
    std::memset(from, '*', size_t(to - from));
    return true;
}

/// Wipes the password of the one URL in `arg`; true if there was one.
bool wipeUrlPassword(char *arg)
{
    bool wiped = false;
    if (char *scheme = std::strstr(arg, "://")) {
        char *authority = scheme + 3;
        char *end = authority + std::strcspn(authority, "/?#");
        // The userinfo ends at the last '@' of the authority; its password after the first ':'.
        char *at = nullptr;
        for (char *p = authority; p < end; ++p)
            if (*p == '@')
                at = p;
        if (at) {
            char *colon = static_cast<char *>(std::memchr(authority, ':', size_t(at - authority)));
            if (colon)
                wiped = wipe(colon + 1, at) || wiped;
        }
    }
    for (char *p = std::strstr(arg, "password="); p; p = std::strstr(p + 1, "password=")) {
        char *value = p + std::strlen("password=");
        wiped = wipe(value, value + std::strcspn(value, "&#")) || wiped;
    }
    return wiped;
}

} // namespace

QStringList wipeArgvPasswords(int argc, char **argv)
{
    QStringList warnings;
    for (int i = 1; i < argc; ++i) {
        if (!argv[i] || !wipeUrlPassword(argv[i]))
            continue;
        warnings << u"warning: argument %1 carried a password, visible to every local user in ps; it was wiped "
                    u"from this process's arguments. Give it in the environment (PGPASSWORD, "
                    u"FLASHSTOCK_REDIS_PASSWORD) or a file only you can read (--db-password-file, "
                    u"--redis-password-file) instead"_s.arg(i);
    }
    return warnings;
}

} // namespace flashstock
