#include "src/base/worker_pool.hpp"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace hb {
namespace {

struct Call {
  const std::function<void(unsigned)>* piece;
  unsigned left;  // pieces not yet run
  std::condition_variable done;
  std::exception_ptr failure;  // the first piece that threw, rethrown to the caller
};

struct Job {
  Call* call;
  unsigned index;
};

class Pool {
 public:
  void run(unsigned pieces, const std::function<void(unsigned)>& piece) {
    Call call{&piece, pieces, {}, {}};
    {
      std::lock_guard lock(mutex_);
      while (threads_.size() + 1 < pieces) threads_.emplace_back([this] { work(); });
      for (unsigned i = 1; i < pieces; ++i) jobs_.push_back({&call, i});
    }
    ready_.notify_all();
    std::unique_lock lock(mutex_);
    run_piece({&call, 0}, lock);
    // Queued pieces (this call's or another's) run here rather than wait idle, so a call
    // made from inside a piece never waits on a queue that no thread is free to serve.
    while (call.left > 0)
      if (!jobs_.empty())
        run_next(lock);
      else
        call.done.wait(lock);
    if (call.failure) std::rethrow_exception(call.failure);  // only once no piece can touch `call`
  }

 private:
  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ready_.wait(lock, [&] { return !jobs_.empty(); });
      run_next(lock);
    }
  }

  // Takes the next queued piece and runs it.
  void run_next(std::unique_lock<std::mutex>& lock) {
    const Job job = jobs_.front();
    jobs_.pop_front();
    run_piece(job, lock);
  }

  // Runs one piece with the lock released; what it throws goes to its call's caller.
  static void run_piece(const Job& job, std::unique_lock<std::mutex>& lock) {
    lock.unlock();
    std::exception_ptr failure;
    try {
      (*job.call->piece)(job.index);
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    if (failure && !job.call->failure) job.call->failure = failure;
    if (--job.call->left == 0) job.call->done.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Job> jobs_;
  std::vector<std::thread> threads_;
};

}  // namespace

void run_pieces(unsigned pieces, const std::function<void(unsigned)>& piece) {
  if (pieces <= 1) {
    if (pieces == 1) piece(0);
    return;
  }
  // Never destroyed: its threads wait for work until the process ends, and no exit path
  // has to join a thread that may be in the middle of a piece.
  static Pool& pool = *new Pool;
  pool.run(pieces, piece);
}

}  // namespace hb
