// The kernel's loop: the earliest of the models' next events and the queue's top, models first.
#include "sim/core/simulation.hpp"

#include "base/check.hpp"

namespace ws {

int Simulation::add_handler(EventHandler& handler) {
  handlers_.push_back(&handler);
  return static_cast<int>(handlers_.size()) - 1;
}

void Simulation::add_model(TimedModel& model) { models_.push_back(&model); }

void Simulation::schedule(Time at, int handler, std::uint32_t what, std::uint64_t data) {
  WS_CHECK(at >= now_, "an event is scheduled no earlier than the simulation's time");
  WS_CHECK(handler >= 0 && static_cast<std::size_t>(handler) < handlers_.size(), "an event names a handler");
  queue_.push(at, EventPayload{static_cast<std::uint32_t>(handler), what, data});
}

bool Simulation::jump_to(Time t) {
  WS_CHECK(t >= now_, "the clock moves forward");
  if (!queue_.empty() && queue_.top().time <= t) return false;
  for (TimedModel* m : models_) {
    if (m->next_event_time() <= t) return false;
  }
  now_ = t;
  return true;
}

bool Simulation::run_one() {
  Time model_time = Time::max();
  TimedModel* first = nullptr;
  for (TimedModel* m : models_) {
    const Time t = m->next_event_time();
    if (t < model_time) {
      model_time = t;
      first = m;
    }
  }
  const Time queued = queue_.empty() ? Time::max() : queue_.top().time;
  if (first == nullptr && queue_.empty()) return false;
  ++handled_;
  if (first != nullptr && model_time <= queued) {
    WS_CHECK(model_time >= now_, "a model's events are not in the simulation's past");
    now_ = model_time;
    first->advance(*this, model_time);
    return true;
  }
  const Event e = queue_.pop();
  now_ = e.time;
  handlers_[e.payload.kind]->on_event(*this, e.payload.id, e.payload.data);
  return true;
}

void Simulation::run() {
  while (run_one()) {
  }
}

}  // namespace ws
