# The packages' Maintainer (Debian requires one): whoever builds them says who they are with
# DEBFULLNAME and DEBEMAIL (as dch and debuild take them); else it is the author of the
# commit they are built from, the person who answers for that code. The project has no
# shared address to name.
set(FLASHSTOCK_MAINTAINER "" CACHE STRING "Maintainer of the Debian packages, Name <address> (empty: DEBFULLNAME <DEBEMAIL>, else the last commit's author)")
if(FLASHSTOCK_MAINTAINER STREQUAL "")
  if(DEFINED ENV{DEBFULLNAME} AND DEFINED ENV{DEBEMAIL})
    set(FLASHSTOCK_MAINTAINER "$ENV{DEBFULLNAME} <$ENV{DEBEMAIL}>")
  else()
    execute_process(COMMAND git -C "${PROJECT_SOURCE_DIR}" log -1 "--format=%an <%ae>"
                    OUTPUT_VARIABLE FLASHSTOCK_MAINTAINER OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE status ERROR_QUIET)
    if(NOT status EQUAL 0 OR FLASHSTOCK_MAINTAINER STREQUAL "")
      message(WARNING "No package maintainer: set DEBFULLNAME and DEBEMAIL, or -DFLASHSTOCK_MAINTAINER=\"Name <address>\"")
    endif()
  endif()
endif()
