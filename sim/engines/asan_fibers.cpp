// Built only with ULTRASIM_SANITIZE (CMakeLists.txt), into ultrasim_collectives, where collectives/ and
// sim/ are compiled with BOOST_USE_UCONTEXT and BOOST_USE_ASAN: the chip fibers (the α-β clock's, the
// contention-free engine's) then switch with swapcontext and tell AddressSanitizer about every switch
// (__sanitizer_start/finish_switch_fiber), so that ASan keeps checking the fibers' stacks instead of
// reporting false stack overflows or losing track of the stack on an exception. Debian's libboost_context is
// built for fcontext and lacks the one out-of-line function the ucontext fibers call; it is defined here.
#if !defined(BOOST_USE_UCONTEXT) || !defined(BOOST_USE_ASAN)
#error "sim/engines/asan_fibers.cpp belongs to sanitizer builds only (BOOST_USE_UCONTEXT and BOOST_USE_ASAN)"
#endif

#include <memory>

#include <boost/context/fiber.hpp>

namespace boost::context::detail {

// The record of the context running on this thread. Each thread's own context gets a record the first
// time the thread asks, freed when the thread ends.
fiber_activation_record*& fiber_activation_record::current() noexcept {
  struct ThreadContext {
    std::unique_ptr<fiber_activation_record> own = std::make_unique<fiber_activation_record>();
    fiber_activation_record* running = own.get();
  };
  thread_local ThreadContext context;
  return context.running;
}

}  // namespace boost::context::detail
