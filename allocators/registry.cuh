#pragma once
// The allocators as type lists that gpuprobe-bench, the tests and tune iterate (cuCollections
// keeps one such list). Adding an allocator: its file (owner + trivially-copyable handle with a
// `name`) and one entry below.
#include "allocators/allocators.cuh"

#include <type_traits>

namespace gpuprobe::alloc {

template <class... A> struct type_list {};

// The allocator's name in benchmark names, tables and files ("rw_bm32", "rw_malloc").
template <class A> inline constexpr const char *name_of = A::handle_type::name;

// Random-Walk page allocators (the RW paper's Alg. 1-3, 5): get_page/free_page, TAS/WAS models.
using random_walk_allocators = type_list<rw, rw_bm<std::uint32_t>, rw_bm<unsigned long long>,
                                         corw<std::uint32_t>, corw<unsigned long long>, crw>;
// The page-allocator baselines they are judged against.
using baseline_page_allocators = type_list<queue, queue_warp, bump>;
// Size allocators: malloc(bytes)/free(ptr).
using size_allocators = type_list<rw_malloc, ouroboros_page, ouroboros_chunk, xmalloc, cuda_malloc>;

template <class... A, class... B>
constexpr type_list<A..., B...> concat(type_list<A...>, type_list<B...>) {
  return {};
}
using page_allocators = decltype(concat(random_walk_allocators{}, baseline_page_allocators{}));

// f(std::type_identity-like tag) for each type of the list, in order.
template <class T> struct tag { using type = T; };
template <class... A, class F> void for_each_type(type_list<A...>, F &&f) { (f(tag<A>{}), ...); }

// Every handle is passed by value to kernels: it must be trivially copyable.
template <class... A> constexpr bool handles_trivially_copyable(type_list<A...>) {
  return (std::is_trivially_copyable_v<typename A::handle_type> && ...);
}
static_assert(handles_trivially_copyable(page_allocators{}),
              "an allocator handle is not trivially copyable");
static_assert(handles_trivially_copyable(size_allocators{}),
              "an allocator handle is not trivially copyable");

} // namespace gpuprobe::alloc
