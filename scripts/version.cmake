# Writes OUT = "#define ULTRASIM_VERSION ..." with the git revision of SOURCE_DIR (BASE+gREV[-dirty]),
# rewriting it only when it changed, so each build records the revision it was built from without
# recompiling anything when the revision is the same. Run by CMakeLists.txt at every build.
execute_process(COMMAND git describe --always --dirty --abbrev=10
                WORKING_DIRECTORY ${SOURCE_DIR} OUTPUT_VARIABLE git OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
set(version "${BASE}")
if(git)
  set(version "${BASE}+g${git}")
endif()
set(text "#define ULTRASIM_VERSION \"${version}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUT} "${text}")
endif()
