#pragma once
// Every allocator of gpuprobe (header-only). Page allocators: an owning host object `A` (RAII)
// and its trivially-copyable `A::handle_type`, passed by value to kernels, with
//   page_t get_page()            invalid_page when the pool is out of pages (never a duplicate)
//   page_t get_page(Steps& s)    the same, counting steps (alloc::count_steps)
//   void   free_page(page_t p)   (not bump)
//   char*  page_ptr(page_t p)    the page's memory
// Size allocators (rw_malloc, xmalloc, ouroboros_page/chunk, cuda_malloc): the same shape with
//   void*  malloc(std::size_t)   nullptr when out of memory
//   void   free(void*)
#include "allocators/corw.cuh"
#include "allocators/crw.cuh"
#include "allocators/cuda_malloc.cuh"
#include "allocators/ouroboros.cuh"
#include "allocators/queue.cuh"
#include "allocators/rw.cuh"
#include "allocators/rw_bm.cuh"
#include "allocators/rw_malloc.cuh"
#include "allocators/xmalloc.cuh"
