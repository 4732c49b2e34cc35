# BM_peers' public peers, built into gpuprobe-bench only from checkouts the user fetched
# (bench/peers/README.md has the clone commands): GPUPROBE_PEERS_DIR holds gallatin/, Ouroboros/
# and mallocMC/. Nothing of theirs is vendored; each is compiled in a library of its own, its
# headers as system headers (their warnings are not ours), and its commit is recorded in the
# benchmark JSON's context.
set(GPUPROBE_PEERS_DIR "" CACHE PATH
  "Folder with checkouts gallatin/, Ouroboros/ and mallocMC/ for gpuprobe-bench's BM_peers (bench/peers/README.md)")

function(gpuprobe_peer_commit dir out)
  execute_process(COMMAND git -C ${dir} rev-parse --short=12 HEAD OUTPUT_VARIABLE c
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT c)
    set(c "unknown (not a git checkout)")
  endif()
  set(${out} ${c} PARENT_SCOPE)
endfunction()

# One peer: its translation unit in a library of its own, its headers (`include`) as system
# headers, linked into gpuprobe-bench with GPUPROBE_HAVE_<TAG> and GPUPROBE_<TAG>_COMMIT.
function(gpuprobe_add_peer target source checkout include tag)
  add_library(${target} STATIC ${CMAKE_SOURCE_DIR}/bench/peers/${source})
  target_include_directories(${target} SYSTEM PRIVATE ${include})
  target_link_libraries(${target} PRIVATE gpuprobe_lib gpuprobe_allocators benchmark::benchmark)
  gpuprobe_warnings(${target})
  gpuprobe_peer_commit(${checkout} c)
  target_link_libraries(gpuprobe-bench PRIVATE ${target})
  target_compile_definitions(gpuprobe-bench PRIVATE GPUPROBE_HAVE_${tag}
    GPUPROBE_${tag}_COMMIT="${c}")
  set(_peer_commit ${c} PARENT_SCOPE)
endfunction()

if(GPUPROBE_PEERS_DIR)
  set(_peers_found "")
  set(_gallatin ${GPUPROBE_PEERS_DIR}/gallatin)
  if(EXISTS ${_gallatin}/include/gallatin/allocators/gallatin.cuh)
    gpuprobe_add_peer(gpuprobe_peer_gallatin gallatin_peer.cu ${_gallatin} ${_gallatin}/include
      GALLATIN)
    list(APPEND _peers_found "gallatin ${_peer_commit}")
  else()
    message(WARNING "GPUPROBE_PEERS_DIR: no Gallatin checkout at ${_gallatin}: BM_peers/gallatin is not built")
  endif()
  set(_ouro ${GPUPROBE_PEERS_DIR}/Ouroboros)
  if(EXISTS ${_ouro}/include/device/Ouroboros_impl.cuh)
    gpuprobe_add_peer(gpuprobe_peer_ouroboros ouroboros_peer.cu ${_ouro} ${_ouro}/include OUROBOROS)
    # compat/ first: its Statistics.h lets Ouroboros' compile with CUDA 13 (see the file); and,
    # as Ouroboros' own build (BaseCMake.cmake), constexpr device functions from host code.
    target_include_directories(gpuprobe_peer_ouroboros BEFORE PRIVATE
      ${CMAKE_SOURCE_DIR}/bench/peers/compat)
    target_compile_options(gpuprobe_peer_ouroboros PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)
    list(APPEND _peers_found "Ouroboros ${_peer_commit}")
  else()
    message(WARNING "GPUPROBE_PEERS_DIR: no Ouroboros checkout at ${_ouro}: BM_peers/ouroboros_* are not built")
  endif()
  # mallocMC (ScatterAlloc): its headers and alpaka's (bundled in its checkout, or a checkout
  # beside it), which need Boost's headers and the CUDA back-end's flags.
  set(_mmc ${GPUPROBE_PEERS_DIR}/mallocMC)
  set(_alpaka ${_mmc}/alpaka/include)
  if(NOT EXISTS ${_alpaka}/alpaka/alpaka.hpp)
    set(_alpaka ${GPUPROBE_PEERS_DIR}/alpaka/include)
  endif()
  find_package(Boost 1.74 QUIET)
  if(NOT EXISTS ${_mmc}/src/include/mallocMC/mallocMC.hpp)
    message(WARNING "GPUPROBE_PEERS_DIR: no mallocMC checkout at ${_mmc}: BM_peers/scatteralloc is not built")
  elseif(NOT EXISTS ${_alpaka}/alpaka/alpaka.hpp)
    message(WARNING "GPUPROBE_PEERS_DIR: mallocMC needs alpaka, found neither in ${_mmc}/alpaka nor at ${GPUPROBE_PEERS_DIR}/alpaka: BM_peers/scatteralloc is not built")
  elseif(NOT Boost_FOUND)
    message(WARNING "GPUPROBE_PEERS_DIR: mallocMC's alpaka needs Boost's headers >= 1.74 (libboost-dev): BM_peers/scatteralloc is not built")
  else()
    gpuprobe_add_peer(gpuprobe_peer_mallocmc mallocmc_peer.cu ${_mmc}
      "${_mmc}/src/include;${_alpaka};${Boost_INCLUDE_DIRS}" MALLOCMC)
    target_compile_definitions(gpuprobe_peer_mallocmc PRIVATE ALPAKA_ACC_GPU_CUDA_ENABLED)
    target_compile_options(gpuprobe_peer_mallocmc PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda --expt-relaxed-constexpr>)
    list(APPEND _peers_found "mallocMC ${_peer_commit}")
  endif()
  if(NOT _peers_found)
    message(FATAL_ERROR "GPUPROBE_PEERS_DIR=${GPUPROBE_PEERS_DIR} holds none of gallatin/, Ouroboros/, mallocMC/ (bench/peers/README.md)")
  endif()
  message(STATUS "BM_peers with: ${_peers_found}")
endif()
