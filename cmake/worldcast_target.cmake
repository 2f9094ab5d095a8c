# Shared compile settings for every worldcast target: warnings, sanitizers, include root.

set(WORLDCAST_ROOT ${CMAKE_CURRENT_SOURCE_DIR})

if(WORLDCAST_SANITIZE STREQUAL "address")
  set(WORLDCAST_SANITIZE_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer)
elseif(WORLDCAST_SANITIZE STREQUAL "thread")
  set(WORLDCAST_SANITIZE_FLAGS -fsanitize=thread -fno-omit-frame-pointer)
else()
  set(WORLDCAST_SANITIZE_FLAGS "")
endif()

# worldcast_setup_target(<target>): our warnings (errors in CI), the repository root on the
# include path (headers are included as "engine/game/world.h"), and the sanitizer flags.
function(worldcast_setup_target target)
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${WORLDCAST_ROOT}>)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-unused-parameter>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${WORLDCAST_WERROR}>>:-Werror>)
  if(WORLDCAST_SANITIZE_FLAGS)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${WORLDCAST_SANITIZE_FLAGS}>)
    # GCC's flow analysis sees the sanitizers' instrumentation as paths that skip a constructor
    # and reports libstdc++'s own std::function and std::regex as maybe-uninitialized (GCC 12);
    # the sanitizers themselves check what that warning guesses at.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-maybe-uninitialized>)
    endif()
    target_link_options(${target} PUBLIC ${WORLDCAST_SANITIZE_FLAGS})
  endif()
endfunction()
