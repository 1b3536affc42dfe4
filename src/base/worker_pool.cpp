#include "src/base/worker_pool.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace hb {
namespace {

struct Call {
  const std::function<void(unsigned)>* piece;
  unsigned left;  // pieces not yet run
  std::condition_variable done;
};

struct Job {
  Call* call;
  unsigned index;
};

class Pool {
 public:
  void run(unsigned pieces, const std::function<void(unsigned)>& piece) {
    Call call{&piece, pieces - 1, {}};
    {
      std::lock_guard lock(mutex_);
      while (threads_.size() + 1 < pieces) threads_.emplace_back([this] { work(); });
      for (unsigned i = 1; i < pieces; ++i) jobs_.push_back({&call, i});
    }
    ready_.notify_all();
    piece(0);
    std::unique_lock lock(mutex_);
    // Queued pieces (this call's or another's) run here rather than wait idle, so a call
    // made from inside a piece never waits on a queue that no thread is free to serve.
    while (call.left > 0)
      if (!jobs_.empty())
        run_next(lock);
      else
        call.done.wait(lock);
  }

 private:
  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ready_.wait(lock, [&] { return !jobs_.empty(); });
      run_next(lock);
    }
  }

  // Takes the next queued piece and runs it with the lock released.
  void run_next(std::unique_lock<std::mutex>& lock) {
    const Job job = jobs_.front();
    jobs_.pop_front();
    lock.unlock();
    (*job.call->piece)(job.index);
    lock.lock();
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
