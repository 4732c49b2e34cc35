# BM_peers' public peers, built into gpuprobe-bench only from checkouts the user fetched
# (bench/peers/README.md has the two clone commands): GPUPROBE_PEERS_DIR holds gallatin/ and
# Ouroboros/. Nothing of theirs is vendored; each is compiled in a library of its own, its
# headers as system headers (their warnings are not ours), and its commit is recorded in the
# benchmark JSON's context.
set(GPUPROBE_PEERS_DIR "" CACHE PATH
  "Folder with checkouts gallatin/ and Ouroboros/ for gpuprobe-bench's BM_peers (bench/peers/README.md)")

function(gpuprobe_peer_commit dir out)
  execute_process(COMMAND git -C ${dir} rev-parse --short=12 HEAD OUTPUT_VARIABLE c
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT c)
    set(c "unknown (not a git checkout)")
  endif()
  set(${out} ${c} PARENT_SCOPE)
endfunction()

if(GPUPROBE_PEERS_DIR)
  set(_peers_found "")
  set(_gallatin ${GPUPROBE_PEERS_DIR}/gallatin)
  if(EXISTS ${_gallatin}/include/gallatin/allocators/gallatin.cuh)
    add_library(gpuprobe_peer_gallatin STATIC ${CMAKE_SOURCE_DIR}/bench/peers/gallatin_peer.cu)
    target_include_directories(gpuprobe_peer_gallatin SYSTEM PRIVATE ${_gallatin}/include)
    target_link_libraries(gpuprobe_peer_gallatin PRIVATE gpuprobe_cuda gpuprobe_allocators
      benchmark::benchmark)
    gpuprobe_warnings(gpuprobe_peer_gallatin)
    gpuprobe_peer_commit(${_gallatin} _c)
    target_link_libraries(gpuprobe-bench PRIVATE gpuprobe_peer_gallatin)
    target_compile_definitions(gpuprobe-bench PRIVATE GPUPROBE_HAVE_GALLATIN
      GPUPROBE_GALLATIN_COMMIT="${_c}")
    list(APPEND _peers_found "gallatin ${_c}")
  else()
    message(WARNING "GPUPROBE_PEERS_DIR: no Gallatin checkout at ${_gallatin}: BM_peers/gallatin is not built")
  endif()
  set(_ouro ${GPUPROBE_PEERS_DIR}/Ouroboros)
  if(EXISTS ${_ouro}/include/device/Ouroboros_impl.cuh)
    add_library(gpuprobe_peer_ouroboros STATIC ${CMAKE_SOURCE_DIR}/bench/peers/ouroboros_peer.cu)
    # compat/ first: its Statistics.h lets Ouroboros' compile with CUDA 13 (see the file).
    target_include_directories(gpuprobe_peer_ouroboros PRIVATE ${CMAKE_SOURCE_DIR}/bench/peers/compat)
    target_include_directories(gpuprobe_peer_ouroboros SYSTEM PRIVATE ${_ouro}/include)
    target_link_libraries(gpuprobe_peer_ouroboros PRIVATE gpuprobe_cuda gpuprobe_allocators
      benchmark::benchmark)
    gpuprobe_warnings(gpuprobe_peer_ouroboros)
    # As Ouroboros' own build (BaseCMake.cmake): constexpr device functions from host code.
    target_compile_options(gpuprobe_peer_ouroboros PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)
    gpuprobe_peer_commit(${_ouro} _c)
    target_link_libraries(gpuprobe-bench PRIVATE gpuprobe_peer_ouroboros)
    target_compile_definitions(gpuprobe-bench PRIVATE GPUPROBE_HAVE_OUROBOROS
      GPUPROBE_OUROBOROS_COMMIT="${_c}")
    list(APPEND _peers_found "Ouroboros ${_c}")
  else()
    message(WARNING "GPUPROBE_PEERS_DIR: no Ouroboros checkout at ${_ouro}: BM_peers/ouroboros_* are not built")
  endif()
  if(NOT _peers_found)
    message(FATAL_ERROR "GPUPROBE_PEERS_DIR=${GPUPROBE_PEERS_DIR} holds neither gallatin/ nor Ouroboros/ (bench/peers/README.md)")
  endif()
  message(STATUS "BM_peers with: ${_peers_found}")
endif()
