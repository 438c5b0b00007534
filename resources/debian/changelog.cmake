# Run at build time (cmake -P): writes OUT, a gzip -9n'ed Debian changelog with one entry for
# VERSION, dated by the last commit of SOURCE_DIR (so rebuilding the same commit gives the
# same file).   -DVERSION=... -DMAINTAINER=... -DSOURCE_DIR=... -DOUT=...
execute_process(COMMAND git -C "${SOURCE_DIR}" log -1 --format=%cD
                OUTPUT_VARIABLE date OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE status ERROR_QUIET)
execute_process(COMMAND git -C "${SOURCE_DIR}" describe --always --abbrev=12
                OUTPUT_VARIABLE revision OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT status EQUAL 0 OR date STREQUAL "")
  string(TIMESTAMP date "%a, %d %b %Y %H:%M:%S +0000" UTC)
  set(revision "unknown")
endif()
file(WRITE "${OUT}.txt" "flashstock (${VERSION}) unstable; urgency=medium\n\n  * FlashStock ${VERSION}, built from git ${revision}.\n\n -- ${MAINTAINER}  ${date}\n")
execute_process(COMMAND gzip -9n -c "${OUT}.txt" OUTPUT_FILE "${OUT}" RESULT_VARIABLE status)
file(REMOVE "${OUT}.txt")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "gzip ${OUT} failed")
endif()
