# Debian's hardening flags on every target of every build (CI's, the README's, the packages'):
# what `dpkg-buildflags` answers with DEB_BUILD_MAINT_OPTIONS=hardening=+all on this machine
# (Debian 12 amd64: -fstack-protector-strong, -D_FORTIFY_SOURCE=2, -Wformat
# -Werror=format-security, -Wdate-time, -Wl,-z,relro -Wl,-z,now; PIE is GCC's default there).
# Left out of its answer: -g and -O2 (the build type says how to optimise and whether to keep
# debug information) and -ffile-prefix-map (reproducible paths, not hardening). A Debug build
# (-O0) leaves out _FORTIFY_SOURCE, which works only when optimising (glibc warns otherwise).
# scripts/package.sh checks the packaged binaries (hardening-check, lintian's hardening tags).
find_program(DPKG_BUILDFLAGS dpkg-buildflags REQUIRED)
foreach(kind CPPFLAGS CXXFLAGS LDFLAGS)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env DEB_BUILD_MAINT_OPTIONS=hardening=+all
                          ${DPKG_BUILDFLAGS} --get ${kind}
                  OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE
                  COMMAND_ERROR_IS_FATAL ANY)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  list(FILTER flags EXCLUDE REGEX "^(-g|-O[0-9sgz]?|-ffile-prefix-map=.*)$")
  set(hardening_${kind} ${flags})
endforeach()
foreach(flag IN LISTS hardening_CPPFLAGS hardening_CXXFLAGS)
  if(flag MATCHES "^-D_FORTIFY_SOURCE=")
    add_compile_options($<$<NOT:$<CONFIG:Debug>>:${flag}>)
  else()
    add_compile_options(${flag})
  endif()
endforeach()
add_link_options(${hardening_LDFLAGS})
string(JOIN " " shown ${hardening_CPPFLAGS} ${hardening_CXXFLAGS} ${hardening_LDFLAGS})
message(STATUS "Hardening flags (dpkg-buildflags): ${shown}")
