# Debian packages by CPack, one per install component (scripts/package.sh runs cpack):
#   flashstock-tools    flashstock-cli, flashstock-server, the systemd units, bash and zsh
#                       completion, the monitoring files (alert rules, dashboard)
#   flashstock-console  flashstock, the desktop entry, icons and AppStream metainfo
# A server box installs the tools without any GUI library; a desk installs the console. Both
# are complete on their own (the core is linked in statically, the Lua scripts and SQL
# migrations are Qt resources), so there is no common package to share.
# What the packages install, built without the tests (scripts/package.sh builds this target;
# cpack and cmake --install then build nothing more).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
add_custom_target(flashstock_installed)
add_dependencies(flashstock_installed flashstock-cli flashstock-server flashstock_docs flashstock_debian_changelog)
if(FLASHSTOCK_GUI)
  add_dependencies(flashstock_installed flashstock)
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME flashstock)
set(CPACK_PACKAGE_VENDOR "${FLASHSTOCK_VENDOR}")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "${FLASHSTOCK_MAINTAINER}")
set(CPACK_OUTPUT_FILE_PREFIX "${CMAKE_BINARY_DIR}/packages")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL tools)
if(FLASHSTOCK_GUI)
  list(APPEND CPACK_COMPONENTS_ALL console)
endif()

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${FLASHSTOCK_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# Dependencies dpkg-shlibdeps cannot see: Qt loads its SQL drivers (and the console's
# platform plugin) at run time. The embedded default is a SQLite book and a private
# redis-server; a box that points --redis at a shared Redis needs no local redis-server.
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME flashstock-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "libqt6sql6-sqlite")
set(CPACK_DEBIAN_TOOLS_PACKAGE_RECOMMENDS "redis-server, libqt6sql6-psql")
set(CPACK_DEBIAN_TOOLS_PACKAGE_CONTROL_EXTRA
    "${PROJECT_SOURCE_DIR}/resources/debian/tools/postinst;${PROJECT_SOURCE_DIR}/resources/debian/tools/postrm")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
"FlashStock flash-sale inventory: command line and services
FlashStock keeps flash-sale inventory honest: a Redis gate pre-deducts stock
atomically in front of a SQL book of record (SQLite or PostgreSQL), and a
reconciler heals what faults leave behind, so nothing is oversold or stuck.
.
This package holds the headless tools, with no GUI libraries: flashstock-cli
(stock, orders, sales, the gate, the rehearsal drill, reconciliation, access
tokens) with its bash and zsh completion, flashstock-server (API v1 over HTTP
for storefronts and payment providers, Prometheus metrics, with alert rules and
a Grafana dashboard for them), and systemd units for the server and a periodic
reconcile pass, installed disabled.")

set(CPACK_DEBIAN_CONSOLE_PACKAGE_NAME flashstock-console)
set(CPACK_DEBIAN_CONSOLE_PACKAGE_SECTION misc)
set(CPACK_DEBIAN_CONSOLE_PACKAGE_DEPENDS "libqt6sql6-sqlite, qt6-qpa-plugins")
set(CPACK_DEBIAN_CONSOLE_PACKAGE_RECOMMENDS "redis-server, libqt6sql6-psql")
set(CPACK_COMPONENT_CONSOLE_DESCRIPTION
"FlashStock flash-sale inventory: operations console
FlashStock keeps flash-sale inventory honest: a Redis gate pre-deducts stock
atomically in front of a SQL book of record (SQLite or PostgreSQL), and a
reconciler heals what faults leave behind, so nothing is oversold or stuck.
.
This package holds the desktop console: live stock of every SKU, sales and
their launch, reconciliation with approval of book corrections, the ledger
and the rehearsal drill.")

include(CPack)
