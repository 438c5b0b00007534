# The console's desktop integration, included from app/CMakeLists.txt (the flashstock target's
# directory, so the generated icons can be built into it): hicolor PNGs rendered from our SVG
# at build time (window icon and theme), the desktop entry and the AppStream metainfo.
find_program(RSVG_CONVERT rsvg-convert REQUIRED)
set(desktop_dir ${PROJECT_SOURCE_DIR}/resources/desktop)
set(app_id io.flashstock.Console)
set(icon_svg ${desktop_dir}/${app_id}.svg)

set(icon_pngs)
foreach(size 16 24 32 48 64 128 256)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/icons/${size}x${size})
  set(png ${dir}/${app_id}.png)
  add_custom_command(OUTPUT ${png}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${RSVG_CONVERT} --width=${size} --height=${size} --output=${png} ${icon_svg}
    DEPENDS ${icon_svg}
    COMMENT "Rendering the ${size}x${size} icon"
    VERBATIM)
  list(APPEND icon_pngs ${png})
  install(FILES ${png} DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps COMPONENT console)
endforeach()
# :/icons/SIZExSIZE/io.flashstock.Console.png, read by console_main.cpp for the window icon.
qt_add_resources(flashstock "window_icon"
  PREFIX "/icons"
  BASE ${CMAKE_CURRENT_BINARY_DIR}/icons
  FILES ${icon_pngs})
install(FILES ${icon_svg} DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps COMPONENT console)
install(FILES ${desktop_dir}/${app_id}.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications COMPONENT console)

# The metainfo names no homepage and no screenshot: AppStream wants web URLs for both, and
# the project publishes none yet (a field left out beats a false one).
string(TIMESTAMP FLASHSTOCK_RELEASE_DATE "%Y-%m-%d" UTC)
configure_file(${desktop_dir}/${app_id}.metainfo.xml.in ${CMAKE_CURRENT_BINARY_DIR}/${app_id}.metainfo.xml @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${app_id}.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo COMPONENT console)
