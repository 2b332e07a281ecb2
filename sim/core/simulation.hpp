// The one simulation kernel: one clock and one event queue (time, then insertion order) that every
// model and process of a simulation advances on. Two kinds of participants:
//  - a process (EventHandler) schedules events for itself or others: a rank that computes until a
//    time, a collective schedule's next send, a call's end told to whoever waits for it;
//  - a model whose events follow from its own state (TimedModel): the flow network, whose next
//    completion moves whenever a rate changes. The kernel asks it for its next event time instead
//    of holding events that would go stale at every rate change (as SimGrid's models do).
// At equal times the models go first (a flow that completes at t is seen by every process acting
// at t), then the queue's events in insertion order; so one scenario always runs the same
// sequence of events, whichever process scheduled them.
#pragma once

#include <cstdint>
#include <vector>

#include "base/units.hpp"
#include "sim/core/event_queue.hpp"

namespace ws {

class Simulation;

// A participant that receives the events scheduled for it. `what` and `data` are its own: the
// kernel carries them (what kind of event, which call or send) without reading them.
class EventHandler {
 public:
  virtual void on_event(Simulation& sim, std::uint32_t what, std::uint64_t data) = 0;

 protected:
  ~EventHandler() = default;
};

// A model whose next event is a function of its state.
class TimedModel {
 public:
  // Earliest pending event, Time::max() when none.
  virtual Time next_event_time() = 0;
  // Handles every event of the model at t == next_event_time() (it may schedule events).
  virtual void advance(Simulation& sim, Time t) = 0;

 protected:
  ~TimedModel() = default;
};

class Simulation {
 public:
  // Participants are not owned and must outlive the simulation's last run; the returned id names
  // the handler in schedule().
  int add_handler(EventHandler& handler);
  void add_model(TimedModel& model);

  // An event for `handler` at `at` (never before now()).
  void schedule(Time at, int handler, std::uint32_t what = 0, std::uint64_t data = 0);

  Time now() const { return now_; }
  // Moves the clock to `t` when nothing is pending at or before it, which is what scheduling an
  // event at t and handling it next would do; false (clock unchanged) otherwise. Lets a process
  // that computes past the next few microseconds skip the queue when no one else acts meanwhile.
  bool jump_to(Time t);
  // Handles the next event (a model's events at one time, or one queued event); false when there
  // is nothing left to do.
  bool run_one();
  // Until nothing is left.
  void run();
  // Until done() holds (checked before each event) or nothing is left; returns done().
  template <typename Done>
  bool run_until(Done&& done) {
    while (!done()) {
      if (!run_one()) return done();
    }
    return true;
  }

  std::uint64_t events_handled() const { return handled_; }

 private:
  EventQueue queue_;  // payload: kind = handler id, id = what, data = data
  std::vector<EventHandler*> handlers_;
  std::vector<TimedModel*> models_;
  Time now_;
  std::uint64_t handled_ = 0;
};

}  // namespace ws
